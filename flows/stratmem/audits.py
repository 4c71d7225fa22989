"""stratmem's audit judges: which rules each stage's answers are audited on by a model
(memsynth.generation.audit), beside the checks."""

from __future__ import annotations

from memsynth.generation.audit import AuditPlan

AUDITS = AuditPlan(
    # Every stage is audited on the rules its prompt lines name (memsynth.generation.audit),
    # but these, whose every clause a check reads:
    checked={
        "label-rationale": "sentences_labels_rationale counts each rationale's sentences",
        "miq-consistent": "miq_score_agrees reads the score against the failures listed",
        "miq-analysis": "sentences_analysis counts the analysis's sentences",
    },
    # Beyond its prompt lines: the labels judge the query as the type it was written for.
    stages={"label": ("query-given-type",)},
    gold=("label",),
    not_audited={
        "language": "the in_language check reads every text value of every stage",
        "audit-scope": "the audit's own prompt: measured by `check-answers --judge`, not audited by itself",
        "audit-any-wording": "the audit's own prompt: measured by `check-answers --judge`, not audited by itself",
        "emotions-what": "an emotion score is itself a model's reading, compared with annotators in `memsynth agreement`",
        "emotions-reader": "an emotion score is itself a model's reading, compared with annotators in `memsynth agreement`",
        "irrelevant-suppressed": "what the benchmark measures of a system's reply, in `memsynth eval`",
    },
    seed_validation=(
        "StratMem-Bench (seed 002 §3.4, App. E): three annotators labelled each memory's role with Fleiss' κ "
        "0.81 before their expert discussion. The κ 0.96 (§4) is Cohen's κ between the LLM memory-use evaluator "
        "and one expert on 1,130 memory-response pairs: it validates the evaluation judge, not the labels.",
    ),
)
