"""Persona descriptions: the shipped seed file, users' imports, and the build's pool."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from memsynth.core.config import SEED_PERSONAS, BuildConfig
from memsynth.core.errors import ConfigError
from memsynth.core.inputs import loads_json
from memsynth.core.records import PersonaRow

IMPORTED_DIR = "_personas"
TEXT_FIELDS = ("persona", "description", "input persona", "text")
# PersonaHub personas are a sentence or two; a page is generous. Longer is a wrong file.
MAX_PERSONA_CHARS = 4000


def persona_id(description: str) -> str:
    """Deterministic id: the same text is the same persona in every build."""
    normal = " ".join(description.split()).lower()
    return "p-" + hashlib.sha256(normal.encode("utf-8")).hexdigest()[:12]


def read_persona_file(path: Path, source: str | None = None) -> list[PersonaRow]:
    """Personas from a JSONL file of `{"persona": "..."}` lines (PersonaHub style)."""
    if not path.is_file():
        raise ConfigError(f"persona file not found: {path}")
    rows: list[PersonaRow] = []
    try:
        with open(path, encoding="utf-8") as fh:
            for number, line in enumerate(fh, start=1):
                if line.strip():
                    rows.append(_persona_line(path, number, line, source))
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text") from exc
    if not rows:
        raise ConfigError(f"{path}: no personas in the file")
    return rows


def _persona_line(path: Path, number: int, line: str, source: str | None) -> PersonaRow:
    record = loads_json(line, f"{path}:{number}")
    if not isinstance(record, dict):
        raise ConfigError(f"{path}:{number}: expected a JSON object, got {type(record).__name__}")
    text = next((record[k] for k in TEXT_FIELDS if k in record), None)
    if not isinstance(text, str) or not text.strip():
        raise ConfigError(f"{path}:{number}: needs a non-empty string field 'persona' (or 'description')")
    text = " ".join(text.split())
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:  # JSON allows "\ud800"; no text file or prompt can hold it
        raise ConfigError(f"{path}:{number}: not valid Unicode text (a lone surrogate "
                          f"{text[exc.start]!r} at character {exc.start + 1})") from None
    if len(text) > MAX_PERSONA_CHARS:
        raise ConfigError(f"{path}:{number}: a persona of {len(text):,} characters; at most "
                          f"{MAX_PERSONA_CHARS:,} (it goes into every prompt of its chain)")
    origin = source or record.get("source") or path.name
    return PersonaRow(persona_id=persona_id(text), description=text, source=str(origin))


def import_personas(path: Path, warehouse: Path) -> tuple[int, int, Path]:
    """Validate `path` and add its personas to the warehouse pool: (read, new, stored file)."""
    rows = read_persona_file(path, source=f"import:{path.name}")
    pool = warehouse / IMPORTED_DIR
    known = {r.persona_id for r in imported_personas(warehouse)}
    fresh = [r for r in _unique(rows) if r.persona_id not in known]
    digest = hashlib.sha256("".join(r.persona_id for r in fresh).encode()).hexdigest()[:10]
    target = pool / f"{path.stem}-{digest}.jsonl"
    if fresh:
        pool.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=pool, prefix=".import-", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            for r in fresh:
                fh.write(json.dumps({"persona": r.description, "source": r.source},
                                    ensure_ascii=False) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    return len(rows), len(fresh), target


def imported_personas(warehouse: Path) -> list[PersonaRow]:
    rows: list[PersonaRow] = []
    for path in sorted((warehouse / IMPORTED_DIR).glob("*.jsonl")):
        for row in read_persona_file(path):
            rows.append(row)
    return rows


def persona_pool(config: BuildConfig, warehouse: Path) -> list[PersonaRow]:
    """Every persona a build may draw from, in a stable order, without duplicates."""
    rows: list[PersonaRow] = []
    if config.personas.include_seed:
        rows += read_persona_file(SEED_PERSONAS, source="seed")
    for name in config.personas.files:
        rows += read_persona_file(config.resolve_path(name))
    if config.personas.include_imported:
        rows += imported_personas(warehouse)
    return _unique(rows)


def build_personas(recipe: Any, config: BuildConfig, warehouse: Path, wanted: int) -> list[PersonaRow]:
    """The personas a build of `wanted` draws from, in order: the recipe's own source, or the
    pool (topped up with numbered slots for a recipe that writes its profiles itself).
    Refuses, before any call, a count that neither the pool nor the recipe can meet."""
    pool = recipe.source_personas(config, warehouse)
    if pool is None:
        pool = persona_pool(config, warehouse)
        if recipe.persona_slots:
            pool += [PersonaRow(persona_id=f"slot-{n:07d}", description=f"user {n:04d}", source="slot")
                     for n in range(len(pool), wanted)]
    if len(pool) < wanted and recipe.persona_stage is None:
        raise ConfigError(f"the build asks for {wanted} personas but only {len(pool)} are available, "
                          f"and recipe {recipe.name} cannot write new ones")
    return pool


def _unique(rows: list[PersonaRow]) -> list[PersonaRow]:
    seen: set[str] = set()
    out = []
    for row in rows:
        if row.persona_id not in seen:
            seen.add(row.persona_id)
            out.append(row)
    return out
