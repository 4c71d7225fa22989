"""What a pal release holds: its Hugging Face configs, statistics and plots, and PAL-Set files."""

from __future__ import annotations

import pyarrow as pa

from flows.pal.seed_format import ACTION_NAMES, PalSetFormat
from memsynth.release.spec import Omission, Plot, ReleaseSpec, View


def _lookups(language: str) -> dict[str, pa.Table]:
    labels = ACTION_NAMES.get(language, ACTION_NAMES["en"])
    return {"action_labels": pa.table({"action": list(labels), "label": list(labels.values())})}


# PAL-Set user ids are 4-digit strings made from the persona's ordinal in the build, so
# growing a build keeps every earlier user's id (and its sample ids).
_USERS = """
users AS (
    SELECT persona_id, CASE WHEN ordinal > 9999
        THEN error('PAL-Set user ids have 4 digits: a pal release holds at most 10,000 users')
        ELSE lpad(ordinal::VARCHAR, 4, '0') END AS user_id
    FROM release_personas)"""

SAMPLES = f"""
WITH {_USERS},
turn_pairs AS (
    SELECT t.situation_id, t.turn_index,
        {{'action': any_value(l.label) FILTER (WHERE t.speaker = 'user'),
          'content': any_value(t.content) FILTER (WHERE t.speaker = 'user')}} AS "user",
        {{'action': any_value(l.label) FILTER (WHERE t.speaker = 'assistant'),
          'content': any_value(t.content) FILTER (WHERE t.speaker = 'assistant')}} AS assistant
    FROM dialogue_turns t JOIN action_labels l USING (action)
    GROUP BY ALL),
dialogues AS (
    SELECT situation_id, list({{'turn': 'turn_' || n, 'user': "user", 'assistant': assistant}} ORDER BY n) AS dialogue
    FROM (SELECT *, row_number() OVER (PARTITION BY situation_id ORDER BY turn_index) AS n FROM turn_pairs)
    GROUP BY situation_id),
candidates AS (
    SELECT topic_id,
        list({{'solution': solution, 'feedback': feedback}} ORDER BY candidate_index) AS candidate_solutions,
        coalesce(list(solution ORDER BY candidate_index) FILTER (WHERE feedback = 'pos'), []) AS pos,
        coalesce(list(solution ORDER BY candidate_index) FILTER (WHERE feedback = 'neg'), []) AS neg
    FROM candidate_solutions GROUP BY topic_id),
topic_lists AS (
    SELECT situation_id, list({{'topic': 'topic-' || n, 'requirement_id': requirement_id,
        'user_query': user_query, 'implicit_needs': [x.need FOR x IN implicit_needs],
        'requirement': requirement, 'solution': {{'pos': pos, 'neg': neg}},
        'candidate_solutions': candidate_solutions}} ORDER BY n) AS topics
    FROM (SELECT t.*, c.candidate_solutions, c.pos, c.neg,
                 row_number() OVER (PARTITION BY t.situation_id ORDER BY t.topic_id) AS n
          FROM topics t JOIN candidates c USING (topic_id))
    GROUP BY situation_id),
-- A session counts only with its dialogue and topics (one that lost a topic has none).
sessions AS (
    SELECT s.*, u.user_id, d.dialogue, tl.topics,
        row_number() OVER (PARTITION BY s.persona_id ORDER BY s.split = 'query', s.end_time, s.situation_id) - 1 AS i,
        lag(s.end_time) OVER (PARTITION BY s.persona_id ORDER BY s.split = 'query', s.end_time, s.situation_id) AS previous
    FROM situations s JOIN users u USING (persona_id)
    JOIN dialogues d USING (situation_id) JOIN topic_lists tl USING (situation_id)
    WHERE s.has_dialogue),
-- Each sample's logs: every log after the previous dialogue, up to this one.
windows AS (
    SELECT x.situation_id AS sample_situation, l.timestamp, l.log_id, l.content
    FROM sessions x JOIN situations s ON s.persona_id = x.persona_id
        AND s.end_time <= x.end_time AND (x.previous IS NULL OR s.end_time > x.previous)
    JOIN logs l ON l.situation_id = s.situation_id),
log_lists AS (
    SELECT sample_situation AS situation_id,
        list({{'timestamp': strftime(timestamp, '%Y-%m-%d %H:%M'), 'content': content}} ORDER BY timestamp, log_id) AS logs
    FROM windows GROUP BY ALL)
SELECT x.user_id || '_sample' || x.i AS sample_id, x.user_id, x.persona_id, x.split AS sample_type,
    x.situation_id, strftime(x.end_time, '%Y-%m-%d %H:%M:%S') AS dialogue_timestamp,
    coalesce(ll.logs, []) AS logs, x.dialogue, x.topics, x.text AS situation, e.text AS experience
FROM sessions x LEFT JOIN log_lists ll USING (situation_id) LEFT JOIN experiences e USING (situation_id)
"""

PROFILES = f"""
WITH {_USERS}
SELECT u.user_id, p.persona_id, p.name, p.gender, p.age, p.occupation, p.health_status,
    p.family_members, p.hobbies,
    {{'Openness': p.openness, 'Conscientiousness': p.conscientiousness, 'Extraversion': p.extraversion,
      'Agreeableness': p.agreeableness, 'Neuroticism': p.neuroticism}} AS personality
FROM pal_profiles p JOIN users u USING (persona_id)
"""

PREFERENCES = f"""
WITH {_USERS}
SELECT u.user_id || '/' || r.requirement_id AS preference_id, u.user_id, r.persona_id, r.aspect,
    r.requirement_id, r.description AS requirement, p.pos, p.neg, p.analysis
FROM requirement_types r JOIN users u USING (persona_id)
JOIN preferences p ON p.persona_id = r.persona_id AND p.requirement_id = r.requirement_id
"""

# The `sessions` rule of SAMPLES: a log is left out when its situation ends after the
# user's last session that kept its dialogue and topics.
_LOGS_LEFT_OUT = """
WITH last AS (
    SELECT persona_id, max(end_time) AS end_time FROM situations
    WHERE has_dialogue AND situation_id IN (SELECT situation_id FROM dialogue_turns)
        AND situation_id IN (SELECT situation_id FROM topics)
    GROUP BY persona_id)
SELECT count(*) FILTER (WHERE last.end_time IS NULL OR s.end_time > last.end_time), count(*)
FROM logs l JOIN situations s USING (situation_id) LEFT JOIN last ON last.persona_id = s.persona_id
"""

PLOTS = (
    Plot("sessions_per_user", "Dialogue sessions per user",
         "SELECT n::VARCHAR, count(*) FROM (SELECT persona_id, count(*) n FROM situations "
         "WHERE has_dialogue GROUP BY 1) GROUP BY n ORDER BY n", "sessions", "users"),
    Plot("turns_per_user", "Dialogue turns per user (bins of 25)",
         "SELECT (b * 25)::VARCHAR || '-' || (b * 25 + 24)::VARCHAR, count(*) FROM (SELECT s.persona_id, "
         "count(DISTINCT (t.situation_id, t.turn_index)) // 25 b FROM dialogue_turns t JOIN situations s "
         "USING (situation_id) GROUP BY 1) GROUP BY b ORDER BY b", "turns", "users"),
    Plot("logs_per_session", "Logs per dialogue session (bins of 10)",
         "SELECT (b * 10)::VARCHAR || '-' || (b * 10 + 9)::VARCHAR, count(*) FROM (SELECT session_id, "
         "count(*) // 10 b FROM logs WHERE session_id IS NOT NULL GROUP BY 1) GROUP BY b ORDER BY b",
         "logs", "sessions"),
    Plot("topics_per_dialogue", "Topics per dialogue",
         "SELECT n::VARCHAR, count(*) FROM (SELECT situation_id, count(*) n FROM topics GROUP BY 1) "
         "GROUP BY n ORDER BY n", "topics", "dialogues"),
    Plot("feedback_split", "Candidate solutions by feedback",
         "SELECT feedback, count(*) FROM candidate_solutions GROUP BY 1 ORDER BY 1", "feedback", "candidates"),
)

RELEASE = ReleaseSpec(
    pretty_name="PAL-style personalized assistant dialogues with user logs",
    task_categories=("text-generation", "text-retrieval"),
    tags=("personalization", "dialogue", "memory", "synthetic"),
    views=(
        View("samples", SAMPLES, key="sample_id", order="user_id, dialogue_timestamp",
             description="one row per dialogue session: its logs window, the dialogue and its topics "
                         "(needs, requirement, 8 rated candidate solutions)"),
        View("profiles", PROFILES, key="user_id", description="each user's profile with Big Five levels"),
        View("preferences", PREFERENCES, key="preference_id",
             description="each user's requirement types with liked and disliked solution styles"),
    ),
    plots=PLOTS,
    intended_use=(
        "Evaluating personalized assistants that read a user's device logs and past dialogues: "
        "requirement prediction from history, and choosing solutions the user would like "
        "(the query samples hold the gold feedback of 8 candidates per topic)."),
    limitations=(
        "Every user, log and dialogue is written by a language model from a sampled profile; "
        "the users are not real people and their logs are not real device traces. Feedback "
        "labels follow the generated preferences, not human judgement."),
    seed_format=PalSetFormat(),
    seed_split=("PAL-Set's own split is kept inside each user: sessions before the last month are "
                "`history`, the last month's are `query` (the `sample_type` column, and the "
                "`history` / `query` lists of the PAL-Set files)."),
    lookups=_lookups,
    omissions=(Omission(
        "logs", _LOGS_LEFT_OUT,
        "written after the user's last dialogue, so no sample's window holds them. A sample holds "
        "the logs since the previous dialogue, up to its own, as the PAL authors' post-processing "
        "does; their files drop these logs the same way. The source version's `logs` table keeps "
        "them."),),
)
