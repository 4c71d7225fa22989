"""Tolerant parsing of model answers."""

from __future__ import annotations

import pytest

from memsynth.llm.parse import UnparsableOutput, extract_json


@pytest.mark.parametrize("text,expected", [
    ('{"a": 1}', {"a": 1}),
    ('```json\n{"a": 1}\n```', {"a": 1}),
    ('Sure! Here it is:\n{"a": [1, 2]} hope that helps', {"a": [1, 2]}),
    ("{'a': 1,}", {"a": 1}),  # single quotes and a trailing comma
    ('{"a": "}[", "b": 2} and then prose {', {"a": "}[", "b": 2}),  # brackets in strings
    ('[{"x": 1}]', [{"x": 1}]),
])
def test_recovers_json(text, expected):
    assert extract_json(text) == expected


@pytest.mark.parametrize("text", ["", "I'm sorry, I cannot produce that output right now.", "no json here at all"])
def test_refuses_hopeless_answers(text):
    with pytest.raises(UnparsableOutput):
        extract_json(text)


@pytest.mark.parametrize("text", ['{"a": "x", "b": [1, 2', '{"items": [{"t": "one"}, {"t": "tw',
                                  '```json\n{"a": {"b": 1}\n```'])
def test_never_completes_a_cut_off_answer(text):
    """Closing what a cut answer left open would pass a shorter object off as whole."""
    with pytest.raises(UnparsableOutput, match="stops before"):
        extract_json(text)
