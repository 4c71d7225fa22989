"""Rules are the prompts' own lines: every instruction line of every template names its rules
(`{# rule: id, id #}` at the start of the line), every id is in the recipe's rules table, and
the en and zh templates of a stage name the same ids with the same numbers.

What counts as an instruction line (memsynth.generation.rules.prompt_lines; docs/recipes.md,
"Rules are the prompts' own lines"): a line of a template's rendered part (its blocks, or
the whole of a partial) that holds words of its own once its Jinja tags are taken out, and
that is none of these:
- a row of a `{% for %}` loop (data, one line per item);
- a data line: marked `{# data #}` and showing a variable ("Stated need: {{ need_name }}");
- a label: its words end with a colon, are at most 60 characters wide (a CJK character counts
  two), and hold no number, no backtick and no sentence before the colon ("Other memories:").
So a rule id marks every sentence that asks the model for something, every bullet of a field
description, every judge criterion and every system line.

Numbers of a line (memsynth.generation.rules.line_numbers): its digits, its number words from
"two" / 两 up ("one" / 一 are left out: zh writes 一 for "a"), and the variables it shows.
Where zh counts characters and en words, the zh number is the en one translated by the very
constants the checks use (WORD_LIMITS below).
"""

from __future__ import annotations

import pytest

from memsynth.generation.prompts import DEFAULT_PROMPTS_DIR, PromptLibrary
from memsynth.generation.rules import (
    EMOTION_RULES,
    SHARED_RULES,
    Rule,
    line_numbers,
    prompt_lines,
    rule_problems,
)
from memsynth.generation.stage import localized
from tests.golden import golden_stages

TEMPLATES = sorted(p.relative_to(DEFAULT_PROMPTS_DIR).as_posix() for p in DEFAULT_PROMPTS_DIR.rglob("*.j2"))
SNIPPETS = ("_language.j2", "_repair.j2", "_schema_hint.j2")


def word_limits() -> dict[str, dict[str, str]]:
    """Per rule id, an en number -> the zh number for the same limit (words -> characters)."""
    from flows.enpmr.options import RECALL_LIMIT, REPLY_LIMIT
    from flows.pal.checks import QUERY_LIMIT
    from flows.stratmem.checks import FACT_CHARS_ZH, FACT_WORDS, QUERY_CHARS_ZH, QUERY_WORDS

    def pairs(en, zh) -> dict[str, str]:
        return {str(a): str(b) for a, b in zip(en, zh, strict=True)}

    return {"eval-reply": pairs([REPLY_LIMIT["en"]], [REPLY_LIMIT["zh"]]),
            "recall-length": pairs([RECALL_LIMIT["en"]], [RECALL_LIMIT["zh"]]),
            "vague-query": pairs([QUERY_LIMIT["en"]], [QUERY_LIMIT["zh"]]),
            "fact-form": pairs(FACT_WORDS, FACT_CHARS_ZH),
            "query-form": pairs(QUERY_WORDS, QUERY_CHARS_ZH)}


def table_for(template: str) -> tuple[Rule, ...]:
    """The rules table a template's ids must be in: its recipe's; emotions' and the shared
    snippets' for theirs (every recipe's table holds those too)."""
    from memsynth.generation.registry import names, recipe_class

    group = template.split("/")[0]
    if group in names():
        return recipe_class(group).rules
    return (*SHARED_RULES, *EMOTION_RULES) if group == "emotions" else SHARED_RULES


def _source(template: str) -> str:
    return (DEFAULT_PROMPTS_DIR / template).read_text(encoding="utf-8")


@pytest.mark.parametrize("template", TEMPLATES)
def test_every_instruction_line_names_its_rules(template):
    untagged = [f"{template}:{line.number}: {line.text.strip()[:80]}" for line in prompt_lines(_source(template))
                if line.kind == "instruction" and not line.ids]
    assert untagged == [], "add `{# rule: <id> #}` at the start of each line (see this module's docstring)"


@pytest.mark.parametrize("template", TEMPLATES)
def test_every_id_in_a_template_is_in_its_rules_table(template):
    known = {r.id for r in table_for(template)}
    unknown = [f"{template}:{line.number}: {i}" for line in prompt_lines(_source(template)) for i in line.ids
               if i not in known]
    assert unknown == []


def stage_pairs() -> list[tuple[str, str]]:
    """(en, zh) template names: every prompted stage's, and the shared snippets'."""
    stages = {s.template for group in golden_stages().values() for s in group}
    return [(t, localized(t, "zh")) for t in sorted(stages | set(SNIPPETS))]


def rule_lines(library: PromptLibrary, template: str) -> dict[str, list[tuple[tuple[str, ...], str]]]:
    """Rule id -> (ids, text) of the lines (of the template and every template it includes) naming it."""
    out: dict[str, list[tuple[tuple[str, ...], str]]] = {}
    for source in library.files(template).values():
        for line in prompt_lines(source):
            for i in line.ids:
                out.setdefault(i, []).append((line.ids, line.text))
    return out


def translated(limits: dict[str, dict[str, str]], ids: tuple[str, ...], number: str) -> str:
    """An en number as zh writes it on a line naming `ids` (a word limit becomes characters)."""
    return next((limits[i][number] for i in ids if number in limits.get(i, {})), number)


@pytest.mark.parametrize(("en", "zh"), stage_pairs(), ids=lambda t: t)
def test_en_and_zh_templates_name_the_same_rules_with_the_same_numbers(en, zh):
    library = PromptLibrary()
    en_rules, zh_rules = rule_lines(library, en), rule_lines(library, zh)
    assert sorted(en_rules) == sorted(zh_rules)
    limits = word_limits()
    for rule_id, lines in en_rules.items():
        en_numbers = {translated(limits, ids, n) for ids, line in lines for n in line_numbers(line)}
        zh_numbers = {n for _, line in zh_rules[rule_id] for n in line_numbers(line)}
        assert en_numbers == zh_numbers, f"{rule_id}: en says {sorted(en_numbers)}, zh {sorted(zh_numbers)}"


def test_the_classifier_finds_an_untagged_instruction_and_spares_labels_loops_and_data():
    source = ("{% block user %}\n"
              "{# rule: scene-form #}Describe the scene in two to four sentences.\n"
              "Keep the memory's people out of it.\n"
              "Other memories:\n"
              "{% for m in memories %}\n- {{ m }} is a memory to avoid.\n{% endfor %}\n"
              "{# data #}Stated need: {{ need }}. It is unmet.\n"
              "{# data #}A mark without a variable is no data line.\n"
              "Write 3 items:\n"
              "{% endblock %}\nOutside the blocks nothing renders.\n")
    kinds = [(line.number, line.kind, line.ids) for line in prompt_lines(source)]
    assert kinds == [(2, "instruction", ("scene-form",)), (3, "instruction", ()), (4, "label", ()),
                     (6, "loop", ()), (8, "data", ()), (9, "instruction", ()), (10, "instruction", ())]
    assert line_numbers("in two to four sentences, at most {{ limit }} words, 2 or 3") == {"2", "4", "3", "{{ limit }}"}
    assert line_numbers("不少于 5 句话，两三句，十二项，一个 JSON 对象") == {"5", "2", "3", "12"}


@pytest.mark.parametrize("template", TEMPLATES)
def test_a_rule_comment_opens_its_line_so_the_rendered_prompt_keeps_its_newlines(template):
    """At a line's end a comment would be swallowed with the newline (trim_blocks) and join
    two lines of the prompt; at its start (or right after `{% block %}`) it renders to nothing."""
    import re

    misplaced = [f"{template}:{n}" for n, line in enumerate(_source(template).splitlines(), 1)
                 if "{#" in line and not re.match(r"(\{% block \w+ %\})?\{#[^#]*#\}(?!\s*$)", line)]
    assert misplaced == []


def test_emotion_and_shared_rules_name_enforcers_that_exist_and_characters_lists_them():
    from memsynth.generation.emotions import SCORE
    from memsynth.generation.registry import recipe_class

    assert list(rule_problems((*SHARED_RULES, *EMOTION_RULES), (SCORE,))) == []
    assert {r.id for r in (*SHARED_RULES, *EMOTION_RULES)} <= {r.id for r in recipe_class("characters").rules}


def test_every_rule_of_a_table_is_in_a_prompt_or_built_in_code():
    """A table rule no prompt names must be one code enforces without asking (a plan, a sample)."""
    from memsynth.generation.registry import names, recipe_class

    named = {i for t in TEMPLATES for line in prompt_lines(_source(t)) for i in line.ids}
    unnamed = [f"{n}: {r.id}" for n in names() for r in recipe_class(n).rules if r.id not in named and not r.built_in]
    assert unnamed == []


def test_where_a_check_accepts_less_the_prompt_asks_for_what_it_accepts():
    from flows.enpmr.form_checks import DESCRIPTION_SENTENCES
    from flows.pal.checks import PREFERENCE_SENTENCES, PROFILE_SENTENCES
    from memsynth.generation.registry import names, recipe_class

    accepted = {"preference-form": ("pal/preferences.j2", PREFERENCE_SENTENCES),
                "profiles": ("pal/profile.j2", PROFILE_SENTENCES),
                "log-realism": ("pal/logs.j2", ()),  # a judge's rule: no bounds, the devices are named in words
                # "one to three": line_numbers leaves "one" out (zh writes 一 for "a"), so the top alone
                "theme-description": ("enpmr/life_themes.j2", DESCRIPTION_SENTENCES[1:])}
    relaxed = {r.id for n in names() for r in recipe_class(n).rules if r.accepts_less}
    assert relaxed == set(accepted), "name the check's bounds here for every rule that accepts less"
    library = PromptLibrary()
    for rule_id, (template, bounds) in accepted.items():
        for language_template in (template, localized(template, "zh")):
            said = {n for _, line in rule_lines(library, language_template).get(rule_id, []) for n in line_numbers(line)}
            assert {str(b) for b in bounds} <= said, f"{language_template} does not ask for {bounds} ({rule_id})"
    # log-realism accepts the workplace equipment the released logs use: the prompt offers it in both languages.
    for template, words in (("pal/logs.j2", ("company computer", "meeting-room")), ("pal/logs.zh.j2", ("公司电脑", "会议室"))):
        said = " ".join(line for _, line in rule_lines(library, template)["log-realism"])
        assert all(w in said for w in words), template


def test_recipes_lists_the_prompt_rules_with_the_seed_rules():
    from tests.conftest import cli_json_here, memsynth_cli

    described = {r["id"]: r for r in cli_json_here("recipes", "pal", "--format", "json")["rules"]}
    assert {"the-user", "json-only", "language", "emotions-eight", "profiles"} <= set(described)
    assert described["profiles"]["accepts_less"].startswith("the seed asks 2-3")
    text = memsynth_cli("recipes", "pal", env={"COLUMNS": "400"}).stdout
    assert "the-user" in text and "json-only" in text and "emotions-eight" in text
