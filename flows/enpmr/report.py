"""enpmr's figures for `memsynth report`, and the text its diversity section reads."""

from memsynth.generation.offers import Figure

# An unjudged dialogue (no usable answer) has score 0 and an error: not a BLRI mean.
BLRI_JUDGED = ("(SELECT score, passed FROM quality_checks "
               "WHERE check_name = 'blri' AND json_extract(details, '$.error') IS NULL) AS judged")

FIGURES = (
    Figure("Memories per category", "SELECT category, count(*) AS memories FROM memories GROUP BY 1 ORDER BY 1"),
    Figure("Dialogues per need", "SELECT need, count(*) AS dialogues FROM support_dialogues GROUP BY 1 ORDER BY 1"),
    Figure("Turns per support dialogue", "SELECT len(turns) FROM support_dialogues", "hist", "turns"),
    Figure("Turns per memory session", "SELECT count(*) FROM memory_sessions GROUP BY memory_id", "hist", "turns"),
    Figure("Check pass rate", "SELECT check_name, round(avg(passed::INT), 3) AS pass_rate FROM quality_checks "
           "GROUP BY 1 ORDER BY 1"),
    # Every judged dialogue, kept or not, so the chart shows what the threshold cuts.
    Figure("BLRI mean per judged dialogue", f"SELECT score FROM {BLRI_JUDGED}", "hist", "BLRI mean"),
    Figure("Share of judged dialogues a BLRI threshold keeps",
           "SELECT printf('%.1f', t) AS threshold, round(avg((score >= t)::INT), 3) AS kept "
           f"FROM {BLRI_JUDGED}, (VALUES (1.0), (1.5), (2.0), (2.5)) AS v(t) GROUP BY t ORDER BY t"),
)
# The dialogues' turns and the memories: what the model wrote, per persona.
TEXTS = ("SELECT persona_id, t.content FROM (SELECT persona_id, unnest(turns) AS t FROM support_dialogues) "
         "UNION ALL SELECT persona_id, text FROM memories")
# Who the personas are: age by decade, gender, occupation, education.
PERSONAS = ("SELECT persona_id, 'age', (age // 10 * 10)::VARCHAR || 's' FROM profiles "
            "UNION ALL SELECT persona_id, 'gender', lower(gender) FROM profiles "
            "UNION ALL SELECT persona_id, 'occupation', lower(occupation) FROM profiles "
            "UNION ALL SELECT persona_id, 'education', lower(education) FROM profiles")
