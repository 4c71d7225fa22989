"""A StratMem-Bench file as a dataset version: `memsynth import stratmem FILE --dataset D`."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from flows.stratmem.chain import STATISTICS
from flows.stratmem.options import TEST_SPLIT_NICE
from flows.stratmem.seed_format import StratMemFile, decode_history
from memsynth.core.errors import ConfigError
from memsynth.core.records import PERSONAS, PersonaRow
from memsynth.warehouse.imports import publish_import
from schemas.stratmem import INSTANCES, MEMORIES, ROLES, InstanceRow, MemoryRow


def read_instances(path: Path) -> list[dict[str, Any]]:
    """The file's instances, checked against the release's shape (one line on the first fault)."""
    try:
        raw = path.read_bytes()
        StratMemFile.model_validate_json(raw)
    except OSError as exc:
        raise ConfigError(f"{path}: {exc.strerror or exc}") from None
    except ValidationError as exc:
        error = exc.errors()[0]
        where = "".join(f"{p}: " for p in [".".join(str(p) for p in error["loc"])] if p)
        raise ConfigError(f"{path} is not a StratMem-Bench file: {where}{error['msg']}") from None
    return json.loads(raw)


def rows(instances: list[dict[str, Any]]) -> tuple[list[PersonaRow], list[InstanceRow], list[MemoryRow]]:
    """Table rows of a StratMem-Bench file: a persona per pair of speakers, file order kept."""
    personas: dict[str, PersonaRow] = {}
    out_instances, out_memories = [], []
    for ordinal, item in enumerate(instances):
        pair = sorted((item["roles"]["human"], item["roles"]["virtual_person"]))
        persona_id = "+".join(pair)
        personas.setdefault(persona_id, PersonaRow(
            persona_id=persona_id, description=f"{pair[0]} and {pair[1]}", source="stratmem-bench",
            ordinal=len(personas)))
        out_instances.append(InstanceRow(
            instance_id=item["id"], persona_id=persona_id, source_id=item["id"].split("_")[0], ordinal=ordinal,
            window_size=None, first_session=None, history_session=None, given_type=item["given_type"],
            inferred_type=item["inferred_type"], query=item["query"], query_time=item["query_time"],
            query_at=None, history=decode_history(item["history"]), human=item["roles"]["human"],
            virtual_person=item["roles"]["virtual_person"], persona=item["virtual_person_persona"],
            agreement=None))
        facts = [(role, f["fact"]) for role in ROLES for f in item["memory"][role]]
        nice = [i for i, (role, _) in enumerate(facts) if role == "nice"]
        rng = random.Random(f"stratmem-test-split:{item['id']}")
        kept = set(rng.sample(nice, TEST_SPLIT_NICE)) if len(nice) > TEST_SPLIT_NICE else set(nice)
        out_memories += [MemoryRow(
            instance_id=item["id"], persona_id=persona_id, memory_index=i, fact=fact, role=role, votes=[],
            rationale=None, session_index=None, session_at=None, in_test_split=role != "nice" or i in kept)
            for i, (role, fact) in enumerate(facts)]
    return list(personas.values()), out_instances, out_memories


def import_file(path: Path, warehouse: Path, dataset: str) -> dict[str, Any]:
    """Publish `path` as the next version of `dataset`; its summary and statistics."""
    personas, instance_rows, memory_rows = rows(read_instances(path))
    return publish_import(path, warehouse, dataset, "stratmem",
                          ((PERSONAS, personas), (INSTANCES, instance_rows), (MEMORIES, memory_rows)),
                          statistics=STATISTICS)
