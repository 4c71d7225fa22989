"""longmem's per-persona chain: plan the facts and sessions (code), write each session (model),
mark the evidence turns, then assemble each question's haystack and keep it only if the gold
checks hold."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from flows.longmem import gold
from flows.longmem import rules as recipe_rules
from flows.longmem.options import (
    SEED_ABSTENTIONS,
    SEED_COUNTS,
    SEED_QUESTIONS,
    SEED_TOKENS_PER_HAYSTACK,
    TYPE_OF_KIND,
    TYPES,
    LongmemOptions,
)
from flows.longmem.plan import (
    PersonaPlan,
    PlannedFact,
    PlannedSession,
    answer_of,
    catalog,
    draw,
    haystack_share,
    released_id,
    released_turns,
)
from flows.longmem.stages import EVIDENCE, FILLER, STAGES, turns
from flows.longmem.text import names
from memsynth.core.records import PERSONAS
from memsynth.core.tables import Ref, Table
from memsynth.generation.recipe import PersonaContext, Recipe
from schemas.longmem import Chat, FactRow, QuestionRow, SessionRow

FACTS = Table("longmem_facts", FactRow, key="fact_id")
SESSIONS = Table("longmem_sessions", SessionRow, key="session_id")
QUESTIONS = Table("longmem_questions", QuestionRow, key="question_id",
                  refs=(Ref("haystack_session_ids", "longmem_sessions", "session_id"),))
_CJK = re.compile(r"[\u3400-\u9fff]")


def tokens(text: str) -> int:
    """Estimated tokens: one per CJK character, one per four other characters."""
    cjk = len(_CJK.findall(text))
    return cjk + (len(text) - cjk + 3) // 4


def _share(kind: str) -> str:
    return f"SELECT round(avg((question_type = '{kind}')::INT), 3) FROM longmem_questions"


STATISTICS = {
    "questions": "SELECT count(*) FROM longmem_questions",
    "abstentions": "SELECT count(*) FROM longmem_questions WHERE question_id LIKE '%\\_abs' ESCAPE '\\'",
    "sessions_per_haystack": "SELECT round(avg(len(haystack_session_ids)), 1) FROM longmem_questions",
    "tokens_per_haystack": "SELECT round(avg(haystack_tokens)) FROM longmem_questions",
    **{f"share_{t}": _share(t) for t in TYPES},
}
SEED_FIGURES = {"questions": SEED_QUESTIONS, "abstentions": SEED_ABSTENTIONS, "sessions_per_haystack": 47.5,
                "tokens_per_haystack": SEED_TOKENS_PER_HAYSTACK,
                **{f"share_{t}": round(n / SEED_QUESTIONS, 3) for t, n in SEED_COUNTS.items()}}


def marked(chat: Chat, session: PlannedSession) -> list[dict[str, Any]]:
    """The session's turns; the speaker's turns that reveal its value carry has_answer."""
    out = []
    for role, text in turns(chat):
        turn: dict[str, Any] = {"role": role, "content": text}
        if session.value is not None and role == session.speaker and names(text, session.value):
            turn["has_answer"] = True
        out.append(turn)
    return out


class LongmemRecipe(Recipe):
    """LongMemEval-style long-term memory: structured facts per persona, evidence sessions that
    reveal them indirectly, filler sessions that never touch them, a timestamped haystack per
    question, and questions of six types plus abstention whose answers are computed from the facts."""

    name = "longmem"
    options_model = LongmemOptions
    stages = STAGES
    tables = (PERSONAS, FACTS, SESSIONS, QUESTIONS)
    benchmark_tables = (QUESTIONS,)
    rules = recipe_rules.RULES
    statistics = STATISTICS
    seed_figures = SEED_FIGURES
    prompts_dir = Path(__file__).resolve().parents[2] / "prompts"

    async def generate(self, ctx: PersonaContext) -> None:
        options: LongmemOptions = self.options  # type: ignore[assignment]
        pid = ctx.persona.persona_id
        ctx.emit(PERSONAS, [ctx.persona])
        plan = draw(pid, options, ctx.language, ctx.config.reference_date, ctx.derived_rng("plan"))
        book = catalog(ctx.language)
        absent_terms = [t for a in plan.absent for t in a["terms"]]
        every_term = [*absent_terms, *(w for f in plan.facts for w in (*f.entry["terms"], *f.values))]
        base = {"persona": ctx.persona.description, "exchanges": options.exchanges}
        evidence = [(s, f) for f in plan.facts for s in f.sessions]
        # An evidence session is a distractor in every other haystack of the persona: it keeps
        # off the other facts' terms and values as a filler does (and off the abstentions').
        written = await ctx.run_many(EVIDENCE, [(f"{pid}/evidence/{s.session_id}", {
            **base, "date": s.date, "topic": s.topic, "speaker": s.speaker, "value": s.value,
            "statement": s.statement, "question": f.entry["question"], "attribute": f.entry["attribute"],
            "avoid": [*absent_terms, *(w for o in plan.facts if o is not f for w in (*o.entry["terms"], *o.values))],
            "mentions": {r: [s.value] if r == s.speaker else [] for r in ("user", "assistant")}}) for s, f in evidence])
        fillers = await ctx.run_many(FILLER, [(f"{pid}/filler/{s.session_id}", {
            **base, "date": s.date, "topic": s.topic, "avoid": every_term}) for s in plan.fillers])
        chats: dict[str, list[dict[str, Any]]] = {}
        for (session, _), result in zip(evidence, written):
            if result.usable:
                chats[session.session_id] = marked(result.output, session)
        for session, result in zip(plan.fillers, fillers):
            if result.usable:
                chats[session.session_id] = marked(result.output, session)
        ctx.emit(SESSIONS, [SessionRow(session_id=s.session_id, persona_id=pid, date=s.date, kind=s.kind,
                                       fact_id=s.fact_id, turns_json=json.dumps(chats[s.session_id], ensure_ascii=False))
                            for s in [*(s for s, _ in evidence), *plan.fillers] if s.session_id in chats])
        ctx.emit(FACTS, [FactRow(fact_id=f.fact_id, persona_id=pid, key=f.entry["key"], kind=f.kind,
                                 attribute=f.entry["attribute"], values=f.values, dates=[s.date for s in f.sessions],
                                 speaker=f.sessions[0].speaker, session_ids=[s.session_id for s in f.sessions])
                         for f in plan.facts])
        rng = ctx.derived_rng("haystacks")
        questions = [self._question(pid, plan, f, book, options, chats, rng, ctx.language) for f in plan.facts]
        for i, absent in enumerate(plan.absent):
            host = plan.facts[i % len(plan.facts)] if plan.facts else None
            questions.append(self._abstention(pid, plan, absent, host, book, options, chats, rng))
        kept = []
        for row, truth in (q for q in questions if q is not None):
            found = gold.problems(instance(row, chats, plan_dates(plan)), truth)
            for name, problems in found.items():
                ctx.output.tally_check(f"longmem.gold.{name}", not problems)
            if not any(found.values()):
                kept.append(row)
        ctx.emit(QUESTIONS, kept)

    def _haystack(self, evidence: list[str], plan: PersonaPlan, options: LongmemOptions,
                  chats: Mapping[str, Any], rng) -> list[str]:
        """The question's evidence, the persona's other evidence sessions as distractors (as
        LongMemEval's S haystacks hold other user sessions beside filler), then filler; either
        kind tops up when the other runs short."""
        fillers = [s.session_id for s in plan.fillers if s.session_id in chats]
        others = [s.session_id for f in plan.facts for s in f.sessions
                  if s.session_id in chats and s.session_id not in evidence]
        distractors, filler = haystack_share(len(evidence), len(others), options)
        filler = min(filler, len(fillers))
        distractors = min(len(others), max(0, options.haystack_sessions - len(evidence) - filler))
        chosen = [*rng.sample(others, distractors), *rng.sample(fillers, filler)]
        dates = plan_dates(plan)
        return sorted([*evidence, *chosen], key=lambda s: (dates[s], s))

    def _question(self, pid, plan, fact: PlannedFact, book, options, chats, rng, language):
        evidence = [s.session_id for s in fact.sessions]
        if any(s not in chats for s in evidence):
            return None  # a session it needs was dropped
        row = QuestionRow(
            question_id=f"{pid}_{fact.entry['key']}", persona_id=pid, question_type=TYPE_OF_KIND[fact.kind],
            question=fact.entry["question"], answer=answer_of(fact, language), question_date=plan.question_date,
            fact_id=fact.fact_id, haystack_session_ids=self._haystack(evidence, plan, options, chats, rng),
            answer_session_ids=evidence, terms=list(fact.entry["terms"]), haystack_tokens=0)
        row.haystack_tokens = sum(tokens(t["content"]) for s in row.haystack_session_ids for t in chats[s])
        return row, {"kind": fact.kind, "values": fact.values, "terms": fact.entry["terms"], "abstention": False}

    def _abstention(self, pid, plan, absent, host: PlannedFact | None, book, options, chats, rng):
        # Typed like a question of the persona (LongMemEval's _abs questions keep a type); it owns no
        # evidence, so its haystack is the persona's evidence sessions as distractors, and filler.
        row = QuestionRow(
            question_id=f"{pid}_{absent['key']}_abs", persona_id=pid,
            question_type=TYPE_OF_KIND[host.kind] if host else TYPES[0], question=absent["question"],
            answer=book.ABSTAIN.format(attribute=absent["attribute"]), question_date=plan.question_date,
            fact_id=None, haystack_session_ids=self._haystack([], plan, options, chats, rng),
            answer_session_ids=[], terms=list(absent["terms"]), haystack_tokens=0)
        row.haystack_tokens = sum(tokens(t["content"]) for s in row.haystack_session_ids for t in chats[s])
        return row, {"kind": "absent", "values": [], "terms": absent["terms"], "abstention": True}


def plan_dates(plan: PersonaPlan) -> dict[str, str]:
    return {s.session_id: s.date for s in [*(s for f in plan.facts for s in f.sessions), *plan.fillers]}


def instance(row: QuestionRow, chats: Mapping[str, list[dict[str, Any]]], dates: Mapping[str, str]) -> dict[str, Any]:
    """A question as LongMemEval releases it (its S-style instance)."""
    answers = set(row.answer_session_ids)
    return {"question_id": row.question_id, "question_type": row.question_type, "question": row.question,
            "answer": row.answer, "question_date": row.question_date,
            "haystack_session_ids": [released_id(s, answers) for s in row.haystack_session_ids],
            "haystack_dates": [dates[s] for s in row.haystack_session_ids],
            "haystack_sessions": [released_turns(chats[s], s in answers) for s in row.haystack_session_ids],
            "answer_session_ids": [released_id(s, answers) for s in row.answer_session_ids]}
