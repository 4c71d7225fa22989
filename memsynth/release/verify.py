"""`memsynth release verify`: is a release folder exactly what its manifest says it is?

Everything is read through ReleaseFolder: nothing outside the folder is ever opened, and a
file the release names that is not a regular file inside it is reported, never read."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import ValidationError

from memsynth.core.errors import ConfigError, MemsynthError
from memsynth.core.inputs import loads_json, loads_yaml
from memsynth.release.files import count_lines, parquet_rows_and_schema, sha256_stream
from memsynth.release.folder import Refused, ReleaseFolder, outside

MANIFEST = "manifest.json"
SUMS = "SHA256SUMS"
CARD = "README.md"


def model_problems(folder: ReleaseFolder | Path, rel: str, model: Any, limit: int = 3) -> Iterator[str]:
    """The JSON file `rel` of `folder` checked against a pydantic model: one line per error
    (at most `limit`)."""
    try:
        raw = ReleaseFolder.of(folder).read_bytes(rel)
    except FileNotFoundError:
        yield f"{rel}: missing"
        return
    except (Refused, OSError) as exc:
        yield f"{rel}: not read ({_why(exc)})"
        return
    try:
        model.model_validate_json(raw)
    except ValidationError as exc:
        for error in exc.errors()[:limit]:
            loc = ".".join(str(p) for p in error["loc"])
            yield f"{rel}: {loc}: {error['msg']}" if loc else f"{rel}: {error['msg']}"


def verify_release(folder: Path) -> list[str]:
    """Every problem with the release in `folder`, one line each (empty when it is sound)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise MemsynthError(f"no release folder at {folder}")
    release = ReleaseFolder(folder)
    listing = release.listing()
    problems = [f"{rel}: a symbolic link (a release holds its own files, not links to others)"
                for rel in listing.links]
    problems += [f"{rel}: not a regular file or folder (a FIFO, socket or device)" for rel in listing.special]
    unread = _Unread([*listing.links, *listing.special])
    manifest = _manifest(release, problems)
    listed, reported = _check_sums(release, problems, unread)
    if manifest is None:
        return problems
    in_manifest = set()
    for number, entry in enumerate(manifest["files"], start=1):
        rel = entry.get("path") if isinstance(entry, dict) else None
        if rel is None or (why := outside(rel)):
            problems.append(f"{MANIFEST}: files[{number}]: " + (why if rel is not None
                                                              else "not an entry with a `path`"))
            continue
        in_manifest.add(rel)
        problems += _check_entry(release, entry, rel in reported, unread)
    for rel in sorted(listed - in_manifest - {MANIFEST}):
        problems.append(f"{rel}: in {SUMS} but not in {MANIFEST}")
    problems += _check_card(release, unread)
    problems += _check_seed_format(release, manifest)
    return problems


class _Unread:
    """Links and special files already reported: nothing at or under them is read or reported again."""

    def __init__(self, paths: list[str]) -> None:
        self.paths = paths

    def __contains__(self, rel: str) -> bool:
        return any(rel == p or rel.startswith(p + "/") for p in self.paths)


def _why(exc: BaseException) -> str:
    return str(exc) if isinstance(exc, Refused) else (getattr(exc, "strerror", None) or str(exc))


def _manifest(release: ReleaseFolder, problems: list[str]) -> dict[str, Any] | None:
    try:
        manifest = release.read_json(MANIFEST)
    except FileNotFoundError:
        problems.append(f"{MANIFEST}: missing")
        return None
    except (Refused, OSError) as exc:
        problems.append(f"{MANIFEST}: not read ({_why(exc)})")
        return None
    except ConfigError as exc:  # not UTF-8, not JSON, nested too deep
        problems.append(str(exc))
        return None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), list):
        problems.append(f"{MANIFEST}: not a release manifest (an object with a `files` list)")
        return None
    return manifest


def _check_sums(release: ReleaseFolder, problems: list[str], unread: _Unread) -> tuple[set[str], set[str]]:
    """Check SHA256SUMS against the files: (the paths it lists, those it found a problem with)."""
    on_disk = release.files() - {SUMS}
    reported = {rel for rel in on_disk | {SUMS} if rel in unread}
    try:
        raw = release.read_bytes(SUMS)
    except (FileNotFoundError, Refused, OSError):
        problems.append(f"{SUMS}: missing")
        return set(), reported
    try:
        lines = raw.decode("utf-8").split("\n")  # only newline ends a line, as sha256sum reads it
    except UnicodeDecodeError:
        problems.append(f"{SUMS}: not UTF-8 text")
        return set(), reported
    listed: set[str] = set()
    for number, line in enumerate(lines[:-1] if lines[-1] == "" else lines, start=1):
        digest, sep, rel = line.partition("  ")
        if not sep or len(digest) != 64:
            problems.append(f"{SUMS}:{number}: not a '<sha256>  <path>' line")
            continue
        if why := outside(rel):
            problems.append(f"{SUMS}:{number}: {why}")
            continue
        listed.add(rel)
        if rel in unread:
            continue
        if problem := _sum_problem(release, rel, digest):
            problems.append(problem)
            reported.add(rel)  # the manifest's check says no more about its bytes
    for rel in sorted(on_disk - listed):
        problems.append(f"{rel}: not listed in {SUMS}")
    return listed, reported


def _sum_problem(release: ReleaseFolder, rel: str, digest: str) -> str:
    try:
        with release.open(rel) as fh:
            same = sha256_stream(fh) == digest
    except FileNotFoundError:
        return f"{rel}: listed in {SUMS} but missing"
    except (Refused, OSError) as exc:
        return f"{rel}: not read ({_why(exc)})"
    return "" if same else f"{rel}: SHA-256 differs from {SUMS} (changed or truncated)"


def _check_entry(release: ReleaseFolder, entry: dict[str, Any], skip_hash: bool, unread: _Unread) -> list[str]:
    rel = entry["path"]
    if rel in unread:
        return []
    try:
        fh = release.open(rel)
    except FileNotFoundError:
        return [] if skip_hash else [f"{rel}: in {MANIFEST} but missing"]
    except (Refused, OSError) as exc:
        return [] if skip_hash else [f"{rel}: not read ({_why(exc)})"]
    with fh:
        return _check_contents(fh, rel, entry, skip_hash)


def _check_contents(fh: Any, rel: str, entry: dict[str, Any], skip_hash: bool) -> list[str]:
    out = []
    if not skip_hash:
        size = os.fstat(fh.fileno()).st_size
        if size != entry.get("bytes"):
            out.append(f"{rel}: {size} bytes, the manifest says {entry.get('bytes')}")
        elif sha256_stream(fh) != entry.get("sha256"):
            out.append(f"{rel}: SHA-256 differs from {MANIFEST}")
        fh.seek(0)
    suffix = PurePosixPath(rel).suffix
    if suffix == ".parquet":
        try:
            rows, schema = parquet_rows_and_schema(fh)
        except Exception as exc:  # pyarrow raises several types for a damaged file
            return [*out, f"{rel}: not a readable Parquet file ({(str(exc).splitlines() or [''])[0]})"]
        if rows != entry.get("rows"):
            out.append(f"{rel}: {rows} rows, the manifest says {entry.get('rows')}")
        if schema != entry.get("schema"):
            out.append(f"{rel}: its Parquet schema differs from the manifest's")
    elif suffix == ".jsonl":
        if (rows := count_lines(fh)) != entry.get("rows"):
            out.append(f"{rel}: {rows} lines, the manifest says {entry.get('rows')}")
    elif suffix == ".json" and not skip_hash:
        try:
            value = loads_json(fh.read(), rel)
        except ConfigError as exc:
            return [*out, str(exc)]
        if not isinstance(value, list | dict):
            return [*out, f"{rel}: holds a JSON {type(value).__name__}, not a list or object of records"]
        if len(value) != entry.get("rows"):
            out.append(f"{rel}: {len(value)} records, the manifest says {entry.get('rows')}")
    return out


def _check_card(release: ReleaseFolder, unread: _Unread) -> list[str]:
    if CARD in unread:
        return []
    try:
        text = release.read_bytes(CARD).decode("utf-8")
    except FileNotFoundError:
        return [f"{CARD}: missing"]
    except (Refused, OSError) as exc:
        return [f"{CARD}: not read ({_why(exc)})"]
    except UnicodeDecodeError:
        return [f"{CARD}: not UTF-8 text"]
    if not text.startswith("---\n") or "\n---\n" not in text[3:]:
        return [f"{CARD}: no YAML front matter"]
    try:
        # A card needs no aliases; refused, they cannot multiply the patterns checked below.
        meta = loads_yaml(text[4:text.index("\n---\n", 3) + 1], f"{CARD} front matter", aliases=False,
                          first_line=2)
    except ConfigError as exc:
        return [str(exc)]
    configs = meta.get("configs") if isinstance(meta, dict) else None
    if not isinstance(meta, dict) or not isinstance(configs or [], list):
        return [f"{CARD}: front matter is not a dataset card's (a mapping with a `configs` list)"]
    out = []
    matched: dict[str, bool] = {}
    for config in configs or []:
        data_files = config.get("data_files") if isinstance(config, dict) else None
        if not isinstance(data_files or [], list):
            out.append(f"{CARD}: a config whose data_files is not a list")
            continue
        for data in data_files or []:
            name = config.get("config_name")
            pattern = data.get("path") if isinstance(data, dict) else None
            if not isinstance(pattern, str) or outside(pattern):
                out.append(f"{CARD}: config {name}: a data_files path outside the release")
                continue
            if pattern not in matched:
                matched[pattern] = bool(release.glob(pattern))
            if not matched[pattern]:
                out.append(f"{CARD}: config {name} split {data.get('split')}: no file matches {pattern}")
    return out


def _check_seed_format(release: ReleaseFolder, manifest: dict[str, Any]) -> list[str]:
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
    splits = manifest.get("splits")
    proportions = splits.get("proportions") if isinstance(splits, dict) else None
    if not isinstance(proportions, dict):
        return [f"{MANIFEST}: splits: not an object with the splits' `proportions`"]
    out = []
    for split in proportions:
        if outside(split) or "/" in split:
            out.append(f"{MANIFEST}: splits: {split!r} is not a split's name")
            continue
        try:
            out += [f"{name}/{split}/{p}" for p in seed_format.problems(release.child(f"{name}/{split}"))]
        except (ConfigError, Refused, OSError) as exc:  # a file changed between its checks, say
            out.append(f"{name}/{split}: not read ({_why(exc)})")
    return out
