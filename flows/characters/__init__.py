"""characters — role-playing memory units (Emotional RAG's data: CharacterEval, InCharacter).

source.py: the files' shapes, and scenes as question–answer fragments and queries ·
importer.py: a file as a version · recipe.py: the recipe (imported, never built) ·
emotions.py: what emotion annotation scores · evaluation.py: the retrieval task.
Rows: schemas/characters.py.
"""

from flows.characters.recipe import CharactersOptions, CharactersRecipe

RECIPE = CharactersRecipe

__all__ = ["RECIPE", "CharactersOptions", "CharactersRecipe"]
