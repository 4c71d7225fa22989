"""What a longmem release holds: questions, sessions, facts, and LongMemEval's own JSON."""

from __future__ import annotations

from flows.longmem.seed_format import LongMemEvalFormat
from memsynth.release.spec import Plot, ReleaseSpec, View

RELEASE = ReleaseSpec(
    pretty_name="LongMemEval-style long-term memory: questions over timestamped user-assistant histories",
    task_categories=("question-answering", "text-generation"),
    tags=("memory", "long-context", "dialogue", "synthetic"),
    views=(
        View("questions", "SELECT question_id, persona_id, question_type, question, answer, question_date, "
                          "haystack_session_ids, answer_session_ids, haystack_tokens FROM longmem_questions",
             key="question_id", description="one row per question: its type, gold answer (computed from the "
             "persona's facts), date, haystack and evidence sessions (ids ending in _abs: abstention)"),
        View("sessions", "SELECT session_id, persona_id, date, kind, fact_id, turns_json FROM longmem_sessions",
             key="session_id", order="persona_id, date, session_id",
             description="one row per chat session: its time, evidence or filler, and its turns as JSON "
                         "(evidence turns carry has_answer)"),
        View("facts", "SELECT fact_id, persona_id, key, kind, attribute, values, dates, speaker, session_ids "
                      "FROM longmem_facts", key="fact_id",
             description="the structured facts the answers are computed from"),
    ),
    plots=(
        Plot("types", "Questions by type", "SELECT question_type, count(*) FROM longmem_questions GROUP BY 1 "
             "ORDER BY 1", "type", "questions"),
        Plot("haystacks", "Sessions per haystack", "SELECT len(haystack_session_ids)::VARCHAR, count(*) "
             "FROM longmem_questions GROUP BY 1 ORDER BY 1", "sessions", "questions"),
    ),
    intended_use=(
        "Evaluating chat assistants' long-term memory: feed a question's timestamped haystack, ask the question "
        "at its date, and judge the reply with LongMemEval's evaluate_qa.py or `memsynth eval longmem`."),
    limitations=(
        "Facts are drawn from a small per-language catalog (3-5 attributes of each kind), so personas share "
        "some attributes and values; sessions are written "
        "by a language model and checked by code (the value is revealed by the right speaker, filler avoids "
        "every evidence term), not read by people."),
    seed_format=LongMemEvalFormat(),
)
