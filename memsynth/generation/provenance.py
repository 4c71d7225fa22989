"""What a version is made of: its templates (includes resolved), the JSON schemas its
stages answered and its recipe's resolved options, each kept under its hash.

A version records these hashes; the warehouse keeps each text once (`artifacts`), so a
version can be audited or reproduced from the warehouse alone (`memsynth versions D --show N`).
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from typing import TYPE_CHECKING

from pydantic import BaseModel

from memsynth.generation.prompts import PromptLibrary, files_hash
from memsynth.generation.stage import localized, schema_in_prompt
from memsynth.warehouse.artifacts import Artifact, Kind

if TYPE_CHECKING:
    from memsynth.core.config import BuildConfig
    from memsynth.generation.recipe import Recipe


def text_hash(text: str) -> str:
    """sha256 (first 16 hex) of a text: the hash of a schema or of options."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


@cache  # an output model does not change in a process; every build asks for some thirty of them
def schema_text(model: type[BaseModel]) -> str:
    """A stage's JSON schema as the canonical text that is hashed and stored."""
    return json.dumps(model.model_json_schema(), sort_keys=True)


def artifact_hash(kind: Kind, content: str) -> str:
    """The hash of a stored artifact, recomputed from its content alone."""
    return files_hash(json.loads(content)) if kind == "template" else text_hash(content)


def version_artifacts(recipe: Recipe, prompts: PromptLibrary, config: BuildConfig) -> list[Artifact]:
    """Every template, schema and the options a build of `config` uses."""
    language = config.language
    stages = recipe.all_stages()
    if recipe.annotates_emotions:
        from memsynth.generation.emotions import SCORE

        stages = (*stages, SCORE)
    from memsynth.generation.registry import audits

    stages = (*stages, *audits(recipe.name).values())
    names = [s.template_for(language) for s in stages] + [localized("_repair.j2", language)]
    modes = {config.llm.response_mode, *(a.response_mode or config.llm.response_mode
                                         for a in config.llm.models.values())}
    if any(schema_in_prompt(mode) for mode in modes):
        names.append(localized("_schema_hint.j2", language))
    out = [Artifact("template", name, prompts.hash(name),
                    json.dumps(prompts.files(name), ensure_ascii=False, sort_keys=True))
           for name in dict.fromkeys(names)]
    for stage in stages:
        text = schema_text(stage.output)
        out.append(Artifact("schema", stage.schema_name, text_hash(text), text))
    options = json.dumps(config.recipe_options, ensure_ascii=False, sort_keys=True)
    out.append(Artifact("options", recipe.name, text_hash(options), options))
    return out


def hashes(artifacts: list[Artifact], kind: Kind) -> dict[str, str]:
    """name → hash of the artifacts of one kind."""
    return {a.name: a.hash for a in artifacts if a.kind == kind}

