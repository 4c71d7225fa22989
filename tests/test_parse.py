"""Tolerant parsing of model answers."""

from __future__ import annotations

import pytest

from memsynth.llm.parse import UnparsableOutput, extract_json


@pytest.mark.parametrize("text,expected", [
    ('{"a": 1}', {"a": 1}),
    ('```json\n{"a": 1}\n```', {"a": 1}),
    ('Sure! Here it is:\n{"a": [1, 2]} hope that helps', {"a": [1, 2]}),
    ("{'a': 1,}", {"a": 1}),  # single quotes and a trailing comma
    ('{"a": "x", "b": [1, 2', {"a": "x", "b": [1, 2]}),  # cut off mid-array
    ('[{"x": 1}]', [{"x": 1}]),
])
def test_recovers_json(text, expected):
    assert extract_json(text) == expected


@pytest.mark.parametrize("text", ["", "I'm sorry, I cannot produce that output right now.", "no json here at all"])
def test_refuses_hopeless_answers(text):
    with pytest.raises(UnparsableOutput):
        extract_json(text)
