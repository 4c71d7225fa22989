"""Generation: the recipe contract, declarative stages and their one runner, prompt
templates, personas, provenance, the emotion stage, and the registry that finds installed
recipes through the `memsynth.recipes` entry points.

May import: `llm`, `warehouse`, `core`. Never a recipe's module (`flows`, `schemas`) by name.
"""
