"""pal's audit judges: which rules each stage's answers are audited on by a model
(memsynth.generation.audit), beside the checks and review judges."""

from __future__ import annotations

from memsynth.generation.audit import AuditPlan

AUDITS = AuditPlan(
    # Every stage is audited on the rules its prompt lines name (memsynth.generation.audit),
    # but these, whose every clause a check reads:
    checked={
        "speaks-to-user": "speaks_to_the_user reads every assistant turn for 'the user' / 用户",
    },
    # Beyond their prompt lines: a situation or experience tells what happens, not who the user is.
    stages={"situations": ("personality-out-of-situations",), "experience": ("personality-out-of-situations",)},
    gold=("solution_preferences",),
    not_audited={
        "language": "the in_language check reads every text value of every stage",
        "audit-scope": "the audit's own prompt: measured by `check-answers --judge`, not audited by itself",
        "audit-any-wording": "the audit's own prompt: measured by `check-answers --judge`, not audited by itself",
        "emotions-what": "an emotion score is itself a model's reading, compared with annotators in `memsynth agreement`",
        "emotions-reader": "an emotion score is itself a model's reading, compared with annotators in `memsynth agreement`",
    },
    seed_validation=(
        "PAL-Bench (seed 004 §5): the LLM-based evaluation agreed with human evaluation at Fleiss' κ 0.54 "
        "(requirement) and 0.62 (preference), ties removed. The paper reports no validation of the synthesized "
        "liked/disliked labels themselves.",
    ),
)
