"""Scoring systems on a dataset version: the seeds' metrics, retrievers, and result tables.

The metric modules (`ranking`, `emotional`, `strategic`, `text`) are small pure functions,
each tested on hand-computed examples; `retrievers` ranks memories; `memsynth.warehouse.evaluations` keeps every
run's scores beside the dataset; the tasks themselves live with their recipes
(`flows/<recipe>/evaluation.py`).
"""
