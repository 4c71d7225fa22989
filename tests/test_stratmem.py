"""stratmem: checks calibrated on StratMem-Bench's release, the importer and exporter against
the real file, and builds from LoCoMo and from an enpmr version on the simulator.

Reads ../shared/reference-data (or $MEMSYNTH_REFERENCE_DATA) in place; the tests that need
it skip with the reason when it is absent.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flows.stratmem import checks
from flows.stratmem.seed_format import FILE, TEST_FILE, StratMemFile, split_problems
from memsynth.warehouse.catalog import run_query
from schemas.stratmem import ExtractedMemories, MergedMemories, RoleLabels, UserQuery, VirtualPersona
from tests.conftest import ROOT, cli_here, cli_json_here, memsynth_cli, write_config

REFERENCE = Path(os.environ.get("MEMSYNTH_REFERENCE_DATA", ROOT.parent / "shared" / "reference-data"))
STRATMEM = REFERENCE / "stratmem" / "StratMemBench.json"
LOCOMO = REFERENCE / "locomo" / "locomo10.json"
needs_release = pytest.mark.skipif(not STRATMEM.is_file(), reason=f"StratMem-Bench release not found at {STRATMEM}")
needs_locomo = pytest.mark.skipif(not LOCOMO.is_file(), reason=f"LoCoMo release not found at {LOCOMO}")
THRESHOLD = 0.97


def _real() -> list[dict]:
    return json.loads(STRATMEM.read_text(encoding="utf-8"))


def _share(results: list[bool]) -> float:
    return sum(results) / len(results)


@needs_release
def test_the_checks_accept_the_real_facts_queries_and_personas():
    real = _real()
    v = {"language": "en"}
    facts = [not list(checks.fact_size_problems(f["fact"], v)) for i in real for r in i["memory"].values() for f in r]
    # dated_facts is its own check: 2.3 % of the release's facts say "recently" with no date.
    dated = [not list(checks.fact_date_problems(f["fact"], v)) for i in real for r in i["memory"].values() for f in r]
    queries = [not list(checks.a_question(UserQuery(query=i["query"], targets=[1]), v)) for i in real]
    from flows.stratmem.form_checks import (
        asks_the_character,
        one_question,
        persona_described,
        said_by_the_speaker,
        speaks_to_the_character,
    )
    from flows.stratmem.stages import PERSONA

    summary_sentences = next(c for c in PERSONA.checks if c.name == "sentences_summary")
    personas, described = [], []
    for i in real:
        p = dict(i["virtual_person_persona"])
        p["summary"] = " ".join(p["summary"]) if isinstance(p["summary"], list) else p["summary"]
        pv = {**v, "virtual_person": i["roles"]["virtual_person"]}
        personas.append(not list(checks.persona_fields(VirtualPersona(**p), pv))
                        and not list(summary_sentences(VirtualPersona(**p), pv)))
        described.append(not list(persona_described(VirtualPersona(**p), pv)))
    named = [not list(checks.names_the_person(ExtractedMemories(memories=[{"fact": f["fact"], "about": "x"}]), {
        **v, "speakers": list(i["roles"].values())})) for i in real for r in i["memory"].values() for f in r]
    unquoted = [not list(checks.does_not_quote_memories(UserQuery(query=i["query"], targets=[1]), {
        **v, **i["roles"], "memories": [{"number": n, "fact": f["fact"]} for n, f in enumerate(
            (f for r in i["memory"].values() for f in r), 1)]})) for i in real]
    to_character = [not list(speaks_to_the_character(UserQuery(query=i["query"], targets=[1]), {
        **v, "virtual_person": i["roles"]["virtual_person"], "human": i["roles"]["human"]})) for i in real]
    by_speaker = [not list(said_by_the_speaker(UserQuery(query=i["query"], targets=[1]), {**v, **i["roles"]}))
                  for i in real]
    one_asked = [not list(one_question(UserQuery(query=i["query"], targets=[1]), v)) for i in real]
    # The query's targets are the instance's must and nice memories, numbered first.
    the_right_way = [not list(asks_the_character(UserQuery(query=i["query"], targets=list(range(1, 1 + len(
        i["memory"]["must"] + i["memory"]["nice"])))), {**v, **i["roles"], "memories": [
        {"number": n, "fact": f["fact"]} for n, f in enumerate(i["memory"]["must"] + i["memory"]["nice"], 1)]}))
        for i in real]
    # aims_at_its_targets: the pool numbered must, nice, then irr; the targets must and nice.
    from flows.stratmem.pool_checks import aims_at_its_targets

    aimed = [not list(aims_at_its_targets(UserQuery(query=i["query"], targets=list(range(1, 1 + len(
        i["memory"]["must"] + i["memory"]["nice"])))), {**v, **i["roles"], "history": [i["history"]] if isinstance(
        i["history"], str) else i["history"], "memories": [{"number": n, "fact": f["fact"]} for n, f in enumerate(
        i["memory"]["must"] + i["memory"]["nice"] + i["memory"]["irr"], 1)]}))
        for i in real if i["memory"]["must"] + i["memory"]["nice"]]
    shares = {"facts": _share(facts), "queries aimed at their targets": _share(aimed), "facts dated": _share(dated), "queries": _share(queries),
              "personas": _share(personas), "personas described": _share(described),
              "queries by their speaker": _share(by_speaker),
              "facts naming their person": _share(named), "queries quoting no memory": _share(unquoted),
              "queries said to the character": _share(to_character), "queries asking one question": _share(one_asked),
              "queries asking the character": _share(the_right_way)}
    print(f"accepted: {shares}")
    assert len(facts) == 5778 and all(s >= THRESHOLD for s in shares.values()), shares


@needs_release
@needs_locomo
def test_every_released_persona_states_only_what_its_conversation_says():
    from flows.stratmem.form_checks import domains_of_the_character, short_traits
    from flows.stratmem.source import read_locomo

    conversations = {frozenset(c.speakers): c for c in read_locomo(LOCOMO)}
    accepted, own_domains, short = [], [], []
    for i in _real():
        conversation = conversations[frozenset(i["roles"].values())]
        p = dict(i["virtual_person_persona"])
        p["summary"] = " ".join(p["summary"]) if isinstance(p["summary"], list) else p["summary"]
        sessions = [{"time": str(s.at), "notes": list(s.notes), "lines": [t for _, t in s.turns]}
                    for s in conversation.sessions]
        v = {"language": "en", "sessions": sessions, **i["roles"]}
        accepted.append(not list(checks.persona_from_sessions(VirtualPersona(**p), v)))
        short.append(not list(short_traits(VirtualPersona(**p), v)))
        # The character's own lines, as the chain sends them (flows/stratmem/chain.py).
        mine = [{**s, "lines": [t for who, t in c.turns if who == i["roles"]["virtual_person"]]}
                for s, c in zip(sessions, conversation.sessions)]
        own_domains.append(not list(domains_of_the_character(VirtualPersona(**p), {**v, "sessions": mine})))
    shares = {"from the sessions": _share(accepted), "short traits": _share(short),
              "the character's domains": _share(own_domains)}
    print(f"accepted: {shares}")
    assert len(accepted) == 657 and all(s >= THRESHOLD for s in shares.values()), shares


def test_each_check_catches_its_violation():
    v = {"language": "en"}
    assert list(checks.fact_problems("Tomas ran his longest run yesterday.", v))
    assert not list(checks.fact_problems("Tomas ran his longest run on 2024-03-10.", v))
    assert list(checks.fact_problems("Ran.", v))
    assert list(checks.fact_problems("林悦昨天领养了一只短毛灰猫。", {"language": "zh"}))
    assert not list(checks.fact_problems("林悦在2024-04-01领养了一只短毛灰猫。", {"language": "zh"}))
    assert list(checks.a_question(UserQuery(query="Tell me about", targets=[1]), v))
    candidates = {"candidates": [{"number": n} for n in (1, 2, 3)], **v}
    lost = MergedMemories(memories=[{"fact": "Mira adopted a cat named Pebble.", "sources": [1, 2]}])
    assert any("candidates [3]" in p for p in checks.covers_candidates(lost, candidates))
    twice = MergedMemories(memories=[{"fact": "a b c", "sources": [1, 2]}, {"fact": "a b d", "sources": [2, 3]}])
    assert any("more than one" in p for p in checks.covers_candidates(twice, candidates))
    memories = {"memories": [{"number": n} for n in (1, 2)], **v}
    assert list(checks.valid_targets(UserQuery(query="?", targets=[3]), memories))
    short = RoleLabels(labels=[{"index": 1, "role": "must", "rationale": "x"}])
    assert list(checks.labels_every_memory(short, memories))
    thin = VirtualPersona(virtual_person_name="Nate", summary="s", traits=["a"], style=["a"] * 5,
                          domains=["a"] * 5, values=["a"] * 5)
    problems = list(checks.persona_fields(thin, {**v, "virtual_person": "Joanna"}))
    assert any("virtual_person_name" in p for p in problems) and any("traits has 1" in p for p in problems)


@needs_release
def test_importing_the_real_release_reproduces_its_figures_and_exports_it_unchanged(tmp_path):
    wh = str(tmp_path / "wh")
    summary = cli_json_here("import", "stratmem", str(STRATMEM), "--dataset", "real", "--warehouse", wh, "--format", "json")
    s = summary["statistics"]
    assert (s["instances"], s["type_A"], s["type_B"], s["type_C"]) == (657, 50, 132, 475)
    assert s["memories_per_instance"] == 8.79
    assert (s["must_facts"], s["nice_facts"], s["irr_facts"]) == (620, 1958, 3200)

    out = tmp_path / "out"
    code, _, err = cli_here("release", "create", "--dataset", "real", "--tag", "v1.0.0", "--out", str(out),
                            "--warehouse", wh)
    assert code == 0, err
    folder = out / "real-v1.0.0" / "stratmem-bench" / "test"
    assert json.loads((folder / FILE).read_text(encoding="utf-8")) == _real()
    assert (folder / FILE).read_text(encoding="utf-8").count("\n") > 0
    test = json.loads((folder / TEST_FILE).read_text(encoding="utf-8"))
    assert not list(split_problems(_real(), test))
    assert [min(2, len(i["memory"]["nice"])) for i in _real()] == [len(i["memory"]["nice"]) for i in test]
    code, out_text, err = cli_here("release", "verify", str(out / "real-v1.0.0"))
    assert code == 0, out_text + err


def test_a_file_that_is_not_stratmem_bench_is_one_line(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"id": "x", "given_type": "D"}]))
    result = memsynth_cli("import", "stratmem", str(bad), "--dataset", "d", "--warehouse", str(tmp_path / "wh"))
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines() == [result.stderr.strip()]
    assert "is not a StratMem-Bench file: 0.given_type" in result.stderr


def _key_paths(value, path: str = "") -> set[tuple[str, str]]:
    """Every (key path, JSON type) in a JSON value; list items share the path `[]`."""
    if isinstance(value, dict):
        return {(path, "object")} | {p for k, v in value.items() for p in _key_paths(v, f"{path}.{k}")}
    if isinstance(value, list):
        return {(path, "array")} | {p for v in value for p in _key_paths(v, f"{path}[]")}
    return {(path, type(value).__name__)}


@needs_locomo
@needs_release
def test_a_build_from_locomo_yields_every_type_from_every_window_with_older_memories(tmp_path):
    config = write_config(tmp_path / "c.yaml", dataset="sm", recipe="stratmem", personas={"count": 10},
                          recipe_options={"source": f"locomo:{LOCOMO}", "max_sessions": 8})
    wh = str(tmp_path / "wh")
    summary = cli_json_here("build", str(config), "--llm", "simulator", "--warehouse", wh, "--no-progress",
                            "--format", "json")
    assert summary["failed_items"] == 0 and 0 < summary["statistics"]["fleiss_kappa"] <= 1

    def rows(sql: str) -> list[tuple]:
        return run_query(Path(wh), "sm", sql)[1]

    assert rows("SELECT DISTINCT window_size FROM stratmem_instances ORDER BY 1") == [(1,), (2,), (3,)]
    assert rows("SELECT DISTINCT inferred_type FROM stratmem_instances ORDER BY 1") == [("A",), ("B",), ("C",)]
    # Instances whose query turned out to need something else keep both types, as the release does.
    assert rows("SELECT count(*) FROM stratmem_instances WHERE given_type <> inferred_type")[0][0] > 0
    # The inferred type is what the final roles say.
    assert rows("""SELECT count(*) FROM stratmem_instances i JOIN (SELECT instance_id,
                       bool_or(role = 'must') m, bool_or(role = 'nice') n FROM stratmem_memories GROUP BY 1) r
                   USING (instance_id)
                   WHERE inferred_type <> CASE WHEN m AND n THEN 'C' WHEN m THEN 'A' ELSE 'B' END""") == [(0,)]
    # Every memory is strictly older than the history and the query.
    assert rows("""SELECT count(*) FROM stratmem_memories m JOIN stratmem_instances i USING (instance_id)
                   WHERE m.session_at >= i.query_at OR m.session_index >= i.history_session
                      OR m.session_index < i.first_session""") == [(0,)]
    assert rows("SELECT count(*) FROM stratmem_instances WHERE history_session <> first_session + window_size") \
        == [(0,)]
    # A labeller's vote is one of three, and the role is the majority.
    assert rows("""SELECT count(*) FROM stratmem_memories WHERE len(votes) <> 3
                   OR len(list_filter(votes, x -> x = role)) < 2""") == [(0,)]
    # The test split: at most two nice memories per instance, all of them when there are two or fewer.
    assert rows("""SELECT count(*) FROM (SELECT instance_id, count(*) FILTER (WHERE role = 'nice') n,
                       count(*) FILTER (WHERE role = 'nice' AND in_test_split) k,
                       count(*) FILTER (WHERE role <> 'nice' AND NOT in_test_split) lost
                   FROM stratmem_memories GROUP BY 1) WHERE k <> least(n, 2) OR lost > 0""") == [(0,)]

    out = tmp_path / "out"
    code, _, err = cli_here("release", "create", "--dataset", "sm", "--tag", "v1.0.0", "--out", str(out),
                            "--warehouse", wh, "--accept-violation-rate")  # its few labels prove no error rate
    assert code == 0, err
    folder = out / "sm-v1.0.0" / "stratmem-bench" / "test"
    ours = json.loads((folder / FILE).read_text(encoding="utf-8"))
    StratMemFile.model_validate(ours)
    # Key for key the real file's structure (the real summaries are a string or a list).
    assert _key_paths(ours) <= _key_paths(_real())
    assert {p for p, _ in _key_paths(ours)} == {p for p, _ in _key_paths(_real())} - {
        "[].virtual_person_persona.summary[]"}  # ours are always a paragraph
    assert not list(split_problems(ours, json.loads((folder / TEST_FILE).read_text(encoding="utf-8"))))
    history = next(json.loads(i["history"]) for i in ours if i["history"])
    assert all(": " in line for line in history)


def test_a_build_from_an_enpmr_version_yields_instances(tmp_path):
    wh = str(tmp_path / "wh")
    cli_json_here("build", str(ROOT / "configs/quickstart.yaml"), "--llm", "simulator", "--warehouse", wh,
                  "--personas", "1", "--no-progress", "--format", "json")
    config = write_config(tmp_path / "c.yaml", dataset="from-qs", recipe="stratmem", personas={"count": 1},
                          recipe_options={"source": "dataset:quickstart@1", "max_sessions": 5})
    summary = cli_json_here("build", str(config), "--llm", "simulator", "--warehouse", wh, "--no-progress",
                            "--format", "json")
    assert summary["row_counts"]["stratmem_instances"] > 0
    name = run_query(Path(wh), "quickstart", "SELECT name FROM profiles")[1][0][0]
    pid = run_query(Path(wh), "quickstart", "SELECT persona_id FROM profiles")[1][0][0]
    assert run_query(Path(wh), "from-qs", "SELECT DISTINCT human, virtual_person, persona_id FROM "
                                          "stratmem_instances")[1] == [(name, "Assistant", f"quickstart/{pid}")]

    # A dataset is one recipe's: importing StratMem-Bench items into the enpmr one is refused.
    one = tmp_path / "one.json"
    one.write_text(json.dumps([{
        "id": "locomo_0000000001", "given_type": "A", "inferred_type": "A", "query": "Where do you live now?",
        "query_time": "1:14 pm on 25 May, 2023", "history": "", "roles": {"human": "Ann", "virtual_person": "Bo"},
        "memory": {"must": [{"fact": "Bo moved to Lisbon in 2023-04."}], "nice": [], "irr": []},
        "virtual_person_persona": {"virtual_person_name": "Bo", "summary": "s", "traits": ["t"], "style": ["s"],
                                   "domains": ["d"], "values": ["v"]}}]))
    refused = memsynth_cli("import", "stratmem", str(one), "--dataset", "quickstart", "--warehouse", wh)
    assert refused.returncode == 1 and refused.stderr.strip().splitlines() == [
        "error: dataset quickstart holds enpmr versions; a stratmem version cannot be published into it "
        "(choose another dataset name); nothing was published"], refused.stderr
    assert cli_json_here("versions", "quickstart", "--warehouse", wh, "--format", "json")[0]["recipe"] == "enpmr"
    assert cli_json_here("import", "stratmem", str(one), "--dataset", "one", "--warehouse", wh,
                         "--format", "json")["statistics"]["type_A"] == 1

    for source, needle in (("dataset:nope", "nope"), ("locomo:missing.json", "missing.json does not exist")):
        bad = write_config(tmp_path / "bad.yaml", dataset="bad", recipe="stratmem", personas={"count": 1},
                           recipe_options={"source": source})
        result = memsynth_cli("build", str(bad), "--llm", "simulator", "--warehouse", wh, "--no-progress")
        assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
        assert len(result.stderr.strip().splitlines()) == 1 and needle in result.stderr, result.stderr


@needs_release
def test_every_real_query_time_reads_as_a_time_for_zh_prompts():
    from flows.stratmem.source import parse_locomo_time, spoken_time

    times = [item["query_time"] for item in json.loads(STRATMEM.read_text(encoding="utf-8"))]
    assert all(parse_locomo_time(t) is not None for t in times)
    assert parse_locomo_time("12:05 am on 1 May, 2023").hour == 0
    assert spoken_time(None, "7:40 pm on 17 March, 2024", "zh") == "2024年3月17日 19:40"
    assert spoken_time(None, "7:40 pm on 17 March, 2024", "en") == "7:40 pm on 17 March, 2024"


@pytest.mark.parametrize(("summary", "said", "flagged"), [
    ("Melanie, a mother of two, loves camping.", "my kids love camping", "two"),  # held-out r4
    ("Melanie, a mother of two, loves camping.", "my two kids love camping", None),
    ("She often paints at dawn.", "i paint a lot", None),  # "ten" is not in "often"
    ("She runs twice a week.", "i run a lot", "twice"),
    ("陈静是两个孩子的妈妈，喜欢跑步。", "我家孩子都爱跑步", "两个"),
    ("陈静是两个孩子的妈妈，喜欢跑步。", "我的两个孩子都爱跑步", None),
])
def test_a_persona_states_no_number_in_words_its_sessions_lack(summary, said, flagged):
    persona = VirtualPersona(virtual_person_name="Melanie", summary=summary, traits=["warm"] * 6, style=["brief"] * 5,
                             domains=["family"] * 4,
                             values=["care"])
    problems = list(checks.persona_from_sessions(persona, {
        "language": "zh" if "陈" in summary else "en", "sessions": [{"lines": [said]}],
        "human": "Caroline", "virtual_person": "Melanie"}))
    assert (problems != []) is (flagged is not None), problems
    if flagged:
        assert flagged in problems[0]


@given(st.lists(st.one_of(st.text(st.characters(), max_size=12), st.sampled_from(
    ["两个", "three", "ＴＷＯ", "😀", "\u202e", "\x00", "\ud800", "十二岁", " Portland "])), max_size=10).map("".join))
def test_any_summary_is_read_for_numbers_without_a_crash(summary):
    """Any Unicode (CJK, full-width, emoji, RTL, NUL, lone surrogates): a verdict, never a crash;
    a summary that only repeats the sessions' own text states nothing new."""
    # Constructed, not parsed: the schema refuses a lone surrogate first; the check must not crash on one.
    persona = VirtualPersona.model_construct(virtual_person_name="Melanie", summary=summary, traits=["warm"],
                                             style=["brief"], domains=["family"], values=["care"])
    v = {"language": "en", "sessions": [{"lines": [summary]}], "human": "Caroline", "virtual_person": "Melanie"}
    assert list(checks.persona_from_sessions(persona, v)) == []
