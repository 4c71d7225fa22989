"""`memsynth query` is read-only: 80+ attack forms, each refused in one line or harmless,
and the catalog and every data file byte-identical afterwards (issue 31)."""

from __future__ import annotations

import hashlib
import tempfile
import time

import pytest
from pydantic import BaseModel

from memsynth.core.errors import MemsynthError
from memsynth.core.tables import Table
from memsynth.warehouse.catalog import run_query
from memsynth.warehouse.publish import VersionInfo, publish
from memsynth.warehouse.staging import StagingArea


class Row(BaseModel):
    id: int
    name: str


def _warehouse(root):
    staging = StagingArea(root / "d", "b0")
    staging.write(Table("things", Row), "shard-0", [Row(id=i, name=f"n{i}") for i in range(5)])
    try:
        publish(root, "d", {"things": staging.files("things")}, VersionInfo(
            build_id="b0", recipe="test", config={"dataset": "d"}, config_hash="h", memsynth_version="0",
            prompt_hashes={}, schema_hashes={}, model="m", started_at=time.time(), llm={}))
    finally:
        staging.discard()
    (root / "d" / "annotations").mkdir(exist_ok=True)
    (root / "d" / "annotations" / "judgments.jsonl").write_text('{"id": 1}\n')
    (root / "elsewhere").mkdir()
    (root / "elsewhere" / "schema.sql").write_text("CREATE TABLE secret_token_xyz (a INT);\n")


def _files(root):
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def _attacks(root):
    data = next((root / "d").rglob("*.parquet")).as_posix()
    catalog = next(p for p in (root / "d").iterdir() if p.is_file() and p.suffix in (".ducklake", ".db")).as_posix()
    judgments = (root / "d" / "annotations" / "judgments.jsonl").as_posix()
    targets = [data, catalog, judgments, (root / "new.parquet").as_posix(), ".tmp/x.csv"]
    forms = []
    for t in targets:
        forms += [
            f"COPY (SELECT 1) TO '{t}'",
            f"COPY things TO '{t}' (FORMAT parquet)",
            f"EXPLAIN ANALYZE COPY (SELECT * FROM things) TO '{t}'",
            f"EXPLAIN COPY (SELECT 1) TO '{t}'",
            f"explain analyze copy (select 1) to '{t}'",
            f"/* a comment */ COPY (SELECT 1) TO '{t}'",
            f"-- note\nCOPY (SELECT 1) TO '{t}'",
            f"WITH x AS (SELECT 1) COPY x TO '{t}'",
            f"SELECT * FROM query('COPY (SELECT 1) TO ''{t}''')",
            f"EXPORT DATABASE '{t}'",
            f"SELECT 1; COPY (SELECT 1) TO '{t}'",
            f"EXPLAIN EXPLAIN ANALYZE COPY (SELECT 1) TO '{t}'",
        ]
    forms += [
        f"IMPORT DATABASE '{(root / 'elsewhere').as_posix()}'",
        "IMPORT DATABASE '/nonexistent/dir'",
        "INSERT INTO things VALUES (9, 'x')", "UPDATE things SET name = 'x'", "DELETE FROM things",
        "DROP TABLE things", "ALTER TABLE things ADD COLUMN y INT", "CREATE TABLE x AS SELECT 1",
        "CREATE VIEW v AS SELECT 1", "CREATE MACRO m(a) AS a", "CREATE SECRET s (TYPE s3, KEY_ID 'k')",
        "ATTACH ':memory:' AS m", "DETACH lake", "USE memory", "INSTALL httpfs", "LOAD httpfs",
        # memsynth's connections take unsigned extensions (their wheels are trusted as duckdb is)
        f"LOAD '{(root / 'elsewhere' / 'x.duckdb_extension').as_posix()}'",
        "SET enable_external_access = true", "RESET allowed_directories", "PRAGMA enable_profiling",
        "PRAGMA version", "CALL checkpoint()", "CHECKPOINT", "FORCE CHECKPOINT", "VACUUM", "BEGIN", "COMMIT",
        "ROLLBACK", "PREPARE p AS SELECT 1", "EXECUTE p", "UPDATE EXTENSIONS", "PIVOT things ON name",
        "SELECT * FROM checkpoint()", "SELECT * FROM force_checkpoint()",
        "SELECT * FROM ducklake_merge_adjacent_files('lake')",
        "SELECT * FROM ducklake_expire_snapshots('lake', older_than => now())",
        "SELECT * FROM ducklake_cleanup_old_files('lake', cleanup_all => true)",
        "SELECT * FROM ducklake_flush_inlined_data('lake')",
        "SELECT * FROM ducklake_rewrite_data_files('lake')",
        f"SELECT * FROM ducklake_add_data_files('lake', 'things', '{data}')",
        "SELECT * FROM ducklake_set_option('lake', 'parquet_compression', 'gzip')",
        "SELECT id FROM things WHERE id IN (SELECT * FROM ducklake_merge_adjacent_files('lake'))",
        "SELECT * FROM read_text('/etc/passwd')", "SELECT * FROM read_csv('/etc/passwd')",
        "SELECT * FROM glob('/etc/*')", "SELECT * FROM read_blob('/etc/hostname')",
        f"SELECT * FROM read_text('{(root / 'elsewhere' / 'schema.sql').as_posix()}')",
        "SELECT * FROM read_parquet('https://example.com/x.parquet')",
        "SELECT getenv('HOME')", "SELECT * FROM duckdb_secrets()",
        "SELECT count(*) FROM things", "DESCRIBE things", "SHOW TABLES", "SUMMARIZE things",
        "SELECT * FROM things ORDER BY name DESC", "EXPLAIN SELECT * FROM things",
        "SELECT count(*) FROM range(3000000) r JOIN range(10) s ON true",
        "", "   ", "-- only a comment",
    ]
    return forms


def test_no_query_writes_anything_and_each_refusal_is_one_line(tmp_path, monkeypatch):
    root = tmp_path / "wh"
    root.mkdir()
    _warehouse(root)
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    spills = tmp_path / "tmp"  # this test's own temp root: other tests' queries spill elsewhere
    spills.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(spills))
    before = _files(root)
    forms = _attacks(root)
    assert len(forms) >= 80
    refused = 0
    for sql in forms:
        try:
            run_query(root, "d", sql)
        except MemsynthError as exc:
            refused += 1
            message = str(exc)
            assert "\n" not in message and message, sql
            assert "secret_token_xyz" not in message, f"{sql!r} leaked a file's contents: {message}"
        assert _files(root) == before, f"{sql!r} changed the warehouse"
    assert refused >= 75
    assert not any(cwd.iterdir()), "nothing may be written in the working directory (no .tmp)"
    assert run_query(root, "d", "SELECT count(*) FROM things")[1] == [(5,)]
    assert not any(spills.iterdir()), "each query's spill directory is removed after it"


@pytest.mark.parametrize("sql,needle", [
    ("EXPLAIN ANALYZE COPY (SELECT 1) TO 'x'", "EXPLAIN ANALYZE runs its statement"),
    ("IMPORT DATABASE '/etc'", "refused a IMPORT statement"),
    ("SELECT * FROM ducklake_merge_adjacent_files('lake')", "ducklake_merge_adjacent_files()"),
    ("SELECT * FROM query('SELECT 1')", "query()"),
    ("EXPLAIN COPY (SELECT 1) TO 'x'", "refused a COPY statement"),
])
def test_refusals_say_what_was_refused(sql, needle):
    from memsynth.warehouse.readonly import check_read_only

    with pytest.raises(MemsynthError, match=None) as caught:
        check_read_only(sql)
    assert needle in str(caught.value)
