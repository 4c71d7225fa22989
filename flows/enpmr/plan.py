"""What enpmr decides in code with the build seed: each dialogue's need, target and negatives."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from flows.enpmr.options import NEED_TARGETS, EnpmrOptions, MemoryKind
from schemas.enpmr import MemoryRow

# The free-text field that carries a memory's concrete details, per category.
DETAIL_FIELDS = {"relationship": "characteristic", "power": "description", "goal": "description",
                 "highlight": "description", "preference": "description"}


def memory_details(category: str, name: str, attributes: Mapping[str, Any]) -> str:
    """The name and concrete details of a memory: what a reference to it would draw on."""
    return f"{name}: {attributes.get(DETAIL_FIELDS[category], '')}"


def memory_text(category: str, item: Mapping[str, Any], theme: str | None, language: str) -> str:
    """One self-contained sentence for a memory, used for retrieval and in prompts."""
    i = item
    if language == "zh":
        templates = {
            "relationship": "在“{theme}”期间，{name}（用户的{relationship_type}，{occupation}）与用户关系"
                            + ("良好" if i.get("relationship_quality") == "good" else "紧张") + "：{characteristic}",
            "power": "在“{theme}”期间，用户" + ("擅长" if i.get("performance") == "proficient" else "尚不擅长")
                     + "“{name}”：{description}（习得方式：{acquisition_method}）",
            "goal": "在“{theme}”期间，用户设定了目标“{name}”，目前" + ("已完成" if i.get("status") == "achieved" else "尚未完成")
                    + "：{description}",
            "highlight": "在“{theme}”期间的高光时刻“{name}”，得到{recognized_by}的认可：{description}",
            "preference": "用户的偏好“{name}”：{description}",
        }
    else:
        templates = {
            "relationship": "During '{theme}', {name} (the user's {relationship_type}, {occupation}) had a "
                            "{relationship_quality} relationship with the user: {characteristic}",
            "power": "During '{theme}', the user was {performance} at '{name}': {description} "
                     "(acquired by {acquisition_method})",
            "goal": "During '{theme}', the user set the goal '{name}', now {status}: {description}",
            "highlight": "During '{theme}', the user had the highlight '{name}', recognised by "
                         "{recognized_by}: {description}",
            "preference": "The user's preference '{name}': {description}",
        }
    return templates[category].format(theme=theme or "", **{k: v for k, v in i.items() if k != "theme"})


def can_meet(need: str, memory: MemoryRow) -> bool:
    """Is `memory` a gold target for `need` under the seed's need → memory rule?"""
    return any(kind.matches(memory.category, memory.attributes) for kind in NEED_TARGETS[need])


@dataclass(frozen=True)
class DialoguePlan:
    """What one support dialogue is about, decided in code from the build seed."""

    dialogue_id: str
    need: str
    target: MemoryRow
    negatives: tuple[MemoryRow, ...]


def plan_dialogues(persona_id: str, memories: Sequence[MemoryRow], options: EnpmrOptions,
                   rng: random.Random) -> list[DialoguePlan]:
    """Pick need → target (a memory that can meet it) → 2-3 negatives, per dialogue.

    Negatives share the target's theme and category; a memory whose theme and category
    hold too few others is never a target, so every dialogue has its full set.
    """
    low, high = options.negatives
    groups: dict[tuple[str, str | None], list[MemoryRow]] = {}
    for m in memories:
        groups.setdefault((m.category, m.theme_id), []).append(m)
    siblings = {m.memory_id: [o for o in groups[(m.category, m.theme_id)] if o.memory_id != m.memory_id]
                for m in memories}
    targets: dict[tuple[str, MemoryKind], list[MemoryRow]] = {
        (need, kind): [m for m in memories if kind.matches(m.category, m.attributes)
                       and len(siblings[m.memory_id]) >= low]
        for need, kinds in NEED_TARGETS.items() for kind in kinds}
    needs = [n for n, w in sorted(options.need_proportions.items())
             if w > 0 and any(targets[(n, k)] for k in NEED_TARGETS[n])]
    if not needs:
        return []
    weights = [options.need_proportions[n] for n in needs]
    used: set[str] = set()
    plans = []
    for d in range(options.dialogues_per_persona):
        need = rng.choices(needs, weights=weights)[0]
        kind = rng.choice([k for k in NEED_TARGETS[need] if targets[(need, k)]])
        pool = targets[(need, kind)]
        fresh = [m for m in pool if m.memory_id not in used] or pool
        target = rng.choice(fresh)
        used.add(target.memory_id)
        others = siblings[target.memory_id]
        negatives = tuple(rng.sample(others, min(rng.randint(low, high), len(others))))
        plans.append(DialoguePlan(f"{persona_id}-d{d:03d}", need, target, negatives))
    return plans
