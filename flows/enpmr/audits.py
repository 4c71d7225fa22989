"""enpmr's audit judges: which rules each stage's answers are audited on by a model
(memsynth.generation.audit), beside the checks that enforce what code can see."""

from __future__ import annotations

from memsynth.generation.audit import AuditPlan

AUDITS = AuditPlan(
    # Every stage is audited on the rules its prompt lines name (memsynth.generation.audit),
    # but these, whose every clause a check reads:
    checked={
        "memory-counts": "enough_items, quality_mix, quality_balanced, proficiency_mix, kinds_mixed, goal_status and "
                         "chronological count and order every list",
        "memory-dates": "dates_in_theme reads every date against the theme's start and the reference date",
        "session-form": "the schema and session_alternates hold the length and the turn order",
        "dialogue-form": "the schema and dialogue_alternates hold the length and the turn order",
        "recall-length": "recall_length counts the memory turn's words (characters in Chinese)",
    },
    # Beyond their prompt lines: duplicates by meaning (word overlap misses a paraphrase).
    stages={stage: ("distinct-memories",) for stage in ("power", "goal", "highlight", "preferences")},
    gold=("scene", "support_dialogue"),
    not_audited={
        "language": "the in_language check reads every text value of every stage",
        "audit-scope": "the audit's own prompt: measured by `check-answers --judge`, not audited by itself",
        "audit-any-wording": "the audit's own prompt: measured by `check-answers --judge`, not audited by itself",
        "emotions-what": "an emotion score is itself a model's reading, compared with annotators in `memsynth agreement`",
        "emotions-reader": "an emotion score is itself a model's reading, compared with annotators in `memsynth agreement`",
        "judges-consistent": "a judge's own answer (scenario_consistency, faithfulness): its flags are checked "
                             "against its score by code",
    },
    seed_validation=(
        "ENPMR-Bench (seed 000 §3.3, A.3): two annotators rated sampled dialogues' responses 0/1 on "
        "appropriateness, relevance and correctness: mean scores 0.80, 0.93 and 0.93, with 90 %, 95 % and 85 % "
        "agreement between the annotators. These are agreement rates of people, not error rates of the labels.",
    ),
)
