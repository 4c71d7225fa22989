"""The golden fixtures' values that stand for an upstream stage's answer, as answers of that stage.

A fixture feeds each stage what the stages before it would have written (the profile, the
preferences, the framework, the persona …); each such value must be an answer its own stage
accepts, or the golden prompts show models inputs that break our own rules. `cases(language)`
gives every one as a mutation `Case` (source "golden"), with the checks it cannot be held to
because the fixture gives only part of the stage's answer (one theme of ten, one situation of
a month), each with the reason.
"""

from __future__ import annotations

from typing import Any

from memsynth.quality.mutants import Case
from tests.golden.fixtures import enpmr as enpmr_fixture
from tests.golden.fixtures import pal as pal_fixture
from tests.golden.fixtures import stratmem as stratmem_fixture
from tests.golden.fixtures import variables

# (recipe, stage) → checks a partial answer is not held to, and why.
PARTIAL: dict[tuple[str, str], dict[str, str]] = {
    ("enpmr", "life_themes"): {"enough_themes": "one theme of the persona's list"},
    ("enpmr", "relationship"): {"enough_items": "one relationship of the theme's list",
                                "quality_mix": "one relationship of the theme's list"},
    ("enpmr", "highlight"): {"enough_items": "the target and the negatives, three of the theme's highlights"},
    ("pal", "profile"): {"batch_size": "one profile of the batch", "varied_batch": "one profile of the batch"},
    ("pal", "situations"): {"situation_count": "one situation of the month",
                            "spans_consecutive": "one situation of the month"},
    ("pal", "candidates"): {"candidates_per_topic": "the first topic's candidates only"},
    ("pal", "logs"): {"enough_logs": "the evaluation's records, a few logs of the history month",
                      "log_times": "the records span the history month, not one experience's span"},
    ("stratmem", "merge"): {"covers_candidates": "the pool's facts, not the merge of these candidates",
                            "same_facts_joined": "the pool's facts, not the merge of these candidates",
                            "states_only_candidate_numbers": "the pool's facts, not the merge of these candidates"},
}


def _case(recipe: str, stage: str, language: str, name: str, answer: Any, stage_variables: dict[str, Any],
          **extra: Any) -> Case:
    return Case(recipe, stage, language, f"golden-{recipe}-{stage}-{language}-{name}", answer,
                {**stage_variables, **extra}, "golden")


def enpmr_cases(language: str) -> list[Case]:
    w, v = enpmr_fixture.WORLD[language], variables("enpmr", language)
    item = lambda kind: dict(kind[1])  # noqa: E731
    return [
        _case("enpmr", "persona", language, "persona",
              {"description": enpmr_fixture.PERSONA_DESCRIPTIONS[language]}, v["persona"]),
        _case("enpmr", "profile", language, "profile", w["profile"], v["profile"]),
        _case("enpmr", "life_themes", language, "theme", {"themes": [
            {k: w["theme"][k] for k in ("theme", "description", "start_date")}]}, v["life_themes"], min_themes=1),
        _case("enpmr", "relationship", language, "session-memory", {"items": [item(w["session_memory"])]},
              v["relationship"]),
        _case("enpmr", "highlight", language, "target-negatives",
              {"items": [item(w["target"]), *(item(n) for n in w["negatives"])]}, v["highlight"]),
        _case("enpmr", "scene", language, "scene", {"scene": w["scene"]}, v["scene"]),
        _case("enpmr", "support_dialogue", language, "dialogue",
              {"turns": [{"role": "ai" if r == "assistant" else r, "content": c} for r, c in w["turns"]],
               "memory_turn": len(w["turns"])}, v["support_dialogue"]),
        _case("enpmr", "eval_respond", language, "response", {"memory": 1, "response": w["response"]},
              v["eval_respond"]),
    ]


def pal_cases(language: str) -> list[Case]:
    w, v = pal_fixture.WORLD[language], variables("pal", language)
    topics = w["topics"]
    preferences = [{"requirement_id": f"work-{i}", "analysis": a, "pos": pos, "neg": neg}
                   for i, (a, pos, neg) in enumerate(w["work_preferences"], start=1)]
    rated = lambda p: pal_fixture._preferences(p).model_dump()  # noqa: E731
    start, end = pal_fixture.SPAN
    records = [r.split(" ", 3) for r in w["memory"] if r.split(" ", 3)[2] != "dialogue\nuser:"]
    logs = [{"timestamp": f"{d} {t}", "event": c[:40], "type": k.rstrip(":"), "content": c}
            for d, t, k, c in records if "\n" not in k]
    return [
        _case("pal", "profile", language, "profile", {"profiles": [w["profile"]]}, v["profile"]),
        _case("pal", "timeline", language, "timeline", {"months": v["preferences"]["timeline"]}, v["timeline"]),
        _case("pal", "requirement_types", language, "types", w["requirement_types"], v["requirement_types"]),
        _case("pal", "preferences", language, "work", {"items": preferences}, v["preferences"]),
        _case("pal", "situations", language, "situation", {"situations": [
            {"time_span": f"{start[:10]} ~ {end[:10]}", "requirement_ids": w["situation_ids"],
             "situation": w["situation"]}]}, v["situations"]),
        _case("pal", "experience", language, "experience", {"experience": w["experience"]}, v["experience"]),
        _case("pal", "requirements", language, "framework", {"topics": topics}, v["requirements"]),
        _case("pal", "candidates", language, "candidates",
              {"topics": [{"requirement_id": topics[0]["requirement_id"], "solutions": w["candidates"]}]},
              v["candidates"]),
        _case("pal", "solution_preferences", language, "first", rated(w["preference"]), v["solution_preferences"]),
        _case("pal", "logs", language, "records", {"logs": logs}, v["logs"]),
        _case("pal", "eval_restate", language, "restatement", {"requirement": w["restatement"]}, v["eval_restate"]),
    ]


def stratmem_cases(language: str) -> list[Case]:
    w, v = stratmem_fixture.WORLD[language], variables("stratmem", language)
    speakers = v["extract"]["speakers"]
    about = lambda fact: next((s for s in speakers if s in fact), speakers[0])  # noqa: E731
    return [
        _case("stratmem", "extract", language, "candidates",
              {"memories": [{"fact": f, "about": about(f)} for f, _ in w["candidates"]]}, v["extract"]),
        _case("stratmem", "merge", language, "pool",
              {"memories": [{"fact": f, "sources": [n]} for n, f in enumerate(w["memories"], start=1)]},
              v["merge"]),
        _case("stratmem", "query", language, "query", {"query": w["query"], "targets": [1, 2]}, v["query"]),
        _case("stratmem", "persona", language, "persona", w["persona"], v["persona"]),
        _case("stratmem", "eval_respond", language, "response", {"response": w["response"]}, v["eval_respond"]),
    ]


def cases(language: str) -> list[Case]:
    """Every fixture value that stands for an upstream stage's answer, in `language`."""
    return [*enpmr_cases(language), *pal_cases(language), *stratmem_cases(language)]
