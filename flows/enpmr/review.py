"""enpmr in `memsynth review`: a released dialogue judged on the seed's three criteria, and
the LLM's own verdicts on the same criteria for `memsynth agreement`."""

from __future__ import annotations

from flows.enpmr.options import NEEDS
from memsynth.generation.offers import Item, Query, Question, ReviewTask, Rows, Text, Turns

YES_NO = ("yes", "no")
# The seed's human evaluation: two annotators, 0/1 per criterion.
CRITERIA = ("appropriateness", "relevance", "correctness")
WORDS = {
    "en": {
        "appropriateness": "Is the memory turn suitable in tone, style and content for this dialogue?",
        "relevance": "Does the recalled memory fit what the user is going through?",
        "correctness": "Is the target memory a better fit here than every negative below?",
        "scene": "Scene — unmet need: {need} ({code})", "dialogue": "Dialogue (the memory turn is marked)",
        "profile": "Profile", "target": "Target memory", "session": "The session the target memory comes from",
        "negatives": "Negatives (memories that should not be recalled here)",
        "person": "{name}, {age}, {gender}; {occupation}; {education}. Personality: {personality}. "
                  "Emotional pattern: {emotional_pattern}.", "sep": ", ",
    },
    "zh": {
        "appropriateness": "记忆轮次的语气、风格和内容是否适合这段对话？",
        "relevance": "被唤起的记忆是否贴合用户此刻的处境？",
        "correctness": "在这里，目标记忆是否比下面每一条负例记忆都更合适？",
        "scene": "场景——未被满足的需求：{need}（{code}）", "dialogue": "对话（已标出唤起记忆的一轮）",
        "profile": "用户画像", "target": "目标记忆", "session": "目标记忆所在的会话",
        "negatives": "负例（此处不应唤起的记忆）",
        "person": "{name}，{age}岁，{gender}；{occupation}；{education}。性格：{personality}。情绪模式：{emotional_pattern}。",
        "sep": "、",
    },
}


def show_dialogue(query: Query, dialogue_id: str, language: str = "en") -> Item:
    """The scene, the dialogue with its memory turn marked, the profile, the target memory
    with the session it came from, and the negatives."""
    d = query("SELECT * FROM benchmark WHERE dialogue_id = ?", dialogue_id)[0]
    p = query("SELECT * FROM profiles WHERE persona_id = ?", d["persona_id"])
    target = query("SELECT category, date, name, text FROM memories WHERE memory_id = ?", d["target_memory_id"])
    session = query("SELECT role, content FROM memory_sessions WHERE memory_id = ? ORDER BY turn_index",
                    d["target_memory_id"])
    negatives = query("SELECT n.rank, m.category, m.date, m.name, m.text FROM negatives n "
                      "JOIN memories m USING (memory_id) WHERE n.dialogue_id = ? ORDER BY n.rank", dialogue_id)
    w = WORDS.get(language, WORDS["en"])
    need = NEEDS.get(language, NEEDS["en"]).get(d["need"], (d["need"], ""))[0]
    profile = ""
    if p:
        p = p[0]
        profile = w["person"].format(**{**p, "personality": w["sep"].join(p["personality"]),
                                        "emotional_pattern": w["sep"].join(p["emotional_pattern"])})
    return Item(
        item_id=dialogue_id, stratum=d["need"],
        sections=(
            Text(w["scene"].format(need=need, code=d["need"]), d["scene"]),
            Turns(w["dialogue"], tuple((t["role"], t["content"]) for t in d["turns"]), highlight=d["memory_turn"] - 1),
            Text(w["profile"], profile),
            Rows(w["target"], tuple(target)),
            Turns(w["session"], tuple((t["role"], t["content"]) for t in session)),
            Rows(w["negatives"], tuple(negatives)),
        ),
        questions=tuple(Question(dialogue_id, name, w[name], YES_NO) for name in CRITERIA),
    )


TASKS = (
    ReviewTask("dialogues", "released support dialogues, stratified by unmet need",
               "SELECT dialogue_id AS item_id, need AS stratum FROM benchmark", show_dialogue, criteria=CRITERIA),
)

# The LLM's verdict on each criterion, from the build's own judges: the BLRI empathy check
# for appropriateness (tone and manner toward the user), the scenario check's "the target
# fits" for relevance, and its "no negative fits as well" for correctness.
JUDGE_LABELS = (
    "SELECT dialogue_id, 'appropriateness', CASE WHEN passed THEN 'yes' ELSE 'no' END "
    "FROM quality_checks WHERE check_name = 'blri' AND json_extract_string(details, 'items') IS NOT NULL "
    "UNION ALL SELECT dialogue_id, 'relevance', CASE WHEN json_extract_string(details, 'fits_target') = 'true' THEN 'yes' ELSE 'no' END "
    "FROM quality_checks WHERE check_name = 'scenario_consistency' AND json_extract_string(details, 'fits_target') IS NOT NULL "
    "UNION ALL SELECT dialogue_id, 'correctness', "
    "CASE WHEN json_extract_string(details, 'fits_a_negative') = 'false' THEN 'yes' ELSE 'no' END "
    "FROM quality_checks WHERE check_name = 'scenario_consistency' AND json_extract_string(details, 'fits_a_negative') IS NOT NULL"
)
