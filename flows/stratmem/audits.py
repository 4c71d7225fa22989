"""stratmem's audit judges: the rules each writer stage's answers are audited on by a model
(memsynth.generation.audit), beside the checks."""

from __future__ import annotations

from memsynth.generation.audit import AuditPlan

AUDITS = AuditPlan(
    stages={
        "extract": ("fact-speakers", "fact-names-person", "fact-grounded"),
        "merge": ("merge-keeps-all",),
        "query": ("query-given-type", "query-no-quote"),
        "persona": ("persona-from-sessions",),
        # Gold: each labeller's must / nice / irr roles (the benchmark keeps their majority).
        "label": ("roles", "query-given-type"),
    },
    gold=("label",),
    not_audited={
        "eval-in-character": "the prompt of the model under evaluation, in `memsynth eval`",
        "language": "a shared rule of every prompt: a judge call per stage for the language of short values would "
                    "cost more than it finds; the prompt carries it",
        "audit-scope": "the audit's own prompt: measured by `check-answers --judge`, not audited by itself",
        "audit-any-wording": "the audit's own prompt: measured by `check-answers --judge`, not audited by itself",
        "emotions-what": "an emotion score is itself a model's reading, compared with annotators in `memsynth agreement`",
        "emotions-reader": "an emotion score is itself a model's reading, compared with annotators in `memsynth agreement`",
        "irrelevant-suppressed": "what the benchmark measures of a system's reply, in `memsynth eval`",
        "eval-miq": "an evaluation stage: runs in `memsynth eval`, not in a build",
    },
    seed_validation=(
        "StratMem-Bench (seed 002 §3.4, App. E): three annotators labelled each memory's role with Fleiss' κ "
        "0.81 before their expert discussion. The κ 0.96 (§4) is Cohen's κ between the LLM memory-use evaluator "
        "and one expert on 1,130 memory-response pairs: it validates the evaluation judge, not the labels.",
    ),
)
