"""Prompt templates: Jinja2 files under prompts/, rendered strictly, hashed by content.

A template defines `{% block system %}` and `{% block user %}`; each becomes one chat
message. Data reaches templates only as variables, so text inside a persona such as
`{{ 7*7 }}` is sent literally and never evaluated.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import jinja2
import jinja2.meta

from memsynth.core.errors import ConfigError

DEFAULT_PROMPTS_DIR = Path(__file__).resolve().parents[2] / "prompts"


def _tojson(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2, default=str)


class PromptLibrary:
    """Loads, renders and hashes the templates of a prompts folder (and any more folders,
    searched after it: those of recipes kept outside this repository)."""

    def __init__(self, directory: Path | str = DEFAULT_PROMPTS_DIR, *more: Path | str):
        self.directory = Path(directory)
        self.directories = [self.directory, *(Path(d) for d in more)]
        for folder in self.directories:
            if not folder.is_dir():
                raise ConfigError(f"prompts folder not found: {folder}")
        self.env = jinja2.Environment(
            loader=jinja2.FileSystemLoader([str(d) for d in self.directories]),
            undefined=jinja2.StrictUndefined,
            autoescape=False,
            keep_trailing_newline=False,
            trim_blocks=True,
            lstrip_blocks=True,
            auto_reload=False,  # templates do not change during a build; stat-ing them did cost
        )
        self.env.filters["tojson"] = _tojson
        self._hashes: dict[str, str] = {}
        # Templates do not change during a process (auto_reload is off for the same reason):
        # an audit reads the prompt's own lines per item, and parsing them each time cost more
        # CPU than the rest of its work.
        self._files: dict[str, dict[str, str]] = {}

    def hash(self, name: str) -> str:
        """sha256 (first 16 hex) of the template and every template it includes."""
        if name not in self._hashes:
            self._hashes[name] = files_hash(self.files(name))
        return self._hashes[name]

    def files(self, name: str) -> dict[str, str]:
        """The text of `name` and of every template it includes or extends, by name."""
        if name not in self._files:
            self._files[name] = {part: self._source(part) for part in self._closure(name)}
        return dict(self._files[name])

    def _source(self, name: str) -> str:
        try:
            return self.env.loader.get_source(self.env, name)[0]  # type: ignore[union-attr]
        except jinja2.TemplateNotFound as exc:
            raise ConfigError(f"prompt template not found: {name} (in {', '.join(map(str, self.directories))})"
                              ) from exc

    def _closure(self, name: str) -> list[str]:
        """`name` and the templates it includes or extends, recursively, sorted."""
        seen: set[str] = set()
        todo = [name]
        while todo:
            current = todo.pop()
            if current in seen:
                continue
            ast = self.env.parse(self._source(current))
            seen.add(current)
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



def files_hash(files: dict[str, str]) -> str:
    """sha256 (first 16 hex) of templates given by name: the hash a version records for them."""
    digest = hashlib.sha256()
    for name in sorted(files):
        digest.update(name.encode() + b"\0" + files[name].encode("utf-8"))
    return digest.hexdigest()[:16]
