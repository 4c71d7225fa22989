"""pal's audit judges: the rules each writer stage's answers are audited on by a model
(memsynth.generation.audit), beside the checks and review judges."""

from __future__ import annotations

from memsynth.generation.audit import AuditPlan

AUDITS = AuditPlan(
    stages={
        "preferences": ("preferences-personal",),
        "situations": ("personality-out-of-situations",),
        "experience": ("personality-out-of-situations", "experience-ends", "experience-objective"),
        "logs": ("log-realism",),
        "requirements": ("vague-query", "needs-on-topic"),
        "candidates": ("candidates",),
        # Gold: the liked and disliked solutions are the benchmark's preference labels.
        "solution_preferences": ("choices-follow-preferences", "choices-verbatim"),
        "dialogue": ("dialogue-skeleton", "direct-rejection", "response-adds-nothing", "preferences-hidden",
                     "dialogue-flow"),
    },
    gold=("solution_preferences",),
    not_audited={
        "profile-example": "the profile is the context of the chain, and the example it must differ from is fixed "
                           "text: a copied name or field is checked (unlike_the_example), a batch's own variety too "
                           "(varied_batch)",
        "preference-analysis": "the analysis is the model's reasoning before its answer, kept in no benchmark table",
        "eval-assistant": "the prompt of the model under evaluation, in `memsynth eval`",
        "language": "a shared rule of every prompt: a judge call per stage for the language of short values would "
                    "cost more than it finds; the prompt carries it",
        "audit-scope": "the audit's own prompt: measured by `check-answers --judge`, not audited by itself",
        "audit-any-wording": "the audit's own prompt: measured by `check-answers --judge`, not audited by itself",
        "emotions-what": "an emotion score is itself a model's reading, compared with annotators in `memsynth agreement`",
        "emotions-reader": "an emotion score is itself a model's reading, compared with annotators in `memsynth agreement`",
        "eval-restatement-grade": "an evaluation stage: runs in `memsynth eval`, not in a build",
    },
    seed_validation=(
        "PAL-Bench (seed 004 §5): the LLM-based evaluation agreed with human evaluation at Fleiss' κ 0.54 "
        "(requirement) and 0.62 (preference), ties removed. The paper reports no validation of the synthesized "
        "liked/disliked labels themselves.",
    ),
)
