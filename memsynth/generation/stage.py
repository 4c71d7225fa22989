"""The one runner that executes declared stages (memsynth.generation.stagedef).

A stage is a template, an output model, a few named checks and a failure policy.
The runner renders → calls → parses → validates → checks (memsynth.generation.answers),
re-asks with the problems appended when any step fails (bounded), and then applies the
stage's policy. It never raises for a bad answer: every item comes back as an `ItemResult`
saying what happened.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel

# What a stage is, and how one answer is judged, have modules of their own; recipes and the
# quality tools still import those names from here.
from memsynth.generation.answers import _validation_problems as _validation_problems
from memsynth.generation.answers import evaluate
from memsynth.generation.prompts import PromptLibrary
from memsynth.generation.stagedef import Check as Check
from memsynth.generation.stagedef import CheckFn as CheckFn
from memsynth.generation.stagedef import Judge, Stage, localized
from memsynth.generation.stagedef import Policy as Policy
from memsynth.generation.stagedef import check as check
from memsynth.generation.stagedef import say as say
from memsynth.llm.budget import schema_budget
from memsynth.llm.request import LLMRequest, TransportFailure

if TYPE_CHECKING:  # the engine (openai and its HTTP stack) is not needed to know a recipe's stages
    from memsynth.llm.engine import LLMEngine


@dataclass(frozen=True)
class GenerationSettings:
    """Build-wide sampling and output-format settings the runner applies to each stage."""

    model: str
    # Resolved: never "auto" here (the engine's probe chose before any prompt was rendered).
    response_mode: Literal["json_schema", "json_object_schema", "json_object", "text"] = "json_schema"
    temperature: float = 0.8
    max_tokens: int = 4096  # the limit: hashed in each request, and what budgets grow back to
    budgets: bool = True  # send each stage its budget first (False: the limit, as before budgets)
    repairs: int = 2
    seed: int | None = None
    # Send each request's stage and variables in the body (field `memsynth`), so memsynth's
    # simulator can answer without reading the prompt. Only for the simulator.
    stage_variables: bool = False
    # Regenerated items: persona id → {stage qualified name → salt} (see LLMRequest.salt).
    regenerate: Mapping[str, Mapping[str, str]] = field(default_factory=dict)


@dataclass
class ItemResult:
    """The fate of one stage item: its validated output (if any) and what it took."""

    stage: str
    item_key: str
    persona_id: str | None
    output: Any | None
    status: Literal["ok", "repaired", "flagged", "dropped"]
    problems: list[str] = field(default_factory=list)
    calls: list[dict[str, Any]] = field(default_factory=list)
    rejected_answer: str | None = None  # the last answer refused (flagged or dropped items)
    reviews: list[ItemResult] = field(default_factory=list)  # the judge's items, one per judged answer
    budget: int | None = None  # the max_tokens its calls were first sent with (None: the limit)

    @property
    def usable(self) -> bool:
        return self.output is not None and self.status != "dropped"


@dataclass(frozen=True)
class Route:
    """Where a stage's requests go: its engine, the model they name, how they ask for JSON."""

    engine: LLMEngine
    model: str
    response_mode: str


class StageRunner:
    """Runs stages for one build against its engines (one, or one per model alias) and one
    prompt library."""

    def __init__(self, engine: LLMEngine, prompts: PromptLibrary, settings: GenerationSettings,
                 routes: Mapping[str, Route] | None = None,
                 alias_of: Callable[[Stage], str | None] | None = None):
        self.engine = engine
        self.prompts = prompts
        self.settings = settings
        self.routes = dict(routes or {})  # alias -> route (llm.models)
        self._alias_of = alias_of  # which alias a stage uses (llm.stages); None: the default
        self._default = Route(engine, settings.model, settings.response_mode)
        self._schemas: dict[type[BaseModel], dict[str, Any]] = {}
        self._budgets: dict[Stage, int | None] = {}
        # Admission: only so many items are being prepared or awaited at once. A fan-out
        # of thousands otherwise renders every prompt before the first request leaves,
        # which idles the endpoint at the start and holds every prompt in memory.
        # In batch mode the more items wait at once, the fewer batches a build takes.
        batch = engine.settings.mode == "batch"
        self._admission = asyncio.Semaphore(engine.settings.batch.max_requests if batch
                                            else 2 * engine.settings.concurrency + 16)

    def _schema(self, model: type[BaseModel]) -> dict[str, Any]:
        if model not in self._schemas:
            self._schemas[model] = model.model_json_schema()
        return self._schemas[model]

    async def aclose(self) -> None:
        """Close every engine this runner sends to (the default one last)."""
        for route in self.routes.values():
            await route.engine.aclose()
        await self.engine.aclose()

    def budget(self, stage: Stage) -> int | None:
        """The max_tokens `stage` is first sent with: declared by the recipe, else from its
        schema's bounds, never above the build's limit; None when budgets are off."""
        if not self.settings.budgets:
            return None
        if stage not in self._budgets:
            own = stage.max_tokens or schema_budget(self._schema(stage.output))
            self._budgets[stage] = min(own, self.settings.max_tokens) if own else None
        return self._budgets[stage]

    def route(self, stage: Stage) -> Route:
        """The engine and model `stage` is answered by."""
        alias = self._alias_of(stage) if self._alias_of is not None and self.routes else None
        return self.routes[alias] if alias else self._default

    def _request(self, stage: Stage, messages: list[dict[str, str]], sample: int,
                 hints: dict[str, Any] | None = None, salt: str = "") -> LLMRequest:
        s = self.settings
        route = self.route(stage)
        params: dict[str, Any] = {
            "temperature": stage.temperature if stage.temperature is not None else s.temperature,
            "max_tokens": s.max_tokens,  # the limit: the key names it, as before budgets
        }
        if s.seed is not None:
            # Each sample its own seed: under one seed OpenAI and vLLM answer the same body the
            # same way, and three labellers (or a scene drawn again) would say one thing thrice.
            params["seed"] = s.seed + sample
        return LLMRequest(
            model=route.model,
            messages=tuple(messages),
            params=params,
            schema_name=stage.schema_name,
            json_schema=self._schema(stage.output),
            response_mode=route.response_mode,
            sample_index=sample,
            salt=salt,
            hints=hints,
            budget=self.budget(stage),
        )

    def _base_messages(self, stage: Stage, variables: Mapping[str, Any]) -> list[dict[str, str]]:
        language = variables.get("language", "en")
        messages = self.prompts.render(stage.template_for(language), dict(variables))
        if schema_in_prompt(self.route(stage).response_mode):
            # Without OpenAI's schema field the model reads the schema (and what each field
            # means) from the prompt; a server's own schema field only constrains the tokens.
            hint = self.prompts.render_text(
                localized("_schema_hint.j2", language),
                {"schema": json.dumps(self._schema(stage.output), ensure_ascii=False),
                 "schema_name": stage.schema_name})
            # In the first message (the system one), so it joins the prefix a persona's
            # prompts of the stage share rather than following each item.
            messages[0] = {**messages[0], "content": messages[0]["content"] + "\n\n" + hint}
        return messages

    async def run(self, stage: Stage, variables: Mapping[str, Any], *, item_key: str,
                  persona_id: str | None = None, sample: int = 0) -> ItemResult:
        """Generate one item of `stage`, repairing up to the configured bound."""
        async with self._admission:
            return await self._run(stage, variables, item_key, persona_id, sample)

    async def _run(self, stage: Stage, variables: Mapping[str, Any], item_key: str,
                   persona_id: str | None, sample: int) -> ItemResult:
        base = self._base_messages(stage, variables)
        language = variables.get("language", "en")
        template_hash = self.prompts.hash(stage.template_for(language))
        salt = self.settings.regenerate.get(persona_id or "", {}).get(stage.qualified_name, "")
        hints = _hints(stage, variables, sample, salt) if self.settings.stage_variables else None
        messages = list(base)
        calls: list[dict[str, Any]] = []
        reviews: list[ItemResult] = []
        problems: list[str] = []
        last_valid: Any | None = None
        rejected: str | None = None
        for attempt in range(self.settings.repairs + 1):
            request = self._request(stage, messages, sample, hints, salt)
            started = time.time()
            call = {
                "call_id": f"{item_key}#{attempt}",
                "stage": stage.qualified_name,
                "template_hash": template_hash,
                "model": request.model,
                "cache_key": request.cache_key(),
                "persona_id": persona_id,
                "item_key": item_key,
                "repair_index": attempt,
                "started_at": started,
            }
            try:
                response = await self.route(stage).engine.complete(request, stage=stage.qualified_name)
            except TransportFailure as exc:
                calls.append({**call, **_empty_usage(), "outcome": "transport_error",
                              "error": str(exc)})
                problems = [f"[transport] {exc}"]
                break
            call.update(prompt_tokens=response.prompt_tokens,
                        completion_tokens=response.completion_tokens,
                        cached_prompt_tokens=response.cached_prompt_tokens,
                        latency_s=response.latency_s, attempts=response.attempts,
                        cache_hit=response.cached)
            output, problems, outcome = evaluate(stage, response.content, response.finish_reason, variables)
            if outcome in ("ok", "check_failed"):
                last_valid = output
            if outcome == "ok" and stage.judge is not None:
                problems, review = await self._judge(stage.judge, output, variables, f"{item_key}#{attempt}",
                                                     persona_id)
                reviews.append(review)
                outcome = "judge_rejected" if problems else outcome
            calls.append({**call, "outcome": outcome, "error": "; ".join(problems)[:2000]})
            if problems:
                rejected = response.content
            else:
                status = "ok" if attempt == 0 else "repaired"
                return ItemResult(stage.qualified_name, item_key, persona_id, output, status,
                                  [], calls, reviews=reviews, budget=request.budget)
            if attempt < self.settings.repairs:
                repair = self.prompts.render_text(localized("_repair.j2", language),
                                                  {"problems": problems})
                # The whole exchange so far: a repeated bad answer still makes a new request.
                messages = messages + [{"role": "assistant", "content": response.content},
                                       {"role": "user", "content": repair}]
        if stage.policy == "flag" and last_valid is not None:
            return ItemResult(stage.qualified_name, item_key, persona_id, last_valid, "flagged",
                              problems, calls, rejected, reviews, self.budget(stage))
        return ItemResult(stage.qualified_name, item_key, persona_id, None, "dropped",
                          problems, calls, rejected, reviews, self.budget(stage))

    async def _judge(self, judge: Judge, answer: Any, variables: Mapping[str, Any], item_key: str,
                     persona_id: str | None) -> tuple[list[str], ItemResult]:
        """The judge's problems with `answer`, and its item. A judge that gives no usable
        verdict (after its own repairs) rejects nothing: the answer passed every check."""
        result = await self._run(judge.stage, judge.variables(answer, variables), f"{item_key}/judge",
                                 persona_id, 0)
        if not result.usable:
            return [], result
        return [f"[{judge.stage.name}] {p}" for p in judge.verdict(result.output, variables)], result

    async def run_many(self, stage: Stage,
                       items: Iterable[tuple[str, str | None, Mapping[str, Any]]]
                       ) -> list[ItemResult]:
        """Fan out: run (item_key, persona_id, variables) items concurrently, in order."""
        return list(await asyncio.gather(*(
            self.run(stage, variables, item_key=key, persona_id=pid)
            for key, pid, variables in items)))


def schema_in_prompt(response_mode: str) -> bool:
    """Whether requests in this mode carry their schema in the prompt."""
    if response_mode == "auto":
        raise ValueError("llm.response_mode auto must be resolved by the endpoint's probe first")
    return response_mode != "json_schema"


def _hints(stage: Stage, variables: Mapping[str, Any], sample: int, salt: str = "") -> dict[str, Any]:
    """The stage, the sample index and the variables, for the simulator.

    Not copied or converted: variables are plain JSON already (recipes pass dates as ISO
    strings and models dumped in JSON mode), and only a request that is sent serializes them.
    """
    hints = {"stage": stage.qualified_name, "sample": sample, "variables": variables}
    if salt:
        hints["salt"] = salt
    return hints


def _empty_usage() -> dict[str, Any]:
    return {"prompt_tokens": 0, "completion_tokens": 0, "cached_prompt_tokens": 0, "latency_s": 0.0, "attempts": 0,
            "cache_hit": False}
