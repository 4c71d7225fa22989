"""pal in `memsynth review`: a session's logs and dialogue rated 1–3 as PAL-Set's annotators
did (sessions drawn per user, as the seed drew 10 sessions from each of 5 users)."""

from __future__ import annotations

from memsynth.generation.offers import Item, Query, Question, ReviewTask, Rows, Text, Turns

RATINGS = ("1", "2", "3")  # 1 does not match what was set out, 2 basically matches, 3 fully matches
CRITERIA = ("logs", "dialogue")
WORDS = {
    "en": {
        "logs": "Do the logs reflect the key events of the experience? (1 no · 2 basically · 3 fully)",
        "dialogue": "Do the user's words agree with the profile, requirements and preferences? "
                    "(1 contradict · 2 basically · 3 fully)",
        "profile": "Profile", "wants": "Requirements and preferences in this situation",
        "experience": "Experience ({month})", "log": "Logs", "topics": "Topics", "turns": "Dialogue",
    },
    "zh": {
        "logs": "日志是否反映了这段经历中的关键事件？（1 不符合 · 2 基本符合 · 3 完全符合）",
        "dialogue": "用户的话语是否与其画像、需求和偏好一致？（1 有矛盾 · 2 基本一致 · 3 完全一致）",
        "profile": "用户画像", "wants": "此情境涉及的需求与偏好", "experience": "经历（{month}）",
        "log": "日志", "topics": "话题", "turns": "对话",
    },
}


def show_session(query: Query, situation_id: str, language: str = "en") -> Item:
    """The profile, requirements and preferences, the experience, its logs and its dialogue."""
    s = query("SELECT * FROM situations WHERE situation_id = ?", situation_id)[0]
    profile = query("SELECT * EXCLUDE (persona_id) FROM pal_profiles WHERE persona_id = ?", s["persona_id"])
    wants = query("SELECT r.aspect, r.description AS requirement, p.pos AS likes, p.neg AS dislikes "
                  "FROM requirement_types r LEFT JOIN preferences p USING (persona_id, requirement_id) "
                  "WHERE r.persona_id = ? AND list_contains(?, r.requirement_id) ORDER BY r.requirement_id",
                  s["persona_id"], s["requirement_ids"])
    experience = query("SELECT text FROM experiences WHERE situation_id = ?", situation_id)
    logs = query("SELECT strftime(timestamp, '%Y-%m-%d %H:%M') AS time, log_type AS type, event, content "
                 "FROM logs WHERE situation_id = ? ORDER BY timestamp, log_id", situation_id)
    topics = query("SELECT user_query, requirement FROM topics WHERE situation_id = ? ORDER BY topic_id", situation_id)
    turns = query("SELECT speaker, action, content FROM dialogue_turns WHERE situation_id = ? ORDER BY turn_index",
                  situation_id)
    w = WORDS.get(language, WORDS["en"])
    return Item(
        item_id=situation_id, stratum=s["persona_id"],
        sections=(
            Rows(w["profile"], tuple(profile)),
            Rows(w["wants"], tuple(wants)),
            Text(w["experience"].format(month=s["month"]), experience[0]["text"] if experience else s["text"]),
            Rows(w["log"], tuple(logs)),
            Rows(w["topics"], tuple(topics)),
            Turns(w["turns"], tuple((f"{t['speaker']} · {t['action']}", t["content"]) for t in turns)),
        ),
        questions=tuple(Question(situation_id, name, w[name], RATINGS) for name in CRITERIA),
    )


TASKS = (
    ReviewTask("sessions", "sessions with a dialogue, drawn evenly from every user",
               "SELECT situation_id AS item_id, persona_id AS stratum FROM situations WHERE has_dialogue",
               show_session, criteria=CRITERIA),
)
