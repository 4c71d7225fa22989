"""Releases: a version exported in its benchmark's own files, with splits, a dataset card,
checksums, `verify` and `diff`.

May import: `quality` (the card's quality figures), `generation`, `warehouse`, `core`.
"""
