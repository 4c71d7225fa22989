"""longmem's rules (LongMemEval, ICLR 2025: ../shared/reference-data/longmemeval) and what
enforces each at build time. The gold rules hold by construction: the plan computes every
answer from structured facts, and a question whose haystack breaks a gold check (gold.py) is
dropped, tallied per check as `longmem.gold.<check>`."""

from __future__ import annotations

from memsynth.generation.rules import SHARED_RULES, Rule

REF = "LongMemEval README"
ISSUE = "issue 54 item 4"
GOLD = "issue 54 item 6"
# Why a rule of an evaluation prompt is left to it: the model answering is the one evaluated.
EVALUATED = "the prompt of the model under evaluation: how well it follows it is what the benchmark measures"
JUDGE_FACTS = "LongMemEval src/evaluation/evaluate_qa.py (per-type judge prompts)"
# No judge reads a session: a call per session (about 45 a haystack) would double a build.
NO_SESSION_JUDGE = "no judge reads the sessions (a call per session would double a build); the checks see the terms"

RULES = (
    # What code decides: the facts, the haystack and the gold.
    Rule("facts-structured", "per persona, an attribute set of structured facts (demographics, possessions, dated "
         "events, preferences, relationships); some change later, some are dated events, some are said by the "
         "assistant, some are preferences", ISSUE,
         built_in="flows/longmem/plan.py draws each persona's attributes and values from the language's catalog "
                  "(catalog_en.py, catalog_zh.py), seeded by the persona"),
    Rule("answers-computed", "every answer is computed from the structured facts (latest value, date arithmetic, "
         "counts across sessions), never asked of a model", ISSUE, built_in="flows/longmem/plan.py answer_of"),
    Rule("has-answer", "every answer session holds an evidence turn, marked has_answer: true", f"{REF}; {GOLD}",
         built_in="chain.marked marks the speaker's turns that name the value; gold.answer_sessions_hold_evidence "
                  "drops a question whose answer session has none"),
    Rule("filler-untouched", "no filler session mentions or contradicts an evidence attribute", GOLD,
         checks=("filler.avoids",),
         built_in="gold.filler_leaves_the_attribute_alone drops a question whose filler, or another fact's evidence "
                  "session in its haystack, names its terms or values"),
    Rule("update-latest", "a knowledge-update answer is the latest value, not an earlier one", GOLD,
         built_in="gold.update_answer_is_latest"),
    Rule("temporal-dates", "a temporal answer follows from the haystack dates", GOLD,
         built_in="gold.temporal_answer_follows_dates"),
    Rule("count-sessions", "a count answer is the number of answer sessions", GOLD,
         built_in="gold.count_matches_sessions"),
    Rule("abstention-nowhere", "an abstention (_abs) asks about an attribute that appears in no session", f"{REF}; {GOLD}",
         built_in="gold.abstention_attribute_appears_nowhere"),
    Rule("time-order", "a haystack's sessions are timestamped and in time order, the question dated after the last",
         f"{REF}; {ISSUE}", built_in="gold.sessions_in_time_order"),
    Rule("haystack-size", "an S-size haystack holds about 40-50 sessions (larger as an option): the question's "
         "evidence, other sessions of the user's (distractors), and filler", f"{REF}; {ISSUE}",
         built_in="flows/longmem/chain.py fills each haystack to the options' session count: the question's evidence, "
                  "the persona's other evidence sessions (distractor_share of the rest; LongMemEval S: about half), "
                  "then filler"),
    # The writer's prompts (prompts/longmem/_system, evidence, filler).
    Rule("session-role", "a session is a realistic user-assistant chat, one of an ongoing relationship, in which the "
         "person gets help with an everyday task", ISSUE, prompt_only=NO_SESSION_JUDGE),
    Rule("session-exchanges", "a session has exactly the asked number of exchanges, each a user message and the "
         "assistant's reply", "prompt", checks=("evidence.schema", "evidence.exchange_count", "filler.schema",
                                                "filler.exchange_count")),
    Rule("session-topic", "a session keeps to its task's topic", "prompt", prompt_only=NO_SESSION_JUDGE),
    Rule("reveal-value", "the evidence speaker's turn (the user's, or the assistant's for single-session-assistant) "
         "contains the fact's value", f"{REF}; {ISSUE}", checks=("evidence.reveals_fact",)),
    Rule("reveal-indirect", "the user reveals the fact in passing, as part of the task, never announced and never in "
         "the question's own words", ISSUE, checks=("evidence.reveals_fact",)),
    Rule("session-date", "a session may happen on its own date (\"today\"), never on another", "prompt",
         prompt_only="a session's own date is optional, and prose dates in a chat are not checked yet"),
    Rule("avoid-terms", "a session never mentions the terms it must avoid (other facts' attributes and values)",
         GOLD, checks=("evidence.avoids", "filler.avoids")),
    Rule("filler-nothing-new", "in a filler session the user reveals nothing new about their own life", GOLD,
         prompt_only=f"what is new about a life is open-ended; {NO_SESSION_JUDGE} it asks about (avoid-terms)"),
    # The evaluation prompts (prompts/longmem/eval_*).
    Rule("eval-memory", "the evaluated assistant answers in `answer` from the past sessions, and says so when they "
         "do not tell", REF, checks=("eval_respond.schema",), prompt_only=EVALUATED),
    Rule("judge-correct", "the judge sets `correct` true only when the response meets its question type's criterion",
         JUDGE_FACTS, checks=("eval_judge.schema",), judges=("eval_judge.correct",)),
    Rule("judge-abstention", "an abstention is correct when the response says the history does not hold it",
         JUDGE_FACTS, judges=("eval_judge.correct",)),
    Rule("judge-preference", "a preference question is correct when the response uses the user's preference "
         "sensibly, not necessarily every point", JUDGE_FACTS, judges=("eval_judge.correct",)),
    Rule("judge-update", "a knowledge-update response is correct when it answers the current value, an older one "
         "mentioned besides", JUDGE_FACTS, judges=("eval_judge.correct",)),
    Rule("judge-temporal", "a temporal response is correct when it reaches the answer or every step to it; a count "
         "of days, weeks or months off by one still counts", JUDGE_FACTS, judges=("eval_judge.correct",)),
    Rule("judge-answer", "any other response is correct when it states the answer, an equivalent, or every step to "
         "it; part of the answer is not correct", JUDGE_FACTS, judges=("eval_judge.correct",)),
    *SHARED_RULES,
)
