"""What an enpmr release holds: its Hugging Face configs, statistics and plots, and ENPMR-Bench files."""

from __future__ import annotations

from flows.enpmr.seed_format import EnpmrBenchFormat
from memsynth.release.spec import Plot, ReleaseSpec, View

# A memory with its life theme and its memory session, usable without any other table.
_MEMORIES = """
sessions AS (
    SELECT memory_id, list({'role': role, 'content': content} ORDER BY turn_index) AS turns
    FROM memory_sessions GROUP BY memory_id),
memory AS (
    SELECT m.memory_id, m.persona_id, m.date, m.category, m.theme_id, t.theme, m.name, m.text,
        m.attributes, s.turns AS session
    FROM memories m LEFT JOIN life_themes t USING (theme_id) LEFT JOIN sessions s USING (memory_id))"""
_MEMORY = ("{{'memory_id': {m}.memory_id, 'date': {m}.date, 'category': {m}.category, 'theme': {m}.theme, "
           "'name': {m}.name, 'text': {m}.text, 'attributes': {m}.attributes, 'session': {m}.session}}")

DIALOGUES = f"""
WITH {_MEMORIES},
negative_lists AS (
    SELECT n.dialogue_id, list({_MEMORY.format(m="x")} ORDER BY n.rank) AS negatives
    FROM negatives n JOIN memory x USING (memory_id) GROUP BY n.dialogue_id)
SELECT b.dialogue_id, b.persona_id, b.need, b.scene, b.turns, b.memory_turn,
    {_MEMORY.format(m="target")} AS target_memory, nl.negatives, b.blri_mean,
    {{'name': p.name, 'age': p.age, 'gender': p.gender, 'occupation': p.occupation, 'education': p.education,
      'personality': p.personality, 'habits': p.habits, 'social': p.social,
      'emotional_pattern': p.emotional_pattern, 'goals': p.goals,
      'communication_style': p.communication_style, 'preferences': p.preferences}} AS profile
FROM benchmark b JOIN memory target ON target.memory_id = b.target_memory_id
LEFT JOIN negative_lists nl USING (dialogue_id) JOIN profiles p ON p.persona_id = b.persona_id
"""

MEMORY_BANK = f"""
WITH {_MEMORIES}
SELECT persona_id, list({_MEMORY.format(m="memory")} ORDER BY memory.date, memory.memory_id) AS sessions
FROM memory GROUP BY persona_id
"""

PROFILES = """
SELECT p.*, pe.description AS persona,
    (SELECT list({'theme_id': t.theme_id, 'theme': t.theme, 'description': t.description,
                  'start_date': t.start_date} ORDER BY t.start_date, t.theme_id)
     FROM life_themes t WHERE t.persona_id = p.persona_id) AS life_themes
FROM profiles p LEFT JOIN personas pe USING (persona_id)
"""

PLOTS = (
    Plot("memories_per_category", "Memories per category",
         "SELECT category, count(*) FROM memories GROUP BY 1 ORDER BY 1", "category", "memories"),
    Plot("dialogues_per_need", "Dialogues per need",
         "SELECT need, count(*) FROM benchmark GROUP BY 1 ORDER BY 1", "need", "dialogues"),
    Plot("dialogues_per_target_category", "Dialogues per target memory category",
         "SELECT target_category, count(*) FROM benchmark GROUP BY 1 ORDER BY 1", "category", "dialogues"),
    Plot("turns_per_dialogue", "Turns per dialogue",
         "SELECT len(turns)::VARCHAR, count(*) FROM benchmark GROUP BY len(turns) ORDER BY len(turns)",
         "turns", "dialogues"),
    Plot("check_pass_rates", "Quality checks: share of dialogues passed (%)",
         "SELECT check_name, round(100 * avg(passed::INTEGER), 1) FROM quality_checks GROUP BY 1 ORDER BY 1",
         "check", "passed (%)"),
    Plot("blri_distribution", "BLRI mean score of scored dialogues (bins of 0.5)",
         "SELECT printf('%.1f', floor(score * 2) / 2), count(*) FROM quality_checks WHERE check_name = 'blri' "
         "GROUP BY floor(score * 2) ORDER BY floor(score * 2)", "BLRI mean", "dialogues"),
)

RELEASE = ReleaseSpec(
    pretty_name="ENPMR-style need-aware memory retrieval for emotional support",
    task_categories=("text-retrieval", "text-generation"),
    tags=("emotional-support", "memory-retrieval", "dialogue", "synthetic"),
    views=(
        View("dialogues", DIALOGUES, key="dialogue_id",
             description="a support dialogue with its need, the memory turn, the target memory and "
                         "its session, the negatives and theirs, and the user's profile"),
        View("memory_bank", MEMORY_BANK, key="persona_id",
             description="one persona's memories, each with its memory session, in date order"),
        View("profiles", PROFILES, key="persona_id",
             description="one persona's profile and life themes"),
    ),
    plots=PLOTS,
    intended_use=(
        "Evaluating need-aware proactive memory retrieval in emotional-support dialogue: given "
        "the dialogue up to the memory turn and the persona's memory bank, retrieve the target "
        "memory ahead of its negatives (Recall/Precision/nDCG@k), and judge the support reply."),
    limitations=(
        "Personas, memories and dialogues are written by a language model and filtered by "
        "model self-checks and a model-scored BLRI empathy scale; no human rated them. The "
        "people and events are fictional."),
    seed_format=EnpmrBenchFormat(),
)
