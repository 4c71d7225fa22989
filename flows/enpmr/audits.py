"""enpmr's audit judges: the rules each writer stage's answers are audited on by a model
(memsynth.generation.audit), beside the checks that enforce what code can see."""

from __future__ import annotations

from memsynth.generation.audit import AuditPlan

_MEMORY = ("distinct-memories",)  # duplicates by meaning: word overlap misses a paraphrase

AUDITS = AuditPlan(
    stages={
        "relationship": _MEMORY, "power": _MEMORY, "goal": _MEMORY, "highlight": _MEMORY, "preferences": _MEMORY,
        "memory_session": ("session-reveals", "session-quotes-no-title", "session-invents-nothing"),
        # Gold: the scene decides that the target, and none of the negatives, is the memory to recall.
        "scene": ("scene-need", "scene-fits-target", "scene-form"),
        # Gold: the memory turn and the user turns that must not give the memory away.
        "support_dialogue": ("user-never-mentions", "no-early-recall", "recall-grounded", "no-negatives"),
    },
    gold=("scene", "support_dialogue"),
    not_audited={
        "judges-consistent": "a judge's own answer (scenario_consistency, faithfulness): its flags are checked "
                             "against its score by code",
        "blri": "the BLRI judge's own scores: the filter, not the data",
        "eval-grades": "an evaluation stage: runs in `memsynth eval`, not in a build",
    },
    seed_validation=(
        "ENPMR-Bench (seed 000 §3.3, A.3): two annotators rated sampled dialogues' responses 0/1 on "
        "appropriateness, relevance and correctness: mean scores 0.80, 0.93 and 0.93, with 90 %, 95 % and 85 % "
        "agreement between the annotators. These are agreement rates of people, not error rates of the labels.",
    ),
)
