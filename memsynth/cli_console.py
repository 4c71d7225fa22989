"""The consoles every command prints to."""

from __future__ import annotations

from rich.console import Console

# No markup: names, SQL and messages are printed as they are ("[transport]", "^{0,63}$", a
# dataset called "[red]x"); styled words are `Text` pieces.
out = Console(highlight=False, soft_wrap=True, markup=False)
err = Console(stderr=True, highlight=False, soft_wrap=True, markup=False)
