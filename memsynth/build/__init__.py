"""Building a version: the Prefect flow, shards and their Dask runner, schedules, signals,
the live progress display, regeneration and `--estimate`.

May import: `simulator`, `generation`, `llm`, `warehouse`, `core`.
"""
