"""stratmem's chain (StratMem-Bench, seed 002): one source conversation per persona.

Per conversation: `extract` the memories of every session used. Per window of w
consecutive sessions (w in `windows`), the instance: `merge` the window's candidates
(duplicates joined, every item unambiguous) → `query` (the human's next message, aimed at
the drawn given type) and `persona` (the virtual character as those sessions show them) →
the pool: the query's targets and other memories of the window → `label`, three times as
three independent labellers → majority roles (a three-way split drops the instance) →
the inferred type. The history is the start of the session after the window, and the
query time that session's time, so every memory is strictly older than the history.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flows.stratmem import emotions as stratmem_emotions
from flows.stratmem import report, review
from flows.stratmem import rules as recipe_rules
from flows.stratmem import stages as S
from flows.stratmem.options import (
    EMPTY_HISTORY_SHARE,
    HISTORY_LINES,
    LABELLERS,
    TEST_SPLIT_NICE,
    StratmemOptions,
)
from flows.stratmem.source import Conversation, Session, read_dataset, read_locomo, spoken_time
from memsynth.core.config import BuildConfig
from memsynth.core.records import PERSONAS, STAGE_FAILURES, PersonaRow, StageFailureRow
from memsynth.generation.recipe import PersonaContext, Recipe
from schemas.stratmem import INSTANCES, MEMORIES, ROLES, InstanceRow, MemoryRow

STATISTICS = {
    "instances": "SELECT count(*) FROM stratmem_instances",
    **{f"type_{t}": f"SELECT count(*) FILTER (WHERE inferred_type = '{t}') FROM stratmem_instances" for t in "ABC"},
    "memories_per_instance": "SELECT round(count(*) / (SELECT count(*) FROM stratmem_instances), 2) "
                             "FROM stratmem_memories",
    **{f"{r}_facts": f"SELECT count(*) FILTER (WHERE role = '{r}') FROM stratmem_memories" for r in ROLES},
    "words_per_memory": "SELECT round(avg(len(string_split(trim(fact), ' '))), 2) FROM stratmem_memories",
    # Fleiss' kappa of the three labellers over every labelled memory.
    "fleiss_kappa": """
        WITH n AS (SELECT [len(list_filter(votes, x -> x = r)) FOR r IN ['must', 'nice', 'irr']] AS c
                   FROM stratmem_memories WHERE len(votes) = 3),
        p AS (SELECT avg((c[1] * c[1] + c[2] * c[2] + c[3] * c[3] - 3) / 6.0) AS agree,
                     sum(c[1]) / (3.0 * count(*)) AS pa, sum(c[2]) / (3.0 * count(*)) AS pb,
                     sum(c[3]) / (3.0 * count(*)) AS pc FROM n)
        SELECT round((agree - (pa * pa + pb * pb + pc * pc)) / nullif(1 - (pa * pa + pb * pb + pc * pc), 0), 3)
        FROM p""",
}
# The release's figures (the seed's Table 1 and §3.2 measured on StratMemBench.json).
SEED_FIGURES = {"instances": 657, "type_A": 50, "type_B": 132, "type_C": 475, "memories_per_instance": 8.79,
                "must_facts": 620, "nice_facts": 1958, "irr_facts": 3200, "words_per_memory": 9.81,
                "fleiss_kappa": 0.81}


@dataclass(frozen=True)
class SessionFact:
    """A memory item and the source session it was extracted from."""

    text: str
    session: Session


class StratmemRecipe(Recipe):
    """Strategic memory use (StratMem-Bench): per query, a memory pool labelled must / nice /
    irr by three labellers, from LoCoMo conversations or from an enpmr or pal dataset."""

    name = "stratmem"
    options_model = StratmemOptions
    stages = S.STAGES
    tables = (PERSONAS, INSTANCES, MEMORIES)
    benchmark_tables = (INSTANCES,)
    statistics = STATISTICS
    seed_figures = SEED_FIGURES
    report_figures = report.FIGURES
    report_texts = report.TEXTS
    review_tasks = review.TASKS
    rules = recipe_rules.RULES
    emotion_source = stratmem_emotions.SOURCE
    # The labellers' majority role of each memory, as annotators label it again in review.
    judge_labels = ("SELECT instance_id || '#' || memory_index, 'role', role FROM stratmem_memories "
                    "ORDER BY instance_id, memory_index")
    options: StratmemOptions

    def __init__(self, options: Any = None):
        super().__init__(options)
        self._conversations: dict[str, Conversation] = {}
        self._id_prefix = "locomo"  # instance ids read like the release's: locomo_<10 hex digits>

    def source_personas(self, config: BuildConfig, warehouse: Path) -> list[PersonaRow]:
        """One persona per source conversation, in the source's order."""
        kind, _, where = self.options.source.partition(":")
        if kind == "locomo":
            conversations = read_locomo(config.resolve_path(where))
        else:
            assistant = self.options.assistant_name or ("助手" if config.language == "zh" else "Assistant")
            conversations = read_dataset(warehouse, where, assistant)
            self._id_prefix = where.partition("@")[0]
        self._conversations = {c.source_id: c for c in conversations}
        return [PersonaRow(persona_id=c.source_id, description=c.describe(), source=self.options.source)
                for c in conversations]

    def _sessions(self, conversation: Conversation) -> tuple[Session, ...]:
        limit = self.options.max_sessions
        return conversation.sessions[:limit] if limit else conversation.sessions

    async def generate(self, ctx: PersonaContext) -> None:
        conversation = self._conversations[ctx.persona.persona_id]
        ctx.emit(PERSONAS, [ctx.persona])
        sessions = self._sessions(conversation)
        windows = [(w, j) for w in self.options.windows for j in range(len(sessions) - w)]
        used = sorted({j + k for w, j in windows for k in range(w)})
        results = await ctx.run_many(S.EXTRACT, [
            (f"{conversation.source_id}/s{sessions[i].index}/extract", _session_variables(conversation, sessions[i], ctx.language))
            for i in used])
        facts = {i: [SessionFact(m.fact, sessions[i]) for m in r.output.memories] if r.output else None
                 for i, r in zip(used, results, strict=True)}
        built = await asyncio.gather(*(self._instance(ctx, conversation, sessions, w, j, facts) for w, j in windows))
        base = (ctx.persona.ordinal or 0) * 100_000
        position = 0
        for found in built:
            if found is None:
                continue
            instance, memories = found
            ctx.emit(INSTANCES, [instance.model_copy(update={"ordinal": base + position})])
            ctx.emit(MEMORIES, memories)
            position += 1

    async def _instance(self, ctx: PersonaContext, conversation: Conversation, sessions: tuple[Session, ...],
                        w: int, j: int, facts: dict[int, list[SessionFact] | None]
                        ) -> tuple[InstanceRow, list[MemoryRow]] | None:
        window = [facts[j + k] for k in range(w)]
        if any(f is None for f in window):
            return None  # a session's extraction failed: recorded in stage_failures
        key = f"{conversation.source_id}/w{w}/s{sessions[j].index}"
        rng = ctx.derived_rng(key)
        candidates = [f for part in window for f in part if f is not None]
        merged = await ctx.run(S.MERGE, {
            "speakers": list(conversation.speakers),
            "candidates": [{"number": n, "fact": f.text, "date": f"{f.session.at:%Y-%m-%d}"}
                           for n, f in enumerate(candidates, 1)]}, f"{key}/merge")
        if merged.output is None:
            return None
        memories = [SessionFact(m.fact, max((candidates[n - 1].session for n in m.sources if 1 <= n <= len(candidates)),
                                     key=lambda s: s.at)) for m in merged.output.memories]
        after = sessions[j + w]
        virtual = rng.choice(conversation.characters)
        human = next(s for s in conversation.speakers if s != virtual)
        given = rng.choices(list(self.options.given_type_weights), list(self.options.given_type_weights.values()))[0]
        history = _history(after, rng)
        numbered = [{"number": n, "fact": m.text} for n, m in enumerate(memories, 1)]
        query, persona = await asyncio.gather(
            ctx.run(S.QUERY, {"human": human, "virtual_person": virtual, "query_time": _when(after, ctx.language),
                              "history": history, "memories": numbered, "given_type": given}, f"{key}/query"),
            ctx.run(S.PERSONA, {"virtual_person": virtual, "human": human, "sessions": [
                {"time": _when(s, ctx.language), "notes": list(s.notes),
                 "lines": [text for speaker, text in s.turns if speaker == virtual][:40]}
                for s in sessions[j:j + w]]}, f"{key}/persona"))
        if query.output is None or persona.output is None:
            return None
        pool = _pool(memories, [t - 1 for t in dict.fromkeys(query.output.targets)], self.options.pool_size, rng)
        label_variables = {"human": human, "virtual_person": virtual, "query": query.output.query,
                           "query_time": _when(after, ctx.language), "history": history[-6:],
                           "memories": [{"number": n, "fact": m.text} for n, m in enumerate(pool, 1)]}
        labels = await asyncio.gather(*(ctx.run(S.LABEL, label_variables, f"{key}/label", sample=k)
                                        for k in range(LABELLERS)))
        if any(r.output is None for r in labels):
            return None
        by_index = [{label.index: label for label in r.output.labels} for r in labels]
        votes = [[b[n].role for b in by_index] for n in range(1, len(pool) + 1)]
        roles = []
        for n, vote in enumerate(votes, 1):
            role, count = Counter(vote).most_common(1)[0]
            if count == 1:
                return self._drop(ctx, key, f"the labellers split three ways on memory {n} ({', '.join(vote)})")
            roles.append(role)
        inferred = _inferred_type(roles)
        if inferred is None:
            return self._drop(ctx, key, "the labellers found no memory must or nice for the query")
        ctx.output.tally_check("stratmem.consensus", True)
        instance_id = f"{self._id_prefix}_" + hashlib.sha256(
            f"{conversation.source_id}|{w}|{sessions[j].index}".encode()).hexdigest()[:10]
        kept = _test_split(roles, ctx.derived_rng(f"test-split/{instance_id}"))
        instance = InstanceRow(
            instance_id=instance_id, persona_id=ctx.persona.persona_id, source_id=conversation.source_id,
            ordinal=0, window_size=w, first_session=sessions[j].index, history_session=after.index,
            given_type=given, inferred_type=inferred, query=query.output.query.strip(),
            query_time=after.time_text, query_at=after.at, history=history, human=human, virtual_person=virtual,
            persona=persona.output.model_dump(),
            agreement=round(sum(len(set(v)) == 1 for v in votes) / len(votes), 4))
        rows = [MemoryRow(
            instance_id=instance_id, persona_id=ctx.persona.persona_id, memory_index=n, fact=m.text,
            role=roles[n], votes=votes[n],
            rationale=next(b[n + 1].rationale for b in by_index if b[n + 1].role == roles[n]),
            session_index=m.session.index, session_at=m.session.at, in_test_split=kept[n])
            for n, m in enumerate(pool)]
        return instance, rows

    @staticmethod
    def _drop(ctx: PersonaContext, key: str, why: str) -> None:
        """Leave the instance out, as the seed discards ambiguous annotations: recorded, and
        counted in the `stratmem.consensus` pass rate, but not a failed item."""
        ctx.output.tally_check("stratmem.consensus", False)
        ctx.emit(STAGE_FAILURES, [StageFailureRow(stage="stratmem.label", item_key=f"{key}/label",
                                                  persona_id=ctx.persona.persona_id, action="dropped",
                                                  problems=[why])])
        return None


def _when(session: Session, language: str) -> str:
    """A session's time as a prompt in `language` says it (the release keeps LoCoMo's form)."""
    return spoken_time(session.at, session.time_text, language)


def _session_variables(conversation: Conversation, session: Session, language: str) -> dict[str, Any]:
    return {"speakers": list(conversation.speakers), "session": session.index, "time": _when(session, language),
            "date": f"{session.at:%Y-%m-%d}", "turns": [f"{speaker}: {text}" for speaker, text in session.turns],
            "notes": list(session.notes)}


def _history(session: Session, rng: Any) -> list[str]:
    """The start of `session` (as long as the release's histories), or nothing."""
    longest = min(HISTORY_LINES[1], len(session.turns) - 1)
    if rng.random() < EMPTY_HISTORY_SHARE or longest < HISTORY_LINES[0]:
        return []
    return [f"{speaker}: {text}" for speaker, text in session.turns[:rng.randint(HISTORY_LINES[0], longest)]]


def _pool(memories: list[SessionFact], targets: list[int], size: tuple[int, int], rng: Any) -> list[SessionFact]:
    """The query's targets and other memories of the window, up to a drawn size, shuffled."""
    chosen = [t for t in targets if 0 <= t < len(memories)]
    others = [i for i in range(len(memories)) if i not in chosen]
    n = max(len(chosen), rng.randint(*size))
    chosen += rng.sample(others, min(len(others), n - len(chosen)))
    rng.shuffle(chosen)
    return [memories[i] for i in chosen]


def _inferred_type(roles: list[str]) -> str | None:
    must, nice = "must" in roles, "nice" in roles
    return "C" if must and nice else "A" if must else "B" if nice else None


def _test_split(roles: list[str], rng: Any) -> list[bool]:
    """The test split keeps at most two nice memories per instance (the seed's §5.2)."""
    nice = [i for i, r in enumerate(roles) if r == "nice"]
    kept = set(rng.sample(nice, TEST_SPLIT_NICE)) if len(nice) > TEST_SPLIT_NICE else set(nice)
    return [r != "nice" or i in kept for i, r in enumerate(roles)]
