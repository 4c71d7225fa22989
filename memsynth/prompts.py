"""Prompt templates: Jinja2 files under prompts/, rendered strictly, hashed by content.

A template defines `{% block system %}` and `{% block user %}`; each becomes one chat
message. Data reaches templates only as variables, so text inside a persona such as
`{{ 7*7 }}` is sent literally and never evaluated.
"""

from __future__ import annotations

import hashlib
import json
from functools import cached_property
from pathlib import Path
from typing import Any

import jinja2
import jinja2.meta

from memsynth.errors import ConfigError

DEFAULT_PROMPTS_DIR = Path(__file__).resolve().parent.parent / "prompts"


def _tojson(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2, default=str)


class PromptLibrary:
    """Loads, renders and hashes the templates of one prompts folder."""

    def __init__(self, directory: Path | str = DEFAULT_PROMPTS_DIR):
        self.directory = Path(directory)
        if not self.directory.is_dir():
            raise ConfigError(f"prompts folder not found: {self.directory}")
        self.env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(str(self.directory)),
            undefined=jinja2.StrictUndefined,
            autoescape=False,
            keep_trailing_newline=False,
            trim_blocks=True,
            lstrip_blocks=True,
            auto_reload=False,  # templates do not change during a build; stat-ing them did cost
        )
        self.env.filters["tojson"] = _tojson
        self._hashes: dict[str, str] = {}

    def hash(self, name: str) -> str:
        """sha256 (first 16 hex) of the template and every template it includes."""
        if name not in self._hashes:
            digest = hashlib.sha256()
            for part in self._closure(name):
                digest.update(part.encode() + b"\0" + (self.directory / part).read_bytes())
            self._hashes[name] = digest.hexdigest()[:16]
        return self._hashes[name]

    def _closure(self, name: str) -> list[str]:
        """`name` and the templates it includes or extends, recursively, sorted."""
        seen: set[str] = set()
        todo = [name]
        while todo:
            current = todo.pop()
            if current in seen:
                continue
            path = self.directory / current
            if not path.is_file():
                raise ConfigError(f"prompt template not found: {path}")
            seen.add(current)
            ast = self.env.parse(path.read_text(encoding="utf-8"))
            todo += [t for t in jinja2.meta.find_referenced_templates(ast) if t]
        return sorted(seen)

    def render(self, name: str, variables: dict[str, Any]) -> list[dict[str, str]]:
        """Chat messages (system, then user) rendered from template `name`."""
        template = self.env.get_template(name)
        context = template.new_context(dict(variables))
        messages = []
        for role in ("system", "user"):
            block = template.blocks.get(role)
            if block is None:
                continue
            text = "".join(block(context)).strip()
            if text:
                messages.append({"role": role, "content": text})
        if not messages:
            raise ConfigError(f"template {name} defines neither a system nor a user block")
        return messages

    def render_text(self, name: str, variables: dict[str, Any]) -> str:
        """A template rendered whole, for snippets such as repair instructions."""
        return self.env.get_template(name).render(**variables).strip()

    @cached_property
    def all_hashes(self) -> dict[str, str]:
        return {str(p.relative_to(self.directory)): self.hash(str(p.relative_to(self.directory)))
                for p in sorted(self.directory.rglob("*.j2"))}
