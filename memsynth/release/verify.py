"""`memsynth release verify`: is a release folder exactly what its manifest says it is?"""

from __future__ import annotations

import glob
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from memsynth.core.errors import MemsynthError
from memsynth.release.files import jsonl_rows, parquet_rows_and_schema, sha256_file

MANIFEST = "manifest.json"
SUMS = "SHA256SUMS"


def model_problems(path: Path, model: Any, base: Path, limit: int = 3) -> Iterator[str]:
    """A JSON file checked against a pydantic model: one line per error (at most `limit`)."""
    where = path.relative_to(base)
    if not path.is_file():
        yield f"{where}: missing"
        return
    try:
        model.model_validate_json(path.read_bytes())
    except ValidationError as exc:
        for error in exc.errors()[:limit]:
            loc = ".".join(str(p) for p in error["loc"])
            yield f"{where}: {loc}: {error['msg']}"


def verify_release(folder: Path) -> list[str]:
    """Every problem with the release in `folder`, one line each (empty when it is sound)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise MemsynthError(f"no release folder at {folder}")
    problems: list[str] = [f"{rel}: a symbolic link (a release holds its own files, not links to others)"
                           for rel in _links(folder)]
    manifest = _manifest(folder, problems)
    listed = _check_sums(folder, problems)
    broken = {p.split(":", 1)[0] for p in problems}
    if manifest is None:
        return problems
    entries = []
    for number, entry in enumerate(manifest["files"], start=1):
        rel = entry.get("path") if isinstance(entry, dict) else None
        if not isinstance(rel, str) or (outside := _outside(rel)):
            problems.append(f"{MANIFEST}: files[{number}]: " + (outside if isinstance(rel, str) and outside
                                                              else "not an entry with a `path`"))
            continue
        entries.append(entry)
        problems += _check_entry(folder, entry, skip_hash=rel in broken)
    in_manifest = {e["path"] for e in entries}
    for rel in sorted(listed - in_manifest - {MANIFEST}):
        problems.append(f"{rel}: in {SUMS} but not in {MANIFEST}")
    problems += _check_card(folder)
    problems += _check_seed_format(folder, manifest)
    return problems


def _manifest(folder: Path, problems: list[str]) -> dict[str, Any] | None:
    path = folder / MANIFEST
    if not path.is_file():
        problems.append(f"{MANIFEST}: missing")
        return None
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:  # UnicodeDecodeError included
        problems.append(f"{MANIFEST}: not valid JSON ({str(exc).splitlines()[0]})")
        return None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), list):
        problems.append(f"{MANIFEST}: not a release manifest (an object with a `files` list)")
        return None
    return manifest


def _links(folder: Path) -> list[str]:
    """Every symbolic link under `folder`, relative to it (links are never followed)."""
    out = []
    for top, dirs, files in os.walk(folder, followlinks=False):
        for name in sorted(dirs + files):
            path = Path(top) / name
            if path.is_symlink():
                out.append(path.relative_to(folder).as_posix())
    return sorted(out)


def _files(folder: Path) -> set[str]:
    """The regular files under `folder`, relative to it, without following links."""
    return {(Path(top) / name).relative_to(folder).as_posix()
            for top, _dirs, files in os.walk(folder, followlinks=False) for name in files
            if not (Path(top) / name).is_symlink()}


def _outside(rel: str) -> str:
    """Why a listed path could reach outside the release, or '' if it stays inside."""
    parts = rel.replace("\\", "/").split("/")
    if not rel or rel.startswith("/") or "\\" in rel or ":" in parts[0] or ".." in parts or "" in parts:
        return f"the path {rel!r} is not a plain path inside the release"
    return ""


def _check_sums(folder: Path, problems: list[str]) -> set[str]:
    """Check SHA256SUMS against the files; return the paths it lists."""
    path = folder / SUMS
    on_disk = _files(folder) - {SUMS}
    if not path.is_file() or path.is_symlink():
        problems.append(f"{SUMS}: missing")
        return set()
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError:
        problems.append(f"{SUMS}: not UTF-8 text")
        return set()
    listed: set[str] = set()
    for number, line in enumerate(lines, start=1):
        digest, sep, rel = line.partition("  ")
        if not sep or len(digest) != 64:
            problems.append(f"{SUMS}:{number}: not a '<sha256>  <path>' line")
            continue
        if outside := _outside(rel):
            problems.append(f"{SUMS}:{number}: {outside}")
            continue
        listed.add(rel)
        target = folder / rel
        if target.is_symlink():
            continue  # reported as a link; never read through
        if not target.is_file():
            problems.append(f"{rel}: listed in {SUMS} but missing")
        elif sha256_file(target) != digest:
            problems.append(f"{rel}: SHA-256 differs from {SUMS} (changed or truncated)")
    for rel in sorted(on_disk - listed):
        problems.append(f"{rel}: not listed in {SUMS}")
    return listed


def _check_entry(folder: Path, entry: dict[str, Any], skip_hash: bool) -> list[str]:
    rel = entry["path"]
    path = folder / rel
    if path.is_symlink():
        return []  # reported as a link; never read through
    if not path.is_file():
        return [] if skip_hash else [f"{rel}: in {MANIFEST} but missing"]
    out = []
    if not skip_hash:
        if path.stat().st_size != entry.get("bytes"):
            out.append(f"{rel}: {path.stat().st_size} bytes, the manifest says {entry.get('bytes')}")
        elif sha256_file(path) != entry.get("sha256"):
            out.append(f"{rel}: SHA-256 differs from {MANIFEST}")
    if path.suffix == ".parquet":
        try:
            rows, schema = parquet_rows_and_schema(path)
        except Exception as exc:  # pyarrow raises several types for a damaged file
            return [*out, f"{rel}: not a readable Parquet file ({str(exc).splitlines()[0]})"]
        if rows != entry.get("rows"):
            out.append(f"{rel}: {rows} rows, the manifest says {entry.get('rows')}")
        if schema != entry.get("schema"):
            out.append(f"{rel}: its Parquet schema differs from the manifest's")
    elif path.suffix == ".jsonl" and jsonl_rows(path) != entry.get("rows"):
        out.append(f"{rel}: {jsonl_rows(path)} lines, the manifest says {entry.get('rows')}")
    elif path.suffix == ".json" and not skip_hash:
        try:
            rows = len(json.loads(path.read_text(encoding="utf-8")))
        except ValueError:
            return [*out, f"{rel}: not valid JSON"]
        if rows != entry.get("rows"):
            out.append(f"{rel}: {rows} records, the manifest says {entry.get('rows')}")
    return out


def _check_card(folder: Path) -> list[str]:
    card = folder / "README.md"
    if not card.is_file():
        return ["README.md: missing"]
    text = card.read_text(encoding="utf-8")
    if not text.startswith("---\n") or "\n---\n" not in text[4:]:
        return ["README.md: no YAML front matter"]
    try:
        meta = yaml.safe_load(text[4:text.index("\n---\n", 4)])
    except yaml.YAMLError as exc:
        return [f"README.md: front matter is not YAML ({str(exc).splitlines()[0]})"]
    out = []
    if not isinstance(meta, dict) or not isinstance(meta.get("configs") or [], list):
        return ["README.md: front matter is not a dataset card's (a mapping with a `configs` list)"]
    for config in meta.get("configs") or []:
        for data in (config.get("data_files") or []) if isinstance(config, dict) else []:
            pattern = data.get("path") if isinstance(data, dict) else None
            if not isinstance(pattern, str) or _outside(pattern):
                out.append(f"README.md: config {config.get('config_name')}: a data_files path outside the release")
            elif not glob.glob(str(folder / pattern)):
                out.append(f"README.md: config {config.get('config_name')} split {data.get('split')}: "
                           f"no file matches {pattern}")
    return out


def _check_seed_format(folder: Path, manifest: dict[str, Any]) -> list[str]:
    name = manifest.get("seed_format")
    if not name:
        return []
    from memsynth.release.views import release_spec

    try:
        seed_format = release_spec(str(manifest.get("recipe"))).seed_format
    except (KeyError, MemsynthError):
        return [f"{MANIFEST}: names seed format {name!r} of an unknown recipe {manifest.get('recipe')!r}"]
    if seed_format is None or seed_format.name != name:
        return [f"{MANIFEST}: recipe {manifest['recipe']} has no seed format {name!r}"]
    out = []
    for split in manifest.get("splits", {}).get("proportions", {}):
        out += [f"{name}/{split}/{problem}" for problem in seed_format.problems(folder / name / split)]
    return out
