"""pal's figures for `memsynth report`, and the text its diversity section reads."""

from memsynth.generation.offers import Figure

FIGURES = (
    Figure("Situations per persona", "SELECT count(*) FROM situations GROUP BY persona_id", "hist", "situations"),
    Figure("Logs per situation", "SELECT count(*) FROM logs GROUP BY situation_id", "hist", "logs"),
    Figure("Logs per type", "SELECT log_type, count(*) AS logs FROM logs GROUP BY 1 ORDER BY 1"),
    Figure("Turns per dialogue session", "SELECT count(*) FROM dialogue_turns GROUP BY situation_id", "hist", "turns"),
    Figure("Dialogue actions", "SELECT speaker || ' ' || action, count(*) AS turns FROM dialogue_turns "
           "GROUP BY 1 ORDER BY 1"),
)
TEXTS = ("SELECT s.persona_id, d.content FROM dialogue_turns d JOIN situations s USING (situation_id) "
         "UNION ALL SELECT persona_id, content FROM logs")
# Who the personas are: age by decade, gender, occupation, and the Big Five levels.
PERSONAS = ("SELECT persona_id, 'age', (age // 10 * 10)::VARCHAR || 's' FROM pal_profiles UNION ALL "
            "SELECT persona_id, attribute, lower(value) FROM (UNPIVOT (SELECT persona_id, gender, occupation, "
            "openness, conscientiousness, extraversion, agreeableness, neuroticism FROM pal_profiles) "
            "ON COLUMNS(* EXCLUDE (persona_id)) INTO NAME attribute VALUE value)")
