"""The recipes: one package per recipe, found by name through `flows/registry.py`."""
