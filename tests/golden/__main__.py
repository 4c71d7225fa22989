"""Rewrite the golden prompts from their fixtures: `python -m tests.golden`."""

import argparse

from tests.golden import write_goldens

argparse.ArgumentParser(prog="python -m tests.golden", description=__doc__).parse_args()
print(f"wrote {write_goldens()} golden prompts under tests/golden/")
