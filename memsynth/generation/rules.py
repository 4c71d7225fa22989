"""A recipe's rules as data: where each comes from and what enforces it.

The table is the one list of a recipe's rules: the seed's, and every instruction of its
prompts (each instruction line of a template names its rules in a comment, see
`prompt_lines`). Every rule names its enforcer: a check (`stage.check`), a judge criterion (`stage.field` of a
judge's answer), or, when neither can, the reason the prompt alone carries it. `memsynth
recipes NAME` lists them; `rule_problems` says where a rule names an enforcer the recipe lacks.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from memsynth.generation.stage import Stage


@dataclass(frozen=True)
class Rule:
    """One rule of the seed (or of our prompt), and what enforces it at build time."""

    id: str
    rule: str  # the rule, in a line
    source: str  # where it comes from: "seed 000 Fig. 11", "prompt"
    checks: tuple[str, ...] = ()  # "stage.check_name", or "stage.schema" for the stage's output model
    judges: tuple[str, ...] = ()  # "stage.field": a judge's criterion (a.b for a field of list items)
    built_in: str = ""  # code that makes the rule hold by construction (the dialogue plan, say)
    prompt_only: str = ""  # why nothing but the prompt can enforce it
    # Where the check accepts less than the seed asks because the seed's released data does:
    # what the seed asks, and why we accept less. The prompt then asks what the check accepts.
    accepts_less: str = ""

    @property
    def enforced_by(self) -> str:
        """The enforcers in a line: checks, judge criteria, construction; else the prompt and why."""
        parts = ([f"check {c.partition('.')[2]} on every stage" if c.startswith(f"{EVERY_STAGE}.") else f"check {c}"
                  for c in self.checks] + [f"judge {j}" for j in self.judges]
                 + ([f"built in: {self.built_in}"] if self.built_in else []))
        return "; ".join(parts) if parts else f"prompt only: {self.prompt_only}"

    def to_json(self) -> dict[str, object]:
        return {"id": self.id, "rule": self.rule, "source": self.source, "checks": list(self.checks),
                "judges": list(self.judges), "built_in": self.built_in, "prompt_only": self.prompt_only,
                "accepts_less": self.accepts_less, "enforced_by": self.enforced_by}


# Rules of the shared snippets (prompts/_*.j2), in every recipe's table.
PARSED = ("the runner parses the answer as JSON and validates it against the stage's output model; a failure is "
          "re-asked with the problem, then the stage's policy applies")
# A rule's check that every stage runs names this as its stage: "*.in_language".
EVERY_STAGE = "*"

SHARED_RULES = (
    Rule("json-only", "the answer is one JSON object in the requested structure, and nothing else", "prompt",
         built_in=PARSED),
    Rule("json-schema", "in json_object mode the answer conforms to the JSON Schema the prompt shows", "prompt",
         built_in=PARSED),
    Rule("repair", "a re-asked answer is the complete corrected JSON, with no commentary and no code fences",
         "prompt", built_in="the parser takes the JSON out of commentary and fences (memsynth/llm/parse.py)"),
    Rule("language", "every text value is in the build's language (simplified characters in Chinese); JSON keys, "
         "date formats and listed values stay as written", "prompt", checks=(f"{EVERY_STAGE}.in_language",)),
    # The audit judge's own prompt (prompts/_audit*.j2, memsynth.generation.audit).
    Rule("audit-scope", "an audit judges the answer on the listed rules only, from what the task and the answer show",
         "prompt", prompt_only="how a judge reads is measured, not checked: `check-answers --judge` on the shared "
                               "corpus (tests/test_judge_figures.py)"),
    Rule("audit-any-wording", "a rule is broken in any wording (paraphrase, synonym, a name in another form, a time "
         "in words); a rule that does not apply is kept", "prompt",
         prompt_only="how a judge reads is measured, not checked: `check-answers --judge` on the shared corpus "
                     "(tests/test_judge_figures.py)"),
    Rule("audit-verdicts", "one verdict (pass or violation) per listed rule, in order, with a one-sentence reason "
         "that quotes the breaking words", "prompt",
         built_in="memsynth/generation/audit.py: the answer model takes exactly one verdict per listed rule"),
)

# Rules of emotion annotation (prompts/emotions/score*.j2), in the table of every recipe that
# can be annotated; their checks are the `score` stage's (memsynth/generation/emotions.py).
_NO_TRUTH = "an emotion reading has no ground truth code can compute: the seed's own scorer is a model"
EMOTION_RULES = (
    Rule("emotions-eight", "each of Plutchik's eight emotions is scored exactly once", "seed 001 §II-B",
         checks=("score.schema", "score.every_emotion_once")),
    Rule("emotions-scale", "a score is a whole number from 1 (absent) to 10 (overwhelming), after a one-sentence "
         "analysis of the evidence", "seed 001 §II-B", checks=("score.schema", "score.one_sentence_analysis")),
    # How a speaker's feeling reads has no ground truth code can compute (the seed's own scorer is
    # a model: measured against annotators); whose words the evidence quotes is code's to read.
    Rule("emotions-what", "a query is scored on the state behind it (in which the speaker would recall memories that "
         "felt the same); a memory on the emotions its speaker expresses, never on another speaker's words",
         "seed 001 §II-B", checks=("score.speaker_own_words",)),
    Rule("emotions-reader", "score what most readers would sense, not what a single word suggests", "prompt",
         prompt_only=_NO_TRUTH),
)


def rule_problems(rules: Iterable[Rule], stages: Iterable[Stage]) -> Iterator[str]:
    """Rules whose enforcer the stages do not have, or that name none (one line each)."""
    by_name = {s.name: s for s in stages}
    seen: set[str] = set()
    for r in rules:
        if r.id in seen:
            yield f"{r.id}: the id is used twice"
        seen.add(r.id)
        if not (r.checks or r.judges or r.built_in or r.prompt_only):
            yield f"{r.id}: names no check, no judge criterion, no construction and no reason to leave it to the prompt"
        for ref in r.checks:
            stage, _, name = ref.partition(".")
            if stage == EVERY_STAGE:  # a check every stage runs (generation/language.py)
                if not all(name in {c.name for c in s.checks} for s in by_name.values()):
                    yield f"{r.id}: not every stage has the check {name}"
                continue
            if stage not in by_name or (name != "schema" and name not in {c.name for c in by_name[stage].checks}):
                yield f"{r.id}: no check {ref}"
        for ref in r.judges:
            stage, _, field = ref.partition(".")
            if stage not in by_name or not _has_field(by_name[stage], field):
                yield f"{r.id}: no judge criterion {ref}"


def _has_field(stage: Stage, path: str) -> bool:
    """`path` (a.b for nested lists of models) is a field of the stage's answer."""
    model = stage.output
    for part in path.split("."):
        field = model.model_fields.get(part)
        if field is None:
            return False
        inner = _model_in(field.annotation)
        if inner is not None:
            model = inner
    return True


def _model_in(annotation: object) -> type | None:
    from typing import get_args

    from pydantic import BaseModel

    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):
        found = _model_in(arg)
        if found is not None:
            return found
    return None


# --- The prompts' own lines -------------------------------------------------------------
#
# Every instruction line of a template carries the ids of the rules it states, in a Jinja
# comment at the start of the line: `{# rule: scene-form, scene-no-people #}Describe ...`.
# A comment renders to nothing, and at the start of a line it leaves the line's newline alone
# (at the end, trim_blocks would swallow it and join two lines of the prompt).

RULE_TAG = re.compile(r"\{#\s*rule:\s*(.*?)\s*#\}")
DATA_TAG = re.compile(r"\{#\s*data\s*#\}")
_JINJA = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}")
_COMMENT = re.compile(r"\{#.*?#\}")
_PROSE = re.compile(r"[A-Za-z\u4e00-\u9fff]")
_SENTENCE_END = re.compile(r"[.;?!。；？！]")
LABEL_CHARS = 60  # a label wider than this is a sentence, and so an instruction


@dataclass(frozen=True)
class PromptLine:
    """A line of a template's rendered part that holds words of its own (not only variables)."""

    number: int  # 1-based, in the template's source
    source: str  # the line as written, comments included
    ids: tuple[str, ...]  # the rule ids its comment names
    kind: str  # "instruction" | "label" | "data" | "loop"

    @property
    def text(self) -> str:
        """The line without its Jinja comments: what a reader of the template sees."""
        return _COMMENT.sub("", self.source)


def prompt_lines(source: str) -> list[PromptLine]:
    """The lines of a template that hold prose, each classed (see docs/recipes.md, "Rules are
    the prompts' own lines"):

    - *loop*: inside `{% for %}` … `{% endfor %}`: rows of data, one per item;
    - *data*: marked `{# data #}` and showing a variable (`{{ … }}`): a fact of the item;
    - *label*: its own words end with a colon, are at most LABEL_CHARS characters and hold no
      sentence before the colon ("Target memory: {{ target.text }}", "Other memories:");
    - *instruction*: every other line with words of its own; it must name its rules.

    In a template with blocks only the blocks' lines count (nothing else is rendered)."""
    has_blocks = "{% block" in source
    depth_block = depth_for = 0
    lines: list[PromptLine] = []
    for number, line in enumerate(source.splitlines(), 1):
        in_block = not has_blocks or depth_block > 0 or bool(re.search(r"\{%-?\s*block\b", line))
        in_loop = depth_for > 0
        depth_block += len(re.findall(r"\{%-?\s*block\b", line)) - len(re.findall(r"\{%-?\s*endblock\b", line))
        depth_for += len(re.findall(r"\{%-?\s*for\b", line)) - len(re.findall(r"\{%-?\s*endfor\b", line))
        if not in_block:
            continue
        literal = _JINJA.sub("", line).strip()
        if not _PROSE.search(literal):
            continue
        ids = tuple(i.strip() for tag in RULE_TAG.findall(line) for i in tag.split(",") if i.strip())
        if in_loop:
            kind = "loop"
        elif ids:
            kind = "instruction"
        elif DATA_TAG.search(line) and "{{" in line:
            kind = "data"
        elif (literal.endswith((":", "：")) and _width(literal) <= LABEL_CHARS
              and not _SENTENCE_END.search(literal[:-1]) and not re.search(r"\d|`", literal)):
            kind = "label"
        else:
            kind = "instruction"
        lines.append(PromptLine(number, line, ids, kind))
    return lines


def _width(text: str) -> int:
    """Characters, a CJK one counting two (a Chinese label says in 15 what English says in 30)."""
    return len(text) + len(re.findall(r"[\u4e00-\u9fff]", text))


_EN_NUMBERS = {**{w: n for n, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split())},
    **{w: 10 * n for n, w in enumerate("thirty forty fifty sixty seventy eighty ninety".split(), 3)}, "both": 2}
_ZH_DIGITS = {"两": 2, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}


def line_numbers(text: str) -> set[str]:
    """The numbers a line states (digits; number words two and up, en and zh, "both" for 2;
    "one" / "一" are left out, as zh writes 一 for "a") and the variables it shows, which carry
    the rest."""
    shown = {m.group(1) for m in re.finditer(r"\{\{-?\s*([A-Za-z_]\w*)", text)}
    literal = _JINJA.sub(" ", text)
    found = set(re.findall(r"\d+", literal))
    found |= {str(_EN_NUMBERS[w.lower()]) for w in re.findall(r"[A-Za-z]+", literal)
              if w.lower() in _EN_NUMBERS and _EN_NUMBERS[w.lower()] >= 2}
    for m in re.finditer(r"([二两三四五六七八九]?)(十)([一二三四五六七八九]?)|([两二三四五六七八九])", literal):
        if m.group(4):
            found.add(str(_ZH_DIGITS[m.group(4)]))
        else:
            tens = _ZH_DIGITS.get(m.group(1), 1)
            ones = _ZH_DIGITS.get(m.group(3), 1 if m.group(3) == "一" else 0)
            found.add(str(tens * 10 + ones))
    return found | {f"{{{{ {v} }}}}" for v in shown}
