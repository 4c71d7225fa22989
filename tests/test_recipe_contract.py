"""The recipe contract: a recipe installed as a package alone builds; options are
resolved and hashed with their defaults; versions describe themselves; the engine imports
no recipe; docs/recipes.md's recipe tables match `memsynth recipes`."""

from __future__ import annotations

import ast
import json
import re
import textwrap
from pathlib import Path

import pytest
import yaml
from pydantic import create_model

from memsynth.core.errors import ConfigError
from memsynth.generation import registry
from memsynth.generation.provenance import artifact_hash
from memsynth.generation.registry import load_config
from memsynth.warehouse.catalog import run_query
from tests.conftest import ROOT, cli_json, cli_json_here, memsynth_cli

TOY = {
    "__init__.py": '''
        """A recipe kept outside the repository: a greeting per persona, and replies to it."""
        from pathlib import Path

        from pydantic import BaseModel, ConfigDict, Field

        from memsynth.generation.recipe import Recipe
        from memsynth.core.records import PERSONAS
        from memsynth.generation.stage import Stage, check
        from memsynth.core.tables import Ref, Table


        class ToyOptions(BaseModel):
            model_config = ConfigDict(extra="forbid")
            replies: int = Field(2, ge=1, description="replies written to each greeting")


        class Greeting(BaseModel):
            text: str
            words: int


        class Reply(BaseModel):
            text: str


        class GreetingRow(BaseModel):
            greeting_id: str
            persona_id: str
            text: str


        class ReplyRow(BaseModel):
            reply_id: str
            greeting_id: str
            text: str


        @check("word_count")
        def word_count(out, variables):
            if out.words != len(out.text.split()):
                yield f"words is {out.words}, but the text has {len(out.text.split())}"


        GREETINGS = Table("toy_greetings", GreetingRow, key="greeting_id")
        REPLIES = Table("toy_replies", ReplyRow, key="reply_id",
                        refs=(Ref("greeting_id", "toy_greetings", "greeting_id"),))
        GREETING = Stage("toy", "greeting", Greeting, checks=(word_count,))
        REPLY = Stage("toy", "reply", Reply)


        class ToyRecipe(Recipe):
            """Greetings, and replies to them."""

            name = "toy"
            options_model = ToyOptions
            stages = (GREETING, REPLY)
            tables = (PERSONAS, GREETINGS, REPLIES)
            statistics = {"replies_per_greeting":
                          "SELECT count(*) / (SELECT count(*) FROM toy_greetings) FROM toy_replies"}
            prompts_dir = Path(__file__).parent / "prompts"

            async def generate(self, ctx):
                pid = ctx.persona.persona_id
                ctx.emit(PERSONAS, [ctx.persona])
                greeting = await ctx.run(GREETING, {"persona": ctx.persona.description}, f"{pid}/greeting")
                if not greeting.usable:
                    return
                gid = f"{pid}-g"
                ctx.emit(GREETINGS, [GreetingRow(greeting_id=gid, persona_id=pid, text=greeting.output.text)])
                replies = await ctx.run_many(REPLY, [(f"{pid}/reply/{i}", {"greeting": greeting.output.text})
                                                     for i in range(self.options.replies)])
                ctx.emit(REPLIES, [ReplyRow(reply_id=f"{gid}-{i}", greeting_id=gid, text=r.output.text)
                                   for i, r in enumerate(replies) if r.usable])


        RECIPE = ToyRecipe
    ''',
    "simulated.py": '''
        from memsynth.simulator.answers import AnswerBook

        ANSWERS = AnswerBook("toy")


        @ANSWERS.stage("greeting")
        def greeting(draft, variables, text):
            draft["text"] = "hello there friend"
            # A persona called Wrong always gets a miscounted greeting: dropped, answer kept.
            draft["words"] = 4 if variables["persona"].startswith("Wrong") else 3
            return draft
    ''',
    "prompts/toy/greeting.j2": '''
        {% block system %}{% include "toy/_voice.j2" %}{% endblock %}
        {% block user %}Greet this person: {{ persona }}. Give the text and its word count.{% endblock %}
    ''',
    "prompts/toy/reply.j2": '''
        {% block system %}{% include "toy/_voice.j2" %}{% endblock %}
        {% block user %}Reply to: {{ greeting }}{% endblock %}
    ''',
    "prompts/toy/_voice.j2": '''
        You write short, warm messages. {% include "_language.j2" %}
    ''',
}


@pytest.fixture
def toy_package(tmp_path: Path) -> Path:
    """The toy recipe as a package `toy_recipe` under tmp_path/src."""
    root = tmp_path / "src"
    for name, text in TOY.items():
        path = root / "toy_recipe" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return root


def _wheel(source: Path, folder: Path) -> Path:
    """A wheel of the toy package, as a lab's build would make one: its files, and a dist-info
    whose entry_points.txt registers the recipe with memsynth."""
    import base64
    import hashlib
    import zipfile

    dist = "toy_recipe-0.1.dist-info"
    files = {str(p.relative_to(source)): p.read_bytes() for p in sorted(source.rglob("*")) if p.is_file()}
    files[f"{dist}/METADATA"] = b"Metadata-Version: 2.1\nName: toy-recipe\nVersion: 0.1\n"
    files[f"{dist}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    files[f"{dist}/entry_points.txt"] = b"[memsynth.recipes]\ntoy = toy_recipe\n"

    def record(data: bytes) -> str:
        return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()

    rows = [f"{name},{record(data)},{len(data)}" for name, data in files.items()] + [f"{dist}/RECORD,,"]
    files[f"{dist}/RECORD"] = ("\n".join(rows) + "\n").encode()
    wheel = folder / "toy_recipe-0.1-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return wheel


@pytest.fixture
def installed_toy(tmp_path: Path, toy_package: Path) -> Path:
    """The toy recipe `pip install`ed (offline, from its wheel) into a folder of its own."""
    import subprocess
    import sys

    site = tmp_path / "site"
    done = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps",
                           "--target", str(site), str(_wheel(toy_package, tmp_path))],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return site


def _toy_config(tmp_path: Path) -> Path:
    personas = tmp_path / "personas.jsonl"
    personas.write_text("".join(json.dumps({"persona": p}) + "\n" for p in
                                ["Ana, a baker in Porto", "Ben, a pilot in Leeds", "Wrong Cy, a clerk"]))
    config = tmp_path / "toy.yaml"
    config.write_text(yaml.safe_dump({
        "dataset": "toy", "recipe": "toy", "seed": 1,
        "personas": {"count": 3, "files": [str(personas)], "include_seed": False},
        "max_failure_rate": 0.5, "recipe_options": {"replies": 2},
    }))
    return config


def test_a_recipe_installed_with_pip_builds_on_the_simulator(tmp_path, installed_toy):
    """A lab's recipe in its own package: installed, it is found through its entry point."""
    env = {"PYTHONPATH": str(installed_toy)}
    assert "toy" not in memsynth_cli("recipes").stdout
    wh = str(tmp_path / "wh")
    summary = cli_json("build", str(_toy_config(tmp_path)), "--llm", "simulator", "--warehouse", wh,
                       "--format", "json", env=env)
    assert summary["row_counts"]["personas"] == 3
    assert summary["row_counts"]["toy_greetings"] == 2 and summary["row_counts"]["toy_replies"] == 4
    assert summary["statistics"] == {"replies_per_greeting": 2}
    greeting = summary["stages"]["toy.greeting"]
    assert {k: greeting[k] for k in ("items", "ok", "dropped", "runaways")} == {"items": 3, "ok": 2, "dropped": 1,
                                                                                "runaways": 0}

    # A dropped item's row shows the answer it was refused for, beside the problems.
    failures = cli_json("query", "SELECT item_key, problems, rejected_answer FROM stage_failures",
                        "--dataset", "toy", "--warehouse", wh, "--format", "json", env=env)
    assert len(failures) == 1 and failures[0]["problems"][-1].startswith("[word_count] words is 4")
    assert json.loads(failures[0]["rejected_answer"]) == {"text": "hello there friend", "words": 4}

    described = cli_json("recipes", "toy", "--format", "json", env=env)
    assert [s["name"] for s in described["stages"]] == ["greeting", "reply"]
    assert described["options"] == [{"name": "replies", "type": "int", "default": 2,
                                     "description": "replies written to each greeting"}]
    assert "toy" in memsynth_cli("recipes", env=env).stdout

    # The version describes itself: every template with its includes, every schema.
    shown = cli_json("versions", "toy", "--show", "1", "--warehouse", wh, "--format", "json", env=env)
    templates = {a["name"]: a["content"] for a in shown["artifacts"] if a["kind"] == "template"}
    assert set(templates) == {"toy/greeting.j2", "toy/reply.j2", "_repair.j2"}
    assert set(templates["toy/greeting.j2"]) == {"toy/greeting.j2", "toy/_voice.j2", "_language.j2"}
    assert templates["toy/reply.j2"]["toy/_voice.j2"].startswith("You write short")
    _assert_artifacts_match(shown)


def _assert_artifacts_match(shown: dict) -> None:
    """Each stored text hashes to what the version recorded for it."""
    assert shown["artifacts"] and all(a["content"] is not None for a in shown["artifacts"])
    for a in shown["artifacts"]:
        # As stored: a schema in plain ASCII JSON, the options and a template's files as UTF-8.
        content = json.dumps(a["content"], sort_keys=True, ensure_ascii=a["kind"] == "schema")
        assert artifact_hash(a["kind"], content) == a["hash"], a["name"]


def test_a_registered_recipe_is_known_to_configs_and_an_unknown_one_is_one_line(tmp_path, toy_package,
                                                                                 monkeypatch):
    monkeypatch.syspath_prepend(str(toy_package))
    monkeypatch.setattr(registry, "_added", {})  # known to this process only, and only in this test
    registry.register("toy", "toy_recipe")
    assert "toy" in registry.names()
    assert load_config(_toy_config(tmp_path)).recipe_options == {"replies": 2}
    (tmp_path / "bad.yaml").write_text("dataset: x\nrecipe: toy\nrecipe_options: {replies: 0}\n")
    with pytest.raises(ConfigError, match=r"recipe_options\.replies: Input should be greater than or equal to 1"):
        load_config(tmp_path / "bad.yaml")
    (tmp_path / "unknown.yaml").write_text("dataset: x\nrecipe: nope\n")
    with pytest.raises(ConfigError, match=r"recipe: unknown recipe 'nope' \(known: characters, enpmr, longmem, pal, stratmem, toy\)"):
        load_config(tmp_path / "unknown.yaml")
    with pytest.raises(ConfigError, match="lower-case"):
        registry.register("Toy Two", "toy_recipe")


def _another(value):
    """A value of the same kind as `value`, but different."""
    if isinstance(value, bool):
        return not value
    if value is None:  # an optional limit: any small one
        return 2
    if isinstance(value, str):
        return value + "x"
    if isinstance(value, (int, float)):
        return value + 1 if value < 1 or isinstance(value, int) else value / 2
    if isinstance(value, tuple | list):
        return type(value)(v + 1 for v in value)
    if isinstance(value, dict):
        first = next(iter(value))
        return {**value, first: _another(value[first])}
    raise AssertionError(f"no other value for {value!r}")


@pytest.mark.parametrize("name", [n for n in registry.names() if registry.recipe_class(n).buildable])
def test_changing_any_option_default_changes_the_config_hash(tmp_path, monkeypatch, name):
    path = tmp_path / "c.yaml"
    path.write_text(f"dataset: x\nrecipe: {name}\n")
    cls = registry.recipe_class(name)
    original = cls.options_model
    first = load_config(path)
    assert first.recipe_options == original().model_dump(mode="json")  # published resolved
    for field, info in original.model_fields.items():
        assert info.description, f"{name}.{field} has no description"
        default = original().model_dump()[field]
        changed = create_model(original.__name__, __base__=original,
                               **{field: (info.annotation, _another(default))})
        monkeypatch.setattr(cls, "options_model", changed)
        assert load_config(path).hash() != first.hash(), f"{name}.{field}"
        monkeypatch.setattr(cls, "options_model", original)
    assert load_config(path).hash() == first.hash()


def test_the_engine_imports_no_recipe():
    offenders = []
    for path in sorted((ROOT / "memsynth").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                modules = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                modules = [node.module or ""]
            else:
                continue
            offenders += [f"{path.relative_to(ROOT)}:{node.lineno} {m}" for m in modules
                          if m.split(".")[0] in ("flows", "schemas")]
    assert offenders == []
    assert not (ROOT / "schemas" / "records.py").exists()


def _readme_section(recipe: str) -> str:
    text = (ROOT / "docs" / "recipes.md").read_text(encoding="utf-8")
    start = text.index(f"## The {recipe} recipe")
    end = text.find("\n## ", start + 1)
    return text[start:end if end > 0 else None]


@pytest.mark.parametrize("name", ["enpmr", "pal"])
def test_the_readme_recipe_tables_match_memsynth_recipes(name):
    described = cli_json_here("recipes", name, "--format", "json")
    section = _readme_section(name)
    rows = section.split("| table | columns |")[1].split("\n\n")[0]
    listed = [t for t in re.findall(r"^\| `([a-z_]+)` \| ", rows, re.M) if t not in ("versions", "artifacts")]
    assert listed == [t["name"] for t in described["tables"]]
    block = re.search(r"`recipe_options` \(all optional\):\n\n```yaml\n(.*?)```", section, re.S).group(1)
    options = yaml.safe_load(block)["recipe_options"]
    assert options == {o["name"]: o["default"] for o in described["options"]}
    chain = re.findall(r"`([a-z_]+)`", section.split("| rule |")[0])
    for stage in described["stages"]:
        assert stage["name"] in chain, f"docs/recipes.md does not name {name}'s stage {stage['name']}"
    # Its templates are where the contract says.
    for stage in described["stages"]:
        assert (ROOT / "prompts" / stage["template"]).is_file()


def check_versions_show(wh: Path, dataset: str, version: int) -> None:
    """`versions --show` prints every template (with includes) and schema of an enpmr version,
    their hashes match, and each text is stored once however many versions use it."""
    shown = cli_json_here("versions", dataset, "--show", str(version), "--warehouse", str(wh), "--format", "json")
    cls = registry.recipe_class("enpmr")
    templates = {a["name"]: a["content"] for a in shown["artifacts"] if a["kind"] == "template"}
    # The audit judge's template is recorded like any stage's.
    assert set(templates) == {s.template for s in cls.all_stages()} | {"_repair.j2", "_audit.j2"}
    for files in templates.values():
        for file, text in files.items():
            assert text == (ROOT / "prompts" / file).read_text(encoding="utf-8")
    assert "_language.j2" in templates["enpmr/profile.j2"]
    schemas = {a["name"]: a["content"] for a in shown["artifacts"] if a["kind"] == "schema"}
    # The audit judges' answer models are recorded for the stages whose sample the build drew.

    audits = {s.schema_name: s.output.model_json_schema()
              for s in registry.audits("enpmr").values()}
    assert {n: v for n, v in schemas.items() if n not in audits} == {
        s.schema_name: s.output.model_json_schema() for s in cls.all_stages()}
    assert all(audits[n] == v for n, v in schemas.items() if n in audits)
    _assert_artifacts_match(shown)
    listed = cli_json_here("versions", dataset, "--warehouse", str(wh), "--format", "json")
    assert listed[version - 1]["prompt_hashes"] == {a["name"]: a["hash"] for a in shown["artifacts"]
                                                    if a["kind"] == "template"}
    counts = run_query(wh, dataset, "SELECT count(*), count(DISTINCT hash) FROM artifacts")[1][0]
    assert counts[0] == counts[1] == len(shown["artifacts"])

    text = memsynth_cli("versions", dataset, "--show", str(version), "--warehouse", str(wh))
    assert text.returncode == 0
    assert (ROOT / "prompts/enpmr/profile.j2").read_text(encoding="utf-8").splitlines()[1] in text.stdout
    assert "── file _language.j2" in text.stdout and "── schema enpmr_blri" in text.stdout


def test_a_version_records_the_snippets_its_calls_used(tmp_path):
    from memsynth.core.config import BuildConfig
    from memsynth.generation.prompts import PromptLibrary
    from memsynth.generation.provenance import version_artifacts

    recipe_cls = registry.recipe_class("pal")
    config = BuildConfig(dataset="x", recipe="pal", language="zh", llm={"response_mode": "json_object"})
    artifacts = version_artifacts(recipe_cls(config.recipe_options), PromptLibrary(), config)
    templates = {a.name: json.loads(a.content) for a in artifacts if a.kind == "template"}
    assert {"_repair.zh.j2", "_schema_hint.zh.j2", "pal/dialogue.zh.j2"} <= set(templates)
    assert "pal/_system.zh.j2" in templates["pal/dialogue.zh.j2"]  # an include, resolved
    options = [a for a in artifacts if a.kind == "options"]
    assert [json.loads(a.content) for a in options] == [config.recipe_options]


@pytest.mark.parametrize("name", ["enpmr", "pal", "stratmem", "longmem"])
def test_every_rule_names_an_enforcer_the_recipe_has_and_the_readme_lists_them(name):
    from memsynth.generation.emotions import SCORE
    from memsynth.generation.rules import rule_problems

    cls = registry.recipe_class(name)
    assert cls.rules, f"{name} declares no rules"
    emotions = (SCORE,) if cls.emotion_source else ()  # the table holds emotion annotation's rules too
    assert list(rule_problems(cls.rules, (*cls.all_stages(), *registry.evaluation_stages(name), *emotions))) == []
    described = cli_json_here("recipes", name, "--format", "json")["rules"]
    section = _readme_section(name)
    rows = re.findall(r"^\| `([a-z0-9-]+)` \| (.*?) \| (.*?) \| (.*?) \|$", section.split("| rule | what it asks |")[1],
                      re.M)
    assert [(r[0], r[2]) for r in rows] == [(r["id"], r["enforced_by"]) for r in described]


def test_rule_problems_says_what_a_rule_names_that_the_recipe_lacks():
    from flows.enpmr.stages import STAGES
    from memsynth.generation.rules import Rule, rule_problems

    bad = (Rule("a", "r", "s", checks=("scene.no_such_check",)), Rule("b", "r", "s", judges=("faithfulness.nope",)),
           Rule("c", "r", "s"), Rule("c", "r", "s", judges=("blri.scores",)))
    assert list(rule_problems(bad, STAGES)) == [
        "a: no check scene.no_such_check", "b: no judge criterion faithfulness.nope",
        "c: names no check, no judge criterion, no construction and no reason to leave it to the prompt",
        "c: the id is used twice"]


def test_a_rule_the_audit_judge_reads_says_so_and_is_not_called_the_prompt_s_alone():
    """Every rule of a recipe's audit plan is listed with the audit that reads it: on every
    item of a gold stage, else on a sample; a rule no check or judge reads but the audit is no
    longer 'prompt only'."""
    for name in ("enpmr", "pal", "stratmem"):
        rules = {r["id"]: r for r in cli_json_here("recipes", name, "--format", "json")["rules"]}
        for stage, ids in registry.audit_rules(name).items():
            for rule_id in ids:
                said = rules[rule_id]["enforced_by"]
                assert "audit judge on" in said and stage in rules[rule_id]["audited_in"], (name, rule_id, said)
                assert not said.startswith("prompt only"), (name, rule_id, said)
    enpmr = {r["id"]: r["enforced_by"] for r in cli_json_here("recipes", "enpmr", "--format", "json")["rules"]}
    assert enpmr["memory-in-theme"] == "audit judge on relationship, power, goal, highlight (a sample, quality.audit_rate)"
    assert enpmr["user-never-mentions"].endswith(
        "audit judge on support_dialogue (every item), faithfulness (a sample, quality.audit_rate)")
