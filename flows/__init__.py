"""The recipes: one package per recipe, each registered as a `memsynth.recipes` entry point in pyproject.toml."""
