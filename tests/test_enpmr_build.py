"""A quickstart build through the real CLI, then every enpmr rule confirmed with SQL."""

from __future__ import annotations

import json

import pytest

from memsynth.warehouse.catalog import run_query

# One worker runs the whole module, so its module fixture (builds) is made once, not once per worker.
pytestmark = pytest.mark.xdist_group("enpmr_build")

WINDOW = ("DATE '2019-12-02'", "DATE '2024-12-02'")


@pytest.fixture
def quickstart(quickstart_build):
    return quickstart_build  # the session's (tests/conftest.py): test_cli builds on a copy of it


def sql(warehouse, query):
    return run_query(warehouse, "quickstart", query)[1]


def test_every_table_is_filled(quickstart):
    warehouse, summary = quickstart
    for table in ("personas", "profiles", "life_themes", "memories", "memory_sessions",
                  "support_dialogues", "negatives", "quality_checks", "benchmark", "llm_calls"):
        assert summary["row_counts"][table] > 0, table
    assert summary["personas"] == 3
    assert set(summary["checks"]) == {"scenario_consistency", "faithfulness", "blri"}
    assert summary["stages"]["enpmr.memory_session"]["items"] == summary["row_counts"]["memories"]


RULES = {
    "memory categories are the five kinds": """
        SELECT count(*) FROM memories
        WHERE category NOT IN ('relationship', 'power', 'goal', 'highlight', 'preference')""",
    "theme_id is null exactly for preferences": """
        SELECT count(*) FROM memories WHERE (theme_id IS NULL) <> (category = 'preference')""",
    "memory dates lie in the five-year window": f"""
        SELECT count(*) FROM memories WHERE date < {WINDOW[0]} OR date > {WINDOW[1]}""",
    "memories do not predate their theme": """
        SELECT count(*) FROM memories m JOIN life_themes t USING (theme_id) WHERE m.date < t.start_date""",
    "every theme has >= 4 relationships with good and bad": """
        SELECT count(*) FROM (SELECT theme_id, count(*) n,
               count(*) FILTER (WHERE json_extract_string(attributes, '$.relationship_quality') = 'good') g,
               count(*) FILTER (WHERE json_extract_string(attributes, '$.relationship_quality') = 'bad') b
            FROM memories WHERE category = 'relationship' GROUP BY 1) WHERE n < 4 OR g = 0 OR b = 0""",
    "every theme has >= 6 powers, >= 4 proficient and >= 2 not": """
        SELECT count(*) FROM (SELECT theme_id, count(*) n,
               count(*) FILTER (WHERE json_extract_string(attributes, '$.performance') = 'proficient') p
            FROM memories WHERE category = 'power' GROUP BY 1) WHERE n < 6 OR p < 4 OR n - p < 2""",
    "every theme has >= 3 goals, >= 2 achieved, the last not achieved": """
        SELECT count(*) FROM (SELECT theme_id, count(*) n,
               count(*) FILTER (WHERE json_extract_string(attributes, '$.status') = 'achieved') a,
               arg_max(json_extract_string(attributes, '$.status'), memory_id) last_status
            FROM memories WHERE category = 'goal' GROUP BY 1)
        WHERE n < 3 OR a < 2 OR last_status <> 'not achieved'""",
    "powers and goals are in date order": """
        SELECT count(*) FROM (SELECT date < lag(date) OVER (PARTITION BY theme_id, category ORDER BY memory_id) bad
            FROM memories WHERE category IN ('power', 'goal')) WHERE bad""",
    "every theme has >= 6 highlights": """
        SELECT count(*) FROM (SELECT theme_id, count(*) n FROM memories
            WHERE category = 'highlight' GROUP BY 1) WHERE n < 6""",
    "every persona has >= 10 preferences": """
        SELECT count(*) FROM (SELECT p.persona_id, count(m.memory_id) n FROM personas p
            LEFT JOIN memories m ON m.persona_id = p.persona_id AND m.category = 'preference' GROUP BY 1)
        WHERE n < 10""",
    "every persona has >= 10 life themes in the window": f"""
        SELECT count(*) FROM (SELECT persona_id, count(*) n,
               count(*) FILTER (WHERE start_date < {WINDOW[0]} OR start_date > {WINDOW[1]}) bad
            FROM life_themes GROUP BY 1) WHERE n < 10 OR bad > 0""",
    "every memory has a 10-20 turn session": """
        SELECT count(*) FROM memories m LEFT JOIN (SELECT memory_id, count(*) n FROM memory_sessions GROUP BY 1) s
            USING (memory_id) WHERE coalesce(n, 0) NOT BETWEEN 10 AND 20""",
    "session turns alternate user/ai from the user": """
        SELECT count(*) FROM memory_sessions
        WHERE role <> CASE WHEN turn_index % 2 = 0 THEN 'user' ELSE 'ai' END""",
    "needs are PN, LB, EN, SA": """
        SELECT count(*) FROM support_dialogues WHERE need NOT IN ('PN', 'LB', 'EN', 'SA')""",
    "the target fits the need (LB and EN only from good relationships)": """
        SELECT count(*) FROM support_dialogues d JOIN memories m ON m.memory_id = d.target_memory_id
        WHERE NOT (d.need = 'PN' AND m.category = 'preference'
                OR d.need = 'LB' AND m.category = 'relationship'
                   AND json_extract_string(m.attributes, '$.relationship_quality') = 'good'
                OR d.need = 'EN' AND (m.category = 'highlight' OR m.category = 'relationship'
                   AND json_extract_string(m.attributes, '$.relationship_quality') = 'good')
                OR d.need = 'SA' AND m.category IN ('goal', 'power', 'highlight'))""",
    "dialogues have 2-6 turns, alternating, memory turn an AI turn": """
        SELECT count(*) FROM support_dialogues
        WHERE len(turns) NOT BETWEEN 2 AND 6 OR memory_turn NOT BETWEEN 1 AND len(turns)
           OR turns[memory_turn].role <> 'ai' OR turns[1].role <> 'user'""",
    "negatives share theme and category with the target and are not it": """
        SELECT count(*) FROM negatives n JOIN support_dialogues d USING (dialogue_id)
        JOIN memories t ON t.memory_id = d.target_memory_id JOIN memories m ON m.memory_id = n.memory_id
        WHERE m.memory_id = t.memory_id OR m.category <> t.category
           OR m.theme_id IS DISTINCT FROM t.theme_id""",
    "every dialogue has 2-3 negatives": """
        SELECT count(*) FROM support_dialogues d
        LEFT JOIN (SELECT dialogue_id, count(*) n FROM negatives GROUP BY 1) USING (dialogue_id)
        WHERE coalesce(n, 0) NOT BETWEEN 2 AND 3""",
    "the benchmark's negatives are the dialogue's, 2-3 of them": """
        SELECT count(*) FROM benchmark b WHERE len(negative_memory_ids) NOT BETWEEN 2 AND 3
           OR list_sort(negative_memory_ids) <> (SELECT list_sort(list(memory_id)) FROM negatives n
                                                 WHERE n.dialogue_id = b.dialogue_id)""",
    "three checks per dialogue, BLRI with 12 items": """
        SELECT count(*) FROM support_dialogues d
        LEFT JOIN (SELECT dialogue_id, count(DISTINCT check_name) c,
                          max(json_array_length(details, '$.items')) FILTER (WHERE check_name = 'blri') items
                   FROM quality_checks GROUP BY 1) USING (dialogue_id)
        WHERE coalesce(c, 0) <> 3 OR coalesce(items, 0) <> 12""",
    "benchmark holds exactly the dialogues that passed all checks": """
        SELECT count(*) FROM (
            (SELECT dialogue_id FROM quality_checks GROUP BY 1 HAVING bool_and(passed)
             EXCEPT SELECT dialogue_id FROM benchmark)
            UNION ALL
            (SELECT dialogue_id FROM benchmark
             EXCEPT SELECT dialogue_id FROM quality_checks GROUP BY 1 HAVING bool_and(passed)))""",
}


@pytest.mark.parametrize("rule", list(RULES))
def test_rule_holds_in_sql(quickstart, rule):
    warehouse, _ = quickstart
    assert sql(warehouse, RULES[rule]) == [(0,)], rule


def test_rules_would_catch_a_violation(quickstart):
    """The SQL above is not vacuous: a looser condition finds rows that exist."""
    warehouse, _ = quickstart
    assert sql(warehouse, "SELECT count(*) FROM memories WHERE category = 'preference'")[0][0] >= 30
    assert sql(warehouse, "SELECT count(*) FROM negatives")[0][0] > 0
    blri = sql(warehouse, "SELECT details FROM quality_checks WHERE check_name = 'blri' LIMIT 1")[0][0]
    assert len(json.loads(blri)["items"]) == 12 and json.loads(blri)["negative_items"] == [2, 5, 6, 8, 10, 11]
    history = sql(warehouse, """
        SELECT count(*) FROM (SELECT m.persona_id, s.turn_index FROM memory_sessions s
        JOIN memories m USING (memory_id) ORDER BY m.date, m.memory_id, s.turn_index)""")
    assert history[0][0] == sql(warehouse, "SELECT count(*) FROM memory_sessions")[0][0]
