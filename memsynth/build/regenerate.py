"""Regenerating personas: a new version equal to the last one except the named personas'
items from one stage of the chain on, which are asked again under a salted cache key.

Regenerations accumulate: each version records, per persona, which stages carry which
salt, and every later build of the dataset applies them, so a plain rebuild keeps what
was regenerated (and any version can be rebuilt exactly from its record).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memsynth.core.errors import ConfigError
from memsynth.generation.recipe import Recipe
from memsynth.warehouse.catalog import list_versions, run_query
from memsynth.warehouse.ducklake import catalog_exists


@dataclass
class RegenerationRequest:
    """What the command line asked for."""

    persona_ids: list[str] = field(default_factory=list)  # --regenerate and --regenerate-file
    where: str | None = None  # --where: a query whose first column is persona ids
    from_stage: str | None = None  # default: the first stage of the chain
    add_personas: int = 0


@dataclass
class Derivation:
    """How a build relates to the dataset's last version."""

    regenerations: dict[str, dict[str, str]]  # persona id → {stage → salt}, cumulative
    record: dict[str, Any]  # what `versions` shows: parent, regenerated ids, stage, added personas
    personas: int | None = None  # the persona count to build: the parent's (+ any added)
    latest_personas: int | None = None  # how many personas the last version was built with
    latest: dict[str, Any] | None = None  # the last version's `versions` row (None: no version yet)


def derive(warehouse: Path, dataset: str, recipe: Recipe, request: RegenerationRequest) -> Derivation:
    """The regenerations this build applies: the last version's, plus this request's.

    A new regeneration's salt names the version it starts from: the same command run again
    (after a crash, say) asks the same requests and pays for none twice, while regenerating
    the persona again from a later version draws another sample.
    """
    latest = _latest(warehouse, dataset)
    if latest is not None and latest["recipe"] != recipe.name:  # said before the first call, not at publish
        raise ConfigError(f"dataset {dataset!r} holds {latest['recipe']} versions; a build of recipe {recipe.name} cannot "
                          "add to it (choose another dataset name)")
    regenerations = {pid: dict(stages) for pid, stages in (latest or {}).get("regenerations", {}).items()}
    wanted = list(dict.fromkeys(request.persona_ids))
    if (wanted or request.where or request.add_personas) and latest is None:
        raise ConfigError(f"dataset {dataset!r} has no version yet: build it before regenerating or growing it")
    if request.where:
        wanted += [str(r[0]) for r in run_query(warehouse, dataset, request.where)[1] if r[0] is not None]
        wanted = list(dict.fromkeys(wanted))
    record: dict[str, Any] = {"parent_version": latest["version"]} if latest else {}
    personas = None
    if request.add_personas:
        personas = latest["config"]["personas"]["count"] + request.add_personas
        record["added_personas"] = request.add_personas
    if wanted:
        known = {r[0] for r in run_query(warehouse, dataset, "SELECT persona_id FROM personas")[1]}
        unknown = [p for p in wanted if p not in known]
        if unknown:
            raise ConfigError(f"not personas of {dataset} version {latest['version']}: {', '.join(unknown[:5])}"
                              + (f" (and {len(unknown) - 5} more)" if len(unknown) > 5 else ""))
        stages = [s.qualified_name for s in recipe.all_stages()]
        start = f"{recipe.name}.{request.from_stage}" if request.from_stage else stages[0]
        if start not in stages:
            raise ConfigError(f"--from-stage {request.from_stage!r}: not a stage of {recipe.name} "
                              f"({', '.join(s.split('.', 1)[1] for s in stages)})")
        salt = f"from-v{latest['version']}"
        for pid in wanted:
            regenerations.setdefault(pid, {}).update(dict.fromkeys(stages[stages.index(start):], salt))
        record.update(regenerated=wanted, from_stage=start.split(".", 1)[1])
        # The same personas as the version regenerated, whatever the config now says.
        personas = personas or latest["config"]["personas"]["count"]
    elif request.where:
        raise ConfigError("--where matched no persona: nothing to regenerate")
    return Derivation(regenerations, record, personas,
                      latest["config"]["personas"]["count"] if latest else None, latest)


def _latest(warehouse: Path, dataset: str) -> dict[str, Any] | None:
    if not catalog_exists(warehouse, dataset):
        return None
    versions = list_versions(warehouse, dataset)
    return versions[-1] if versions else None
