"""pal's audit judges: the rules each writer stage's answers are audited on by a model
(memsynth.generation.audit), beside the checks and review judges."""

from __future__ import annotations

from memsynth.generation.audit import AuditPlan

AUDITS = AuditPlan(
    stages={
        "preferences": ("preferences-personal",),
        "situations": ("personality-out-of-situations",),
        "experience": ("personality-out-of-situations", "experience-ends"),
        "requirements": ("vague-query", "needs-on-topic"),
        "candidates": ("candidates",),
        # Gold: the liked and disliked solutions are the benchmark's preference labels.
        "solution_preferences": ("choices-follow-preferences", "choices-verbatim"),
        "dialogue": ("dialogue-skeleton", "direct-rejection", "response-adds-nothing", "preferences-hidden"),
    },
    gold=("solution_preferences",),
    not_audited={
        "eval-restatement-grade": "an evaluation stage: runs in `memsynth eval`, not in a build",
    },
    seed_validation=(
        "PAL-Bench (seed 004 §5): the LLM-based evaluation agreed with human evaluation at Fleiss' κ 0.54 "
        "(requirement) and 0.62 (preference), ties removed. The paper reports no validation of the synthesized "
        "liked/disliked labels themselves.",
    ),
)
