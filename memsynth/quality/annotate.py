"""Running the emotion stage over a published version, which then publishes the next version:
the same rows, plus `emotions` (inside a build, `memsynth.generation.emotion_scoring` runs it)."""

from __future__ import annotations

import asyncio
import json
import secrets
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import memsynth
from memsynth.core.config import BuildConfig, redacted
from memsynth.core.errors import MemsynthError
from memsynth.core.records import LLM_CALLS, STAGE_FAILURES
from memsynth.generation.emotions import SCORE, EmotionItem, emotion_row, emotions_table, item_key
from memsynth.generation.endpoints import EndpointChoice
from memsynth.generation.provenance import schema_text, text_hash
from memsynth.generation.recipe import ShardOutput
from memsynth.warehouse.artifacts import Artifact

ENGINE_TABLES = ("versions", "artifacts")


def read_tables(con: Any, names: Sequence[str]) -> dict[str, list[dict[str, Any]]]:
    """Rows of `names` at the connection's version, as dicts (a missing table: no rows)."""
    present = {r[0] for r in con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE database_name = 'lake'").fetchall()}
    out: dict[str, list[dict[str, Any]]] = {}
    for name in names:
        if name not in present:
            out[name] = []
            continue
        cur = con.execute(f'SELECT * FROM lake."{name}"')
        columns = [d[0] for d in cur.description]
        out[name] = [dict(zip(columns, r)) for r in cur.fetchall()]
    return out


def annotate_version(warehouse: Path, dataset: str, version: int | None, *, endpoint: EndpointChoice | None = None,
                     progress: bool = True) -> dict[str, Any]:
    """Score every memory and query of `version` (default: the latest) and publish the next
    version: its tables unchanged, plus `emotions`; a re-run pays only for what is uncached.
    `endpoint`: where the scoring goes (default: the version's own llm block)."""
    from memsynth.build.progress import BuildProgress
    from memsynth.generation.endpoints import choose
    from memsynth.generation.registry import config_of_version, recipe_class
    from memsynth.generation.session import open_session
    from memsynth.llm.accounting import llm_totals
    from memsynth.simulator.endpoint import endpoint_for
    from memsynth.warehouse.catalog import open_version
    from memsynth.warehouse.ducklake import dataset_dir
    from memsynth.warehouse.lock import BuildLock
    from memsynth.warehouse.publish import VersionInfo, publish
    from memsynth.warehouse.staging import StagingArea

    endpoint = endpoint or EndpointChoice()
    started = time.time()
    directory = dataset_dir(warehouse, dataset)
    with BuildLock(directory, dataset):
        con, parent = open_version(warehouse, dataset, version)
        try:
            recipe_cls = recipe_class(parent["recipe"])
            options = {**parent["config"].get("recipe_options", {}), "emotions": True}
            config = choose(config_of_version(parent["config"], recipe_options=options), endpoint, of_version=True)
            recipe = recipe_cls(config.recipe_options)
            if not recipe.annotates_emotions:
                raise MemsynthError(f"recipe {recipe.name} has no emotion annotation")
            source = recipe.emotion_source
            items = source.items(read_tables(con, source.tables), config.language)
            names = [r[0] for r in con.execute(
                "SELECT table_name FROM duckdb_tables() WHERE database_name = 'lake' ORDER BY table_name").fetchall()]
            build_id = f"annotate-{time.strftime('%Y%m%dT%H%M%S')}-{secrets.token_hex(3)}"
            staging = StagingArea(directory, build_id)
            try:
                for name in names:
                    if name in ENGINE_TABLES or name == "emotions":
                        continue
                    target = staging.file_for(name, "parent").replace("'", "''")
                    con.execute(f"COPY (SELECT * FROM lake.\"{name}\") TO '{target}' (FORMAT parquet)")
            except BaseException:
                staging.discard()
                raise
        finally:
            con.close()
        try:
            output = ShardOutput()
            with open_session(config, endpoint_for(endpoint.llm), warehouse, model=endpoint.model) as session:
                with BuildProgress(len(items), session.engine.counters, enabled=progress, unit="items") as shown:
                    rows = session.run(_score(session.runner, items, config, output, shown))
                totals = llm_totals(len(output.rows.get(LLM_CALLS.name, [])),
                                    sum(1 for c in output.rows.get(LLM_CALLS.name, []) if c.cache_hit),
                                    session.engine.counters, config.llm.prices,
                                    batch=config.llm.mode == "batch",
                                    free_models=(session.model,) if session.simulated else ())
                # What was sent and to where, as a build's summary says it.
                totals.update(response_mode=config.llm.response_mode, probe_requests=session.engine.counters.probe_requests,
                              endpoint=config.llm.learnt.endpoint if config.llm.learnt else None,
                              concurrency=session.engine.limits.concurrency.report())
                used_model = session.model
            table = emotions_table(source.refs)
            staging.write(table, "annotate", rows)
            staging.write(LLM_CALLS, "annotate", output.rows.get(LLM_CALLS.name, []))
            staging.write(STAGE_FAILURES, "annotate", output.rows.get(STAGE_FAILURES.name, []))
            template = SCORE.template_for(config.language)
            from memsynth.generation.prompts import PromptLibrary

            prompts = PromptLibrary()
            schema = schema_text(SCORE.output)
            artifacts = [Artifact("template", template, prompts.hash(template),
                                  json.dumps(prompts.files(template), ensure_ascii=False, sort_keys=True)),
                         Artifact("schema", SCORE.schema_name, text_hash(schema), schema)]
            tables = (*recipe.tables, table, LLM_CALLS, STAGE_FAILURES)
            files = {n: staging.files(n) for n in dict.fromkeys([*(n for n in names if n not in ENGINE_TABLES),
                                                                  table.name, LLM_CALLS.name, STAGE_FAILURES.name])}
            published = publish(warehouse, dataset, files, VersionInfo(
                build_id=build_id, recipe=recipe.name, config=redacted(config.model_dump(mode="json")),
                config_hash=config.hash(), memsynth_version=memsynth.__version__,
                prompt_hashes={**parent["prompt_hashes"], template: artifacts[0].hash},
                schema_hashes={**parent["schema_hashes"], SCORE.schema_name: artifacts[1].hash},
                options_hash=text_hash(json.dumps(config.recipe_options, ensure_ascii=False, sort_keys=True)),
                artifacts=artifacts, model=used_model, started_at=started, llm=totals,
                derivation={"parent_version": parent["version"], "annotated": "emotions"},
                regenerations=parent.get("regenerations") or {}), tables=tables)
        finally:
            staging.discard()
    return {"dataset": dataset, "version": published["version"], "parent_version": parent["version"],
            "items": len(items), "annotated": len(rows), "failed": len(items) - len(rows),
            "by_kind": {k: sum(1 for r in rows if r.item_kind == k) for k in ("memory", "query")},
            "llm": totals, "seconds": round(time.time() - started, 2)}


async def _score(runner: Any, items: Sequence[EmotionItem], config: BuildConfig, output: ShardOutput,
                 shown: Any) -> list[Any]:
    common = {"language": config.language, "reference_date": config.reference_date.isoformat()}

    async def one(item: EmotionItem) -> Any:
        result = await runner.run(SCORE, {**common, **item.variables()}, item_key=item_key(item),
                                  persona_id=item.persona_id)
        output.record(result)
        shown.persona_done()
        return emotion_row(item, result)

    return [r for r in await asyncio.gather(*(one(i) for i in items)) if r is not None]
