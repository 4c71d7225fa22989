"""How memsynth's simulator answers stratmem's stages, from each stage's variables."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from memsynth.simulator.answers import AnswerBook
from memsynth.simulator.text import ZH_DID, ZH_FELT, TextMaker

ANSWERS = AnswerBook("stratmem")
# A memory's role for a query, before any labeller's slip: the release's shares of facts
# (must 620, nice 1,958, irr 3,200 of 5,778).
ROLE_SHARES = (("must", 0.107), ("nice", 0.339), ("irr", 0.554))
SLIP = 0.05  # a labeller's chance of giving another role: about the seed's 5,000 of 5,778 unanimous

Answer = dict[str, Any]
Variables = Mapping[str, Any]


def _fact(about: str, date: str, text: TextMaker) -> str:
    if text.language == "zh":
        return f"{about}在 {date} {text.rng.choice(ZH_DID)}。"
    return f"{about} {text.phrase()} on {date}."


@ANSWERS.stage("extract")
def extract(draft: Answer, v: Variables, text: TextMaker) -> Answer:
    # About as many facts as the session has notes (LoCoMo: about ten), at least three.
    count = text.rng.randint(max(3, len(v["notes"]) // 2), max(4, min(12, len(v["notes"]))))
    draft["memories"] = [{"fact": _fact(about, v["date"], text), "about": about}
                         for about in (text.rng.choice(v["speakers"]) for _ in range(count))]
    return draft


@ANSWERS.stage("merge")
def merge(draft: Answer, v: Variables, text: TextMaker) -> Answer:
    # Candidates of one fact (flows/stratmem/pool_checks.same_fact_pairs: the check's own reading)
    # join one item, under the first one's wording.
    from flows.stratmem.pool_checks import same_fact_pairs

    group = {int(c["number"]): int(c["number"]) for c in v["candidates"]}
    for a, b in same_fact_pairs(list(v["candidates"]), [str(s) for s in v.get("speakers", [])]):
        old, new = max(group[a], group[b]), min(group[a], group[b])
        group = {n: new if g == old else g for n, g in group.items()}
    facts = {int(c["number"]): c["fact"] for c in v["candidates"]}
    by_group: dict[int, list[int]] = {}
    for n in sorted(group):
        by_group.setdefault(group[n], []).append(n)
    draft["memories"] = [{"fact": facts[first], "sources": numbers} for first, numbers in by_group.items()]
    return draft


@ANSWERS.stage("query")
def query(draft: Answer, v: Variables, text: TextMaker) -> Answer:
    numbers = [m["number"] for m in v["memories"]]
    wanted = {"A": 1, "B": 2, "C": 2}[v["given_type"]]
    draft["targets"] = text.rng.sample(numbers, min(wanted, len(numbers)))
    topic = text.phrase()
    # "we": a target may be the speaker's own memory, which the speaker asks about as theirs.
    draft["query"] = (f"{v['virtual_person']}，你还记得我们聊到{topic}那次吗？" if text.language == "zh"
                      else f"Do you remember when we talked about how you {topic}, {v['virtual_person']}?")
    return draft


# Within the check's bounds (flows.stratmem.checks.PERSONA_ITEMS).
SIMULATED_ITEMS = (("traits", 6, 10), ("style", 5, 8), ("domains", 4, 8), ("values", 5, 8))


def _described(name: str, text: TextMaker) -> str:
    """Three sentences about the character, in the third person (persona_described)."""
    if text.language == "zh":
        return "".join(f"{name}{text.rng.choice(ZH_DID)}，{text.rng.choice(ZH_FELT)}。" for _ in range(3))
    return " ".join(f"{name} {text.phrase()}." for _ in range(3))


@ANSWERS.stage("persona")
def persona(draft: Answer, v: Variables, text: TextMaker) -> Answer:
    draft.update({"virtual_person_name": v["virtual_person"], "summary": _described(v["virtual_person"], text),
                  **{name: [text.phrase() for _ in range(text.rng.randint(low, high))]
                     for name, low, high in SIMULATED_ITEMS}})
    return draft


def base_role(query: str, fact: str) -> str:
    """The role every labeller would give, drawn from the query and the fact alone."""
    draw = int.from_bytes(hashlib.sha256(f"{query}|{fact}".encode()).digest()[:4], "big") / 2**32
    for role, share in ROLE_SHARES:
        draw -= share
        if draw < 0:
            return role
    return "irr"


@ANSWERS.stage("label")
def label(draft: Answer, v: Variables, text: TextMaker) -> Answer:
    labels = []
    for m in v["memories"]:
        role = base_role(v["query"], m["fact"])
        if text.rng.random() < SLIP:  # this labeller sees it otherwise
            role = text.rng.choice([r for r, _ in ROLE_SHARES if r != role])
        labels.append({"index": m["number"], "role": role, "rationale": text.sentence()})
    draft["labels"] = labels
    return draft


# --- evaluation stages: a reply that recalls some memories word for word, a judge that
# finds them (slipping now and then), and a grade that falls with each memory brought in.

@ANSWERS.stage("eval_respond")
def eval_respond(draft: Answer, v: Variables, text: TextMaker) -> Answer:
    recalled = [m["fact"] for m in v["memories"] if text.rng.random() < 0.3]
    opener = "嗯，" if text.language == "zh" else "Oh, "
    draft["response"] = opener + " ".join([*recalled, text.sentence()])
    return draft


@ANSWERS.stage("eval_detect")
def eval_detect(draft: Answer, v: Variables, text: TextMaker) -> Answer:
    verdicts = []
    for m in v["memories"]:
        used = m["fact"] in v["response"]
        if text.rng.random() < 0.1:  # this run misjudges it
            used = not used
        evidence = m["fact"] if m["fact"] in v["response"] else (v["response"][:20] if used else "")
        verdicts.append({"index": m["number"], "evidence": evidence, "used": used})
    draft["verdicts"] = verdicts
    return draft


@ANSWERS.stage("eval_miq")
def eval_miq(draft: Answer, v: Variables, text: TextMaker) -> Answer:
    draft.update(failures=["overexpansion"] if len(v["used"]) > 2 else [], analysis=text.sentence(),
                 score=max(1, 5 - max(0, len(v["used"]) - 1) - text.rng.randint(0, 1)))
    return draft
