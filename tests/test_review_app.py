"""`memsynth review`: the Streamlit app under AppTest, and once in a real headless browser."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from memsynth.quality.review.agreement import dataset_agreement
from memsynth.quality.review.items import APP, APP_SETTINGS, stratified_sample
from memsynth.warehouse.annotations import AnnotationLog, Judgment
from memsynth.warehouse.catalog import run_query
from tests.conftest import ROOT, cli_here, cli_json_here, memsynth_cli, write_config

# One worker runs the whole module, so its module fixture (builds) is made once, not once per worker.
pytestmark = pytest.mark.xdist_group("review_app")

LOCOMO_SAMPLE = ROOT / "tests" / "data" / "locomo_sample.json"
BUILDS = {
    "enpmr": ({"count": 2}, {"dialogues_per_persona": 3}),
    "pal": ({"count": 2}, {"months": [2, 2]}),
    "stratmem": ({"count": 1}, {"source": f"locomo:{LOCOMO_SAMPLE}", "windows": [1], "max_sessions": 2}),
}
ARTIFACTS = Path(os.environ.get("MEMSYNTH_TEST_ARTIFACTS", ROOT / "tests" / "artifacts"))


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory) -> Path:
    """One simulator build of each recipe, a dataset each (named after the recipe)."""
    folder = tmp_path_factory.mktemp("review")
    for recipe, (personas, options) in BUILDS.items():
        config = write_config(folder / f"{recipe}.yaml", dataset=recipe, recipe=recipe, personas=personas,
                              recipe_options=options)
        cli_json_here("build", str(config), "--llm", "simulator", "--warehouse", str(folder / "wh"), "--no-progress",
                      "--format", "json")
    return folder / "wh"


def open_app(warehouse: Path, monkeypatch, dataset: str = "enpmr", annotator: str = "ann", size: int = 6,
             **more) -> AppTest:
    """The app as `memsynth review` starts it, run once."""
    monkeypatch.setenv(APP_SETTINGS, json.dumps({"warehouse": str(warehouse), "dataset": dataset,
                                                 "annotator": annotator, "size": size, **more}))
    app = AppTest.from_file(str(APP), default_timeout=60).run()
    assert not app.exception, [e.message for e in app.exception]
    return app


def judgments_table(app: AppTest) -> list[tuple[str, str, str]]:
    if not app.table:
        return []
    frame = app.table[-1].value  # item, criterion, value (headed in the dataset's language)
    return [tuple(r) for r in frame.iloc[:, :3].itertuples(index=False)]


def test_the_sample_is_stratified_seeded_and_covers_every_stratum():
    rows = [(f"a{i}", "A") for i in range(60)] + [(f"b{i}", "B") for i in range(30)] + [("c0", "C")]
    picked = stratified_sample(rows, 10, seed=3)
    assert len(picked) == len({i for i, _ in picked}) == 10
    assert Counter(s for _, s in picked) == {"A": 6, "B": 3, "C": 1}  # in proportion, the rare one kept
    assert {s for _, s in picked[:3]} == {"A", "B", "C"}  # the first items already cover every stratum
    assert stratified_sample(list(reversed(rows)), 10, seed=3) == picked  # the rows' order does not matter
    assert stratified_sample(rows, 10, seed=4) != picked
    assert len(stratified_sample(rows, 500, seed=0)) == 91  # never more than there is
    assert Counter(s for _, s in stratified_sample(rows, 2, seed=0)) == {"A": 1, "B": 1}  # no room for all


def test_a_judgment_is_saved_at_once_and_is_there_after_a_restart(warehouse: Path, monkeypatch):
    app = open_app(warehouse, monkeypatch)
    assert app.title[0].value == "Item 1 of 6"
    first = app.caption[0].value.split(" · ")[0]
    app.button(key="q0-yes").click().run()  # appropriateness
    app.button(key="q1-no").click().run()  # relevance
    app.text_input[0].input("the scene never says why").run()
    assert judgments_table(app) == [(first, "appropriateness", "yes"), (first, "relevance", "no"),
                                    (first, "_comment", "the scene never says why")]
    on_disk = AnnotationLog(warehouse / "enpmr").judgments(annotator="ann")
    assert {(j.item_id, j.criterion, j.value, j.version) for j in on_disk} == {
        (first, "appropriateness", "yes", 1), (first, "relevance", "no", 1),
        (first, "_comment", "the scene never says why", 1)}

    restarted = open_app(warehouse, monkeypatch)  # a new session: nothing carried over but the files
    assert restarted.title[0].value == "Item 1 of 6"  # the item is not finished: correctness is open
    assert restarted.button(key="q0-yes").proto.type == "primary"
    assert restarted.button(key="q1-no").proto.type == "primary"
    assert restarted.text_input[0].value == "the scene never says why"
    restarted.button(key="q2-yes").click().run()
    restarted.button(key="q0-no").click().run()  # a change of mind: the newer answer counts
    assert restarted.button(key="q0-no").proto.type == "primary"
    assert restarted.sidebar.get("progress")[0].proto.text == "1 of 6 items judged"
    restarted.button(key="next").click().run()
    assert restarted.title[0].value == "Item 2 of 6"
    assert open_app(warehouse, monkeypatch).title[0].value == "Item 2 of 6"  # it resumes at the first open item


def test_two_annotators_do_not_collide(warehouse: Path, monkeypatch):
    ann = open_app(warehouse, monkeypatch, annotator="cy")
    bea = open_app(warehouse, monkeypatch, annotator="di")
    assert ann.caption[0].value == bea.caption[0].value  # same task, size and seed: the same items
    ann.button(key="q0-yes").click().run()
    bea.button(key="q0-no").click().run()
    ann.button(key="q1-yes").click().run()
    log = AnnotationLog(warehouse / "enpmr")
    assert {j.value for j in log.judgments(annotator="cy") if j.criterion == "appropriateness"} == {"yes"}
    assert {j.value for j in log.judgments(annotator="di") if j.criterion == "appropriateness"} == {"no"}
    assert [r[1:] for r in judgments_table(bea)] == [("appropriateness", "no")]  # only her own
    assert [r[1:] for r in judgments_table(ann.run())] == [("appropriateness", "yes"), ("relevance", "yes")]


@pytest.mark.parametrize("dataset,criteria,options", [
    ("pal", {"logs", "dialogue"}, ("1", "2", "3")),
    ("stratmem", {"role"}, ("must", "nice", "irr")),
])
def test_every_recipe_has_items_to_judge(warehouse: Path, monkeypatch, dataset, criteria, options):
    app = open_app(warehouse, monkeypatch, dataset=dataset, annotator="eve")
    labels = [b.label for b in app.button if b.key.startswith("q")]
    assert labels[:len(options)] == list(options)
    app.button(key=f"q0-{options[-1]}").click().run()
    (judged,) = AnnotationLog(warehouse / dataset).judgments(annotator="eve")
    assert judged.criterion in criteria and judged.value == options[-1]
    if dataset == "stratmem":  # the labellers' roles are not shown to the annotator
        roles = {r[0] for r in run_query(warehouse, dataset, "SELECT DISTINCT role FROM stratmem_memories")[1]}
        shown = " ".join(str(m.value) for m in app.markdown)
        assert judged.item_id.startswith(app.caption[0].value.split(" · ")[0] + "#")
        assert not any(f"role: {r}" in shown for r in roles)


def test_a_chinese_dataset_is_reviewed_in_chinese(tmp_path: Path, monkeypatch):
    config = write_config(tmp_path / "zh.yaml", dataset="zh", recipe="enpmr", language="zh", personas={"count": 1},
                          recipe_options={"dialogues_per_persona": 2})
    cli_json_here("build", str(config), "--llm", "simulator", "--warehouse", str(tmp_path / "wh"), "--no-progress",
                  "--format", "json")
    app = open_app(tmp_path / "wh", monkeypatch, dataset="zh", annotator="zhou", size=2)
    assert app.title[0].value == "第 1 条，共 2 条"
    prompts = " ".join(str(m.value) for m in app.markdown)
    assert "记忆轮次的语气" in prompts and "Is the memory turn" not in prompts
    assert any("场景——未被满足的需求" in h.value for h in app.subheader)
    app.button(key="q0-yes").click().run()
    assert [r[1:] for r in judgments_table(app)] == [("appropriateness", "yes")]  # criteria keep their names


def test_enpmr_judge_labels_meet_the_annotators_in_agreement(warehouse: Path):
    _, labels, _ = run_query(warehouse, "enpmr", "SELECT * FROM (" + __import__(
        "flows.enpmr.review", fromlist=["JUDGE_LABELS"]).JUDGE_LABELS + ") ORDER BY ALL")
    dialogues = run_query(warehouse, "enpmr", "SELECT count(*) FROM support_dialogues")[1][0][0]
    assert Counter(c for _, c, _ in labels) == {"appropriateness": dialogues, "relevance": dialogues,
                                                 "correctness": dialogues}
    # An annotator who agrees with the judge on every item but the first two of relevance.
    log = AnnotationLog(warehouse / "enpmr")
    relevance = [(i, v) for i, c, v in labels if c == "relevance"]
    for n, (item, value) in enumerate(relevance):
        flipped = {"yes": "no", "no": "yes"}[value] if n < 2 else value
        log.record(Judgment(item, "relevance", flipped, "judge-check"))
    result = dataset_agreement(warehouse, "enpmr")
    (row,) = [c for c in result["criteria"] if c["criterion"] == "relevance"]
    judge = row["judge"]["judge-check"]
    n = len(relevance)
    yes_judge = sum(v == "yes" for _, v in relevance)
    yes_ann = yes_judge + sum(+1 if v == "no" else -1 for _, v in relevance[:2])
    p_o = (n - 2) / n
    p_e = (yes_judge * yes_ann + (n - yes_judge) * (n - yes_ann)) / n ** 2
    assert judge["items"] == n
    if p_e == 1:
        assert judge["kappa"] is None
    else:
        assert judge["kappa"] == pytest.approx((p_o - p_e) / (1 - p_e), abs=1e-4)


def test_judgments_are_an_annotations_table_to_query(warehouse: Path):
    AnnotationLog(warehouse / "pal").record(Judgment("x-1", "logs", "2", "fay"))
    AnnotationLog(warehouse / "pal").record(Judgment("x-1", "logs", "3", "fay"))
    result = cli_json_here("query", "SELECT annotator, item_id, criterion, value FROM annotations WHERE annotator = 'fay'",
                           "--dataset", "pal", "--warehouse", str(warehouse), "--format", "json")
    assert result == [{"annotator": "fay", "item_id": "x-1", "criterion": "logs", "value": "3"}]


def test_review_refuses_bad_input_in_one_line(warehouse: Path):
    for args, words in ((["--task", "nope"], "no review task 'nope'"), (["--annotator", "a/b"], "annotator"),
                        (["--version", "9"], "version")):
        result = memsynth_cli("review", "--dataset", "enpmr", "--warehouse", str(warehouse),
                              *(["--annotator", "ann"] if "--annotator" not in args else []), *args)
        assert result.returncode != 0 and "Traceback" not in result.stderr, result.stderr
        assert len(result.stderr.strip().splitlines()) == 1 and words in result.stderr
    helped = cli_here("review", "--help")[1]
    for flag in ("--dataset", "--version", "--annotator", "--task", "--sample", "--seed", "--port", "--address",
                 "--warehouse"):
        assert flag in helped


# --- in a real browser -------------------------------------------------------------------


def _chromium() -> str | None:
    return next((p for p in map(shutil.which, ("chromium", "chromium-browser")) if p), None)


def _wait_serving(app: subprocess.Popen, port: int, timeout_s: float = 60) -> None:
    """Until the app answers on `port`; fails if it exits first."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), 0.5).close()
            return
        except OSError:
            assert app.poll() is None and time.monotonic() < deadline, "the app never served"
            time.sleep(0.2)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.skipif(_chromium() is None, reason="Debian's chromium is not installed (apt-get install chromium)")
def test_in_a_headless_browser_a_click_lands_in_the_table_and_the_report_renders(warehouse: Path, tmp_path: Path):
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    port = _free_port()
    exe = Path(sys.executable).parent / "memsynth"
    command = [str(exe)] if exe.exists() else [sys.executable, "-m", "memsynth.cli"]
    app = subprocess.Popen([*command, "review", "--dataset", "enpmr", "--warehouse",
                            str(warehouse), "--annotator", "browser", "--sample", "6", "--port", str(port)],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=ROOT)
    report = tmp_path / "report.html"
    assert cli_here("report", "--dataset", "enpmr", "--warehouse", str(warehouse), "--out", str(report))[0] == 0
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    try:
        _wait_serving(app, port)
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=_chromium(), args=["--no-sandbox"])
            try:
                page = browser.new_page(viewport={"width": 1400, "height": 1100})
                page.goto(f"http://127.0.0.1:{port}")
                page.get_by_text("Item 1 of 6").wait_for(timeout=60_000)
                page.get_by_role("button", name="yes").first.click()
                page.locator("table").filter(has_text="appropriateness").wait_for(timeout=20_000)
                page.keyboard.press("n")  # the shortcut answers the next open question: relevance
                page.locator("table").filter(has_text="relevance").wait_for(timeout=20_000)
                page.screenshot(path=ARTIFACTS / "review-app.png", full_page=True)
                saved = AnnotationLog(warehouse / "enpmr").judgments(annotator="browser")
                assert sorted((j.criterion, j.value) for j in saved) == [("appropriateness", "yes"),
                                                                          ("relevance", "no")]

                page.goto(report.as_uri())
                images = page.locator("img")
                assert images.count() > 0
                rendered = page.evaluate("[...document.images].map(i => i.complete && i.naturalWidth > 0)")
                assert rendered == [True] * images.count()
                page.screenshot(path=ARTIFACTS / "report.png", full_page=True)
            finally:
                browser.close()
    finally:
        app.terminate()
        app.wait(timeout=20)
    assert (ARTIFACTS / "review-app.png").stat().st_size > 10_000


def test_sigterm_to_review_stops_the_app_it_serves(warehouse: Path):
    import signal

    port = _free_port()
    exe = Path(sys.executable).parent / "memsynth"
    app = subprocess.Popen([str(exe), "review", "--dataset", "enpmr", "--warehouse", str(warehouse),
                            "--annotator", "term", "--sample", "2", "--port", str(port)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
    _wait_serving(app, port)
    app.send_signal(signal.SIGTERM)
    app.wait(timeout=20)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), 0.5).close()
            time.sleep(0.2)
        except OSError:
            return
    raise AssertionError("Streamlit is still serving after memsynth review got SIGTERM")


def _handshake(port: int, host: str, path: str, websocket: bool) -> str:
    """The status line the app answers a request (a websocket upgrade, or a plain GET) that
    names `host` as its Host, as a page on a rebound name would."""
    upgrade = ("Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
               "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Protocol: streamlit\r\n"
               f"Origin: http://{host}\r\n" if websocket else "")
    with socket.create_connection(("127.0.0.1", port), 10) as conn:
        conn.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\n{upgrade}\r\n".encode())
        conn.settimeout(20)
        return conn.recv(4096).decode("latin-1").split("\r\n", 1)[0]


def test_the_app_refuses_a_foreign_host_over_http_and_websocket(warehouse: Path):
    """DNS rebinding: a page on evil.example whose name now resolves to 127.0.0.1 reaches the
    app's port with `Host: evil.example:<port>`; the app answers it nothing."""
    port = _free_port()
    exe = Path(sys.executable).parent / "memsynth"
    app = subprocess.Popen([str(exe), "review", "--dataset", "enpmr", "--warehouse", str(warehouse),
                            "--annotator", "host", "--sample", "2", "--port", str(port), "--allow-host", "review.lab"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        _wait_serving(app, port)
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"review.lab:{port}"):
            assert " 200 " in _handshake(port, host, "/", websocket=False), host
            assert " 101 " in _handshake(port, host, "/_stcore/stream", websocket=True), host
        for host in (f"evil.example:{port}", "evil.example", f"127.0.0.1.evil.example:{port}", f"localhost.:{port}"):
            assert " 400 " in _handshake(port, host, "/", websocket=False), host
            assert " 400 " in _handshake(port, host, "/_stcore/stream", websocket=True), host
            assert " 400 " in _handshake(port, host, "/_stcore/health", websocket=False), host
    finally:
        app.terminate()
        app.wait(timeout=30)
