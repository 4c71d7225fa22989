"""Prompt templates: strict rendering, content hashes, no template injection."""

from __future__ import annotations

import jinja2
import pytest

from memsynth.core.errors import ConfigError
from memsynth.generation.prompts import PromptLibrary


def test_variables_are_never_rendered_as_template_code():
    lib = PromptLibrary()
    persona = "A chef who writes {{ 7*7 }} and {% if true %}x{% endif %} in her notes."
    messages = lib.render("enpmr/profile.j2", {"persona": persona, "language": "en"})
    user = messages[-1]["content"]
    assert "{{ 7*7 }}" in user and "{% if true %}x{% endif %}" in user
    assert "49" not in user


def test_missing_variable_is_an_error_not_blank():
    with pytest.raises(jinja2.UndefinedError):
        PromptLibrary().render("enpmr/profile.j2", {"language": "en"})


def test_render_gives_system_then_user():
    messages = PromptLibrary().render("enpmr/profile.zh.j2", {"persona": "p", "language": "zh"})
    assert [m["role"] for m in messages] == ["system", "user"]
    assert "简体中文" in messages[0]["content"]


def test_hash_follows_content(tmp_path):
    (tmp_path / "r").mkdir()
    path = tmp_path / "r" / "s.j2"
    path.write_text("{% block user %}hello {{ name }}{% endblock %}")
    first = PromptLibrary(tmp_path).hash("r/s.j2")
    path.write_text("{% block user %}hi {{ name }}{% endblock %}")
    second = PromptLibrary(tmp_path).hash("r/s.j2")
    assert first != second and len(first) == 16


def test_missing_template_and_folder_are_config_errors(tmp_path):
    with pytest.raises(ConfigError):
        PromptLibrary(tmp_path / "nope")
    with pytest.raises(ConfigError):
        PromptLibrary(tmp_path).hash("missing.j2")
