"""`memsynth eval TASK`: open a version, run the recipe's task with the engine, record
the scores (memsynth.warehouse.evaluations) and write a markdown report."""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from memsynth.core.config import BuildConfig
from memsynth.core.errors import MemsynthError
from memsynth.generation.audit import Auditor, AuditRow, item_name, run_audit
from memsynth.generation.endpoints import JUDGE_ALIAS, EndpointChoice, choose, with_judge
from memsynth.generation.session import LLMSession, open_session
from memsynth.generation.stage import ItemResult, Route, Stage, StageRunner
from memsynth.simulator.endpoint import endpoint_for
from memsynth.warehouse.evaluations import EvalRun, Score, evaluations_dir, record


@dataclass
class EvalOptions:
    """What the command line chose (each task reads the fields it needs)."""

    # The system under test (default: the version's llm block) and the judge (default: the
    # same endpoint and model; given, an endpoint of its own: model alias `judge`).
    endpoint: EndpointChoice = field(default_factory=EndpointChoice)
    judge: EndpointChoice = field(default_factory=lambda: EndpointChoice())
    embedding_model: str = "text-embedding-3-large"
    ks: tuple[int, ...] = (1, 3, 5, 10)
    first_k: int = 20  # Emotional RAG's first pass of a sequential strategy
    metric: str = "euclidean"  # semantic distance: euclidean | cosine
    systems: tuple[str, ...] = ()  # retrievers or generation settings; () = the task's default
    limit: int | None = None  # score only the first N items (a quick look)
    audit_rate: float | None = None  # share of the judge's answers audited (None: the version's quality.audit_rate)
    progress: bool = True


@dataclass
class EvalContext:
    """A task's handle: the version's rows, the engine, and where scores go."""

    dataset: str
    version: dict[str, Any]
    config: BuildConfig
    session: LLMSession
    options: EvalOptions
    con: Any
    scores: list[Score] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)  # recorded with the run
    auditor: Auditor | None = None  # audits a seeded sample of the judges' answers
    audits: list[AuditRow] = field(default_factory=list)
    _runners: dict[str, StageRunner] = field(default_factory=dict)

    @property
    def language(self) -> str:
        return self.config.language

    @property
    def model(self) -> str:
        return self.session.model

    @property
    def judge_route(self) -> Route | None:
        """The judge's own engine and model, when it was given one (None: the model's)."""
        return self.session.runner.routes.get(JUDGE_ALIAS)

    @property
    def judge_model(self) -> str:
        route = self.judge_route
        return route.model if route is not None else self.model

    def read(self, *names: str) -> dict[str, list[dict[str, Any]]]:
        """Rows of the version's tables, as dicts."""
        from memsynth.quality.annotate import read_tables

        return read_tables(self.con, names)

    def has_table(self, name: str) -> bool:
        return bool(self.con.execute("SELECT count(*) FROM duckdb_tables() WHERE database_name = 'lake' "
                                     "AND table_name = ?", [name]).fetchone()[0])

    def limited(self, items: Sequence[Any]) -> list[Any]:
        return list(items[: self.options.limit] if self.options.limit else items)

    async def run(self, stage: Stage, variables: Mapping[str, Any], item_key: str, *, persona_id: str | None = None,
                  judge: bool = False, sample: int = 0) -> ItemResult:
        """One item of an evaluation stage, by the model under test (or the judge)."""
        runner = self._runner(judge)
        common = {"language": self.language, "reference_date": self.config.reference_date.isoformat()}
        variables = {**common, **variables}
        result = await runner.run(stage, variables, item_key=f"eval/{item_key}", persona_id=persona_id, sample=sample)
        item = item_name(f"eval/{item_key}", sample)
        audit = self.auditor.wants(stage, item) if self.auditor and result.usable else None
        if audit is not None:  # always by the judge: the model under test never audits itself
            await run_audit(self._runner(True), _AuditSink(self.audits), audit, stage, variables, result.output, item,
                            persona_id, gold=False)
        return result

    def _runner(self, judge: bool) -> StageRunner:
        route = self.judge_route if judge else None
        key = "judge" if route is not None else "model"
        runner = self._runners.get(key)
        if runner is None:
            base = self.session.runner
            # The version's own model aliases (llm.stages) route its build's stages, not these.
            runner = self._runners[key] = (StageRunner(base.engine, base.prompts, base.settings) if route is None
                                           else StageRunner(route.engine, base.prompts, replace(
                                               base.settings, model=route.model, response_mode=route.response_mode)))
        return runner

    def score(self, system: str, metric: str, value: float | None, n: int, scope: str = "all") -> None:
        self.scores.append(Score(system, metric, scope, value, n))


@dataclass
class _AuditSink:
    """Where `run_audit` puts an evaluation's audit verdicts (a build's shard output takes them there)."""

    rows: list[AuditRow]

    def record(self, result: ItemResult) -> None:
        pass  # the call is in the engine's counters already

    def emit(self, table: Any, rows: Sequence[AuditRow]) -> None:
        self.rows.extend(rows)


def audit_scores(rows: Sequence[AuditRow]) -> list[Score]:
    """Per audited stage and rule, the share of the audited answers the audit judge flagged:
    system `audit:<stage>`, metric the rule id, scope `audit`."""
    seen: dict[tuple[str, str], list[bool]] = {}
    for row in rows:
        seen.setdefault((row.stage, row.rule), []).append(row.verdict == "violation")
    return [Score(f"audit:{stage}", rule, "audit", sum(flags) / len(flags), len(flags))
            for (stage, rule), flags in seen.items()]


Task = Callable[[EvalContext], int]  # runs, fills ctx.scores, returns the items scored


def evaluate(task_name: str, warehouse: Path, dataset: str, version: int | None,
             options: EvalOptions) -> tuple[EvalRun, str]:
    """Run `task_name` on the version, record it, and return it with its markdown report."""
    from memsynth.generation.registry import config_of_version, evaluation_tasks
    from memsynth.warehouse.catalog import open_version

    started = time.time()
    con, row = open_version(warehouse, dataset, version)
    try:
        tasks = evaluation_tasks(row["recipe"])
        if task_name not in tasks:
            known = ", ".join(sorted(tasks)) or "none"
            raise MemsynthError(f"task {task_name!r} does not apply to {dataset} (a {row['recipe']} dataset; "
                                f"its tasks: {known})")
        config = with_judge(choose(config_of_version(row["config"]), options.endpoint, of_version=True),
                            options.judge)
        with open_session(config, endpoint_for(options.endpoint.llm), warehouse,
                          model=options.endpoint.model) as session:
            from memsynth.generation.registry import audit_plan, audits

            rate = config.quality.audit_rate if options.audit_rate is None else options.audit_rate
            auditor = Auditor.for_recipe(audits(row["recipe"]), audit_plan(row["recipe"]), rate, config.seed)
            ctx = EvalContext(dataset, row, config, session, options, con, auditor=auditor)
            items = tasks[task_name](ctx)
            ctx.scores += audit_scores(ctx.audits)
            ctx.settings["audit_rate"] = rate if auditor else None
            learnt = config.llm.learnt
            # Where the scores came from: a benchmark's point is comparing models.
            ctx.settings.update(endpoint=learnt.endpoint if learnt else None,
                                judge_endpoint=(learnt.models.get(JUDGE_ALIAS, ("",))[0] if learnt else None)
                                or None, response_mode=config.llm.response_mode)
            from memsynth.llm.accounting import llm_totals

            counters = session.engine.counters
            totals = llm_totals(counters.done, counters.cached, counters, config.llm.prices,
                                batch=config.llm.mode == "batch",
                                free_models=(session.model,) if session.simulated else ())
    finally:
        con.close()
    run = EvalRun(run_id=f"{task_name}-{time.strftime('%Y%m%dT%H%M%S')}-{secrets.token_hex(3)}", task=task_name,
                  dataset=dataset, version=row["version"], recipe=row["recipe"],
                  settings={**ctx.settings, "ks": list(options.ks), "limit": options.limit},
                  model=ctx.model, judge_model=ctx.judge_model, items=items, started_at=started,
                  llm=totals, scores=ctx.scores)
    record(warehouse, run)
    report = report_markdown(run)
    folder = evaluations_dir(warehouse, dataset) / "reports"
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".{run.run_id}.md.tmp"
    tmp.write_text(report, encoding="utf-8")
    tmp.replace(folder / f"{run.run_id}.md")
    run.report_path = str(folder / f"{run.run_id}.md")
    return run, report


def _figure(value: float | None) -> str:
    return "–" if value is None else f"{value:.4g}" if abs(value) < 1 else f"{value:.2f}"


def score_table(scores: Sequence[Score], scope: str = "all") -> tuple[list[str], list[list[str]]]:
    """One scope's scores as rows of systems × columns of metrics (in first-seen order)."""
    chosen = [s for s in scores if s.scope == scope]
    metrics = list(dict.fromkeys(s.metric for s in chosen))
    systems = list(dict.fromkeys(s.system for s in chosen))
    cell = {(s.system, s.metric): s.value for s in chosen}
    return ["system", *metrics], [[system, *(_figure(cell.get((system, m))) for m in metrics)] for system in systems]


def report_markdown(run: EvalRun) -> str:
    """The run as markdown: what was scored, then one table per scope."""
    lines = [f"# {run.task} on {run.dataset} version {run.version}", "",
             f"- run: `{run.run_id}`", f"- recipe: {run.recipe}; items scored: {run.items}",
             f"- model: {run.model}; judge: {run.judge_model}",
             f"- LLM: {run.llm.get('requests', 0):,} requests, {run.llm.get('cache_hits', 0):,} from cache",
             f"- settings: `{run.settings}`", ""]
    for scope in dict.fromkeys(s.scope for s in run.scores):
        header, rows = score_table(run.scores, scope)
        lines += [f"## {scope}", "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(r) + " |" for r in rows]
        lines.append("")
    return "\n".join(lines)
