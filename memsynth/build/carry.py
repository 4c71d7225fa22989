"""What a build carries from the dataset's last version that its config alone would not write,
and what it cannot carry, said in one line each (nothing is dropped silently).

`memsynth annotate emotions` publishes a version with an `emotions` table its config never
asked for (its derivation says `annotated`). A later build of the dataset scores emotions too, with the same stage and model, so
the scores of unchanged memories and queries come from the LLM cache and only changed rows
are scored afresh. When the build's model is not the one that scored them, the scores are not
carried (another model's would silently replace them): the build says so, and how to score
its version. Scores a version's own config asked for are not carried into a build whose
config no longer asks (said too). Any other table of the last version this build does not write is named too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memsynth.core.config import BuildConfig
from memsynth.generation.recipe import Recipe

EMOTIONS = "emotions"
# Written by every build: never "not carried".
ENGINE_TABLES = {"versions", "artifacts", "llm_calls", "stage_failures", "personas", "audits"}


@dataclass
class Carried:
    """The tables carried (name → how) and not carried (name → why)."""

    carried: dict[str, str] = field(default_factory=dict)
    not_carried: dict[str, str] = field(default_factory=dict)

    def record(self) -> dict[str, Any]:
        """What the version's `derivation` says of it (nothing when there was nothing to say)."""
        out: dict[str, Any] = {}
        if self.carried:
            out["carried"] = dict(self.carried)
        if self.not_carried:
            out["not_carried"] = dict(self.not_carried)
        return out

    def line(self) -> str | None:
        """The build summary's one line, or None."""
        parts = [f"carried {name}: {how}" for name, how in self.carried.items()]
        parts += [f"not carried {name}: {why}" for name, why in self.not_carried.items()]
        return "; ".join(parts) or None


def carry(latest: dict[str, Any] | None, recipe: Recipe, config: BuildConfig, model: str,
          dataset: str) -> Carried:
    """Decide what this build carries from `latest` (the last version's row); turns on the
    config's emotion scoring when it carries `emotions` (the caller builds the recipe again)."""
    out = Carried()
    if latest is None:
        return out
    had = set(latest.get("row_counts") or {}) - ENGINE_TABLES
    writes = {t.name for t in recipe.output_tables()}
    version = latest["version"]
    derivation = latest.get("derivation") or {}
    annotated = derivation.get("annotated") == EMOTIONS or EMOTIONS in (derivation.get("carried") or {})
    if EMOTIONS in had and EMOTIONS not in writes and recipe.emotion_source is not None:
        scored_by = latest.get("model") or ""
        if not annotated:  # its own config asked for them, and this one no longer does: the user's choice
            out.not_carried[EMOTIONS] = (f"version {version}'s config set recipe_options.emotions: true, "
                                         "this build's config does not")
        elif scored_by == model:
            config.recipe_options = {**config.recipe_options, EMOTIONS: True}
            out.carried[EMOTIONS] = (f"version {version} has emotion scores, so this build scores its memories "
                                     f"and queries with {model} too (unchanged ones from the cache)")
            writes.add(EMOTIONS)
        else:
            out.not_carried[EMOTIONS] = (
                f"version {version}'s scores are by {scored_by or 'another model'}, this build's model is {model}; "
                f"score this version with `memsynth annotate emotions --dataset {dataset} --model {scored_by}`, "
                "or set recipe_options.emotions: true to score with this build's model")
    for name in sorted(had - writes - set(out.not_carried)):
        out.not_carried[name] = f"version {version} has it, this build's config does not write it"
    return out
