"""enpmr's audit judges: the rules each writer stage's answers are audited on by a model
(memsynth.generation.audit), beside the checks that enforce what code can see."""

from __future__ import annotations

from memsynth.generation.audit import AuditPlan

_MEMORY = ("distinct-memories", "memory-in-theme")  # duplicates by meaning: word overlap misses a paraphrase

AUDITS = AuditPlan(
    stages={
        "life_themes": ("themes-spread",),
        "relationship": _MEMORY, "power": (*_MEMORY, "powers-progress"), "goal": (*_MEMORY, "goals-build"),
        "highlight": _MEMORY, "preferences": ("distinct-memories",),
        "memory_session": ("session-reveals", "session-quotes-no-title", "session-invents-nothing", "session-ai-warm"),
        # Gold: the scene decides that the target, and none of the negatives, is the memory to recall.
        "scene": ("scene-need", "scene-fits-target", "scene-form"),
        # Gold: the memory turn and the user turns that must not give the memory away.
        "support_dialogue": ("user-never-mentions", "no-early-recall", "recall-grounded", "no-negatives",
                             "recall-natural"),
    },
    gold=("scene", "support_dialogue"),
    not_audited={
        "profile-facts": "the profile is context for the later prompts, never benchmark text",
        "theme-description": "a theme's description is context for the memory prompts, never benchmark text",
        "eval-companion": "the prompt of the model under evaluation, in `memsynth eval`",
        "language": "a shared rule of every prompt: a judge call per stage for the language of short values would "
                    "cost more than it finds; the prompt carries it",
        "audit-scope": "the audit's own prompt: measured by `check-answers --judge`, not audited by itself",
        "audit-any-wording": "the audit's own prompt: measured by `check-answers --judge`, not audited by itself",
        "emotions-what": "an emotion score is itself a model's reading, compared with annotators in `memsynth agreement`",
        "emotions-reader": "an emotion score is itself a model's reading, compared with annotators in `memsynth agreement`",
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
