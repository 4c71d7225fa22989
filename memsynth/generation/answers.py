"""One answer judged as a build judges it: parsed, validated against the stage's output model,
checked; what is wrong is worded in the build's language, for the repair prompt."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from memsynth.generation.answer_keys import answer_keys, unknown_keys
from memsynth.generation.stagedef import Stage, say
from memsynth.llm.parse import UnparsableOutput, extract_json
from memsynth.llm.runaway import RUNAWAY


def evaluate(stage: Stage, content: str, finish_reason: str | None,
             variables: Mapping[str, Any]) -> tuple[Any | None, list[str], str]:
    """Judge one answer as a build does: (output, problems, outcome).

    The outcome is `ok`, `check_failed` (valid output, failed checks), `invalid_schema`,
    `invalid_json`, `truncated` or `runaway` (stopped while it ran on in whitespace or one
    repeated fragment); the problems are worded in the variables' language.
    """
    if finish_reason == RUNAWAY:
        return None, ["[runaway] " + say(
            variables, "the answer ran on with whitespace or one repeated fragment and was stopped; "
                       "write the JSON compactly, without padding, and end it when every field is given",
            "回答不断重复空白或同一片段，已被中止；请紧凑地写出 JSON，不要填充空白，所有字段写完即结束")], "runaway"
    if finish_reason == "length":
        return None, ["[truncated] " + say(variables, "the answer was cut off at the token limit; "
                                           "answer more concisely", "回答超出长度上限被截断；请写得更简洁")], "truncated"
    try:
        # Clean JSON (nearly every answer, and every one the cache replays) goes straight
        # to pydantic's own parser; anything else takes the tolerant path.
        output = stage.output.model_validate_json(content)
        data: Any = None
    except ValidationError as fast_error:
        if not _is_json_error(fast_error):
            return None, _validation_problems(fast_error, variables), "invalid_schema"
        try:
            data = extract_json(content)
        except UnparsableOutput as exc:
            return None, ["[json] " + say(variables, str(exc), "回答不是可解析的 JSON")], "invalid_json"
        try:
            output = stage.output.model_validate(data)
        except ValidationError as exc:
            return None, _validation_problems(exc, variables), "invalid_schema"
    if unknown := unknown_keys(stage.output, content if data is None else data):
        return None, ["[schema] " + say(
            variables, f"unknown top-level field(s) {', '.join(unknown)}: answer with the fields "
                       f"{', '.join(answer_keys(stage.output))} only",
            f"多出了顶层字段 {'、'.join(unknown)}：只写 {'、'.join(answer_keys(stage.output))} 这些字段")], "invalid_schema"
    problems = [p for c in stage.checks for p in c(output, variables)]
    return output, problems, ("check_failed" if problems else "ok")


def _is_json_error(exc: ValidationError) -> bool:
    """True when pydantic could not parse the text as JSON at all (not a schema mismatch)."""
    return any(err["type"] == "json_invalid" for err in exc.errors())


# pydantic's error types, worded in Chinese for a zh repair prompt; each states the bound
# it enforces, as pydantic's English message does.
_ZH_ERRORS = {
    "missing": "缺少这个字段",
    "extra_forbidden": "不允许出现这个字段",
    "too_short": "条目太少：至少要有 {min_length} 个，实际 {actual_length} 个",
    "too_long": "条目太多：至多 {max_length} 个，实际 {actual_length} 个",
    "string_type": "应当是字符串",
    "string_too_short": "太短：至少要有 {min_length} 个字符",
    "string_too_long": "太长：至多 {max_length} 个字符",
    "string_pattern_mismatch": "格式不对：应当符合正则表达式 {pattern}",
    "int_type": "应当是整数",
    "int_parsing": "应当是整数",
    "int_from_float": "应当是整数",
    "bool_type": "应当是 true 或 false",
    "bool_parsing": "应当是 true 或 false",
    "list_type": "应当是列表",
    "dict_type": "应当是对象",
    "model_type": "应当是对象",
    "date_type": "应当是 YYYY-MM-DD 格式的日期",
    "date_parsing": "应当是 YYYY-MM-DD 格式的日期",
    "date_from_datetime_parsing": "应当是 YYYY-MM-DD 格式的日期",
    "literal_error": "取值必须是 {expected} 之一",
    "enum": "取值必须是 {expected} 之一",
    "greater_than_equal": "数值不能小于 {ge}",
    "greater_than": "数值必须大于 {gt}",
    "less_than_equal": "数值不能大于 {le}",
    "less_than": "数值必须小于 {lt}",
}


def _zh_error(err: Mapping[str, Any]) -> str:
    """pydantic's error in Chinese with its bound; its English message where none is written."""
    template = _ZH_ERRORS.get(err["type"])
    if template is None:
        return f"不符合要求（{err['msg']}）"
    try:
        return template.format(**(err.get("ctx") or {}))
    except (KeyError, IndexError):  # a bound pydantic did not report: say it in its words
        return f"{template.split('：')[0]}（{err['msg']}）"


def _validation_problems(exc: ValidationError, variables: Mapping[str, Any], limit: int = 12) -> list[str]:
    zh = variables.get("language") == "zh"
    problems = []
    for err in exc.errors()[:limit]:
        where = ".".join(str(p) for p in err["loc"]) or "(root)"
        problems.append(f"[schema] 字段 {where}：{_zh_error(err)}" if zh else f"[schema] {where}: {err['msg']}")
    if exc.error_count() > limit:
        more = exc.error_count() - limit
        problems.append("[schema] " + (f"……另有 {more} 处问题" if zh else f"… and {more} more"))
    return problems
