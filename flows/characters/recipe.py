"""The characters recipe: imported role-playing data (no stage chain of its own)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict

from flows.characters.emotions import SOURCE
from memsynth.core.errors import ConfigError
from memsynth.core.records import PERSONAS
from memsynth.generation.emotions import emotions_option
from memsynth.generation.recipe import PersonaContext, Recipe
from memsynth.generation.rules import EMOTION_RULES, SHARED_RULES
from schemas.characters import FRAGMENTS, QUERIES

STATISTICS = {
    "roles": "SELECT count(*) FROM personas",
    "fragments": "SELECT count(*) FROM character_fragments",
    "fragments_per_role": "SELECT round(count(*) / count(DISTINCT role), 1) FROM character_fragments",
    "queries": "SELECT count(*) FROM character_queries",
}


class CharactersOptions(BaseModel):
    """`recipe_options` an imported characters version records (`memsynth annotate` sets emotions)."""

    model_config = ConfigDict(extra="forbid")
    emotions: bool = emotions_option()


class CharactersRecipe(Recipe):
    """Role-playing memory units (CharacterEval, InCharacter): each role's question–answer
    pairs as its memory, each scene's last line as a query; imported, then annotated with
    emotions and scored by Emotional RAG's retrievers."""

    name = "characters"
    options_model = CharactersOptions
    stages = ()
    tables = (PERSONAS, FRAGMENTS, QUERIES)
    statistics = STATISTICS
    emotion_source = SOURCE
    rules = (*SHARED_RULES, *EMOTION_RULES)  # its one prompted stage is emotion annotation's
    buildable: ClassVar[bool] = False

    async def generate(self, ctx: PersonaContext) -> None:
        raise ConfigError("characters datasets are imported, not built: memsynth import characters FILE --dataset D")
