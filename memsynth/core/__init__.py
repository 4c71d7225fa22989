"""The core: build configs, errors, bounds, table declarations, the engine's own tables,
referential integrity and DuckDB helpers. Plain data and pure functions; no I/O beyond
reading files.

May import: nothing else in memsynth (it is the bottom layer).
"""
