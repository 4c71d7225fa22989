"""The texts a version used (templates, schemas, options), as the `artifacts` table keeps them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Kind = Literal["template", "schema", "options"]


@dataclass(frozen=True)
class Artifact:
    """One text a version used, and the hash the version records for it."""

    kind: Kind
    name: str
    hash: str
    content: str  # a template: JSON {file name: text} of it and its includes
