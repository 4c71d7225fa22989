"""`memsynth report`: one self-contained HTML page of a version's figures and diversity.

Figures are declared, not coded: a `Figure` is a title and a query over the version's
tables. The engine's (calls, repairs, drops, tokens, time per stage) apply to every
recipe; each recipe adds its own (`Recipe.report_figures`) and names its generated text
(`Recipe.report_texts`) for the diversity section: distinct-1/2, near duplicates within
and across personas (MinHash), and the most frequent openings, the tell of templated text.
With `--compare M` each figure shows both versions side by side.
"""

from __future__ import annotations

import base64
import html
import io
import math
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memsynth.core.errors import MemsynthError
from memsynth.generation.offers import Figure

ENGINE_FIGURES = (
    Figure("LLM calls and repairs per stage",
           "SELECT stage, count(*) FILTER (WHERE repair_index = 0) AS calls, "
           "count(*) FILTER (WHERE repair_index > 0) AS repairs FROM llm_calls GROUP BY 1 ORDER BY 1"),
    Figure("Dropped and flagged items per stage",
           "SELECT stage, count(*) FILTER (WHERE action = 'dropped') AS dropped, "
           "count(*) FILTER (WHERE action = 'flagged') AS flagged FROM stage_failures GROUP BY 1 ORDER BY 1"),
    Figure("Tokens per stage",
           "SELECT stage, sum(prompt_tokens) AS prompt, sum(completion_tokens) AS completion "
           "FROM llm_calls GROUP BY 1 ORDER BY 1"),
    Figure("Time per stage (summed call seconds)",
           "SELECT stage, round(sum(latency_s), 2) AS seconds FROM llm_calls GROUP BY 1 ORDER BY 1"),
)

# The report's opening: what became of the items, and why the lost ones were lost.
ITEMS_SQL = """
WITH items AS (
    SELECT stage, item_key, max(repair_index) AS repairs, arg_max(outcome, repair_index) AS last
    FROM llm_calls GROUP BY stage, item_key)
SELECT count(*), count(*) FILTER (WHERE repairs = 0 AND last = 'ok'),
       count(*) FILTER (WHERE repairs > 0 AND last = 'ok')
FROM items"""
FAILURES_SQL = "SELECT action, count(*) FROM stage_failures GROUP BY 1"
REASONS_SQL = """
SELECT stage, coalesce(nullif(regexp_extract(problems[1], '^\\[([a-z_]+)\\]', 1), ''), 'other') AS why,
       action, count(*) AS n
FROM stage_failures GROUP BY ALL ORDER BY n DESC, stage, why LIMIT 8"""
# Answers a judge saw (they had passed every check) and those it turned back, per stage.
JUDGED_SQL = """
SELECT stage, count(*) FILTER (WHERE outcome IN ('ok', 'judge_rejected')) AS seen,
       count(*) FILTER (WHERE outcome = 'judge_rejected') AS rejected
FROM llm_calls WHERE stage IN ({stages}) GROUP BY 1 ORDER BY 1"""


def cost_figure(config: dict[str, Any]) -> Figure | None:
    """US dollars per stage at the build's `llm.prices` (batch rates in batch mode; a cache
    hit costs nothing), or None when the config prices none of the models."""
    from memsynth.core.config import Price

    llm = config.get("llm") or {}
    prices = {model: Price.model_validate(p) for model, p in (llm.get("prices") or {}).items()}
    if not prices:
        return None
    batch = llm.get("mode") == "batch"
    values = ", ".join("('" + m.replace("'", "''") + "', {:.6f}, {:.6f}, {:.6f})".format(*p.rates(batch=batch))
                       for m, p in sorted(prices.items()))
    return Figure("Cost per stage (USD at llm.prices" + (", batch rates" if batch else "") + ")",
                  "SELECT stage, round(sum(CASE WHEN cache_hit THEN 0 ELSE ((prompt_tokens - cached_prompt_tokens) "
                  "* p.input + cached_prompt_tokens * p.cached + completion_tokens * p.output) / 1e6 END), 6) AS usd "
                  f"FROM llm_calls JOIN (VALUES {values}) p(model, input, output, cached) USING (model) "
                  "GROUP BY 1 ORDER BY 1")


_CJK = re.compile(r"[\u3400-\u9fff]")
_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def tokens(text: str) -> list[str]:
    """Words, or characters for Chinese text."""
    text = text.casefold()
    return [c for c in text if not c.isspace() and c.isalnum()] if _CJK.search(text) else _WORD.findall(text)


def distinct_n(texts: list[str], n: int) -> float | None:
    """Distinct n-grams over all n-grams of the texts (Li et al.'s distinct-n)."""
    grams: Counter[tuple[str, ...]] = Counter()
    for text in texts:
        words = tokens(text)
        grams.update(tuple(words[i:i + n]) for i in range(len(words) - n + 1))
    total = sum(grams.values())
    return round(len(grams) / total, 4) if total else None


def near_duplicates(items: list[tuple[str, str]], threshold: float = 0.8) -> dict[str, Any]:
    """Texts with a near twin (MinHash Jaccard ≥ threshold), split by whether the twin is
    the same persona's or another's."""
    from datasketch import MinHashLSH

    from memsynth.generation.persona_synthesis import NUM_PERM, minhash

    lsh = MinHashLSH(threshold=threshold * 0.9, num_perm=NUM_PERM)
    hashes = []
    for i, (_, text) in enumerate(items):
        m = minhash(text)
        hashes.append(m)
        lsh.insert(str(i), m)
    within = across = 0
    for i, (persona, _) in enumerate(items):
        twins = [int(j) for j in lsh.query(hashes[i]) if int(j) != i and hashes[int(j)].jaccard(hashes[i]) >= threshold]
        within += any(items[j][0] == persona for j in twins)
        across += any(items[j][0] != persona for j in twins)
    n = len(items) or 1
    return {"texts": len(items), "threshold": threshold, "within_persona": round(within / n, 4),
            "across_personas": round(across / n, 4)}


def openings(texts: list[str], words: int = 3, top: int = 10) -> list[tuple[str, int]]:
    """The most frequent first words of the texts."""
    counts = Counter(" ".join(tokens(t)[:words]) for t in texts if t.strip())
    return counts.most_common(top)


def diversity(items: list[tuple[str, str]]) -> dict[str, Any]:
    texts = [t for _, t in items]
    return {"distinct_1": distinct_n(texts, 1), "distinct_2": distinct_n(texts, 2),
            "near_duplicates": near_duplicates(items), "openings": openings(texts)}


def figure_png(figure: Figure, columns: list[str], rows: list[tuple[Any, ...]]) -> bytes:
    """The figure as PNG bytes that depend on its rows only (no software version or time)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 3.6))
    try:
        if not rows:
            ax.axis("off")
            ax.text(0.5, 0.5, "nothing to plot: no rows", ha="center", va="center", transform=ax.transAxes,
                    color="#666")
        elif figure.kind == "hist":
            values = [r[0] for r in rows if r[0] is not None]
            ax.hist(values, bins=min(30, max(5, len(set(values)))), color="#4878a8")
            ax.set_ylabel("count")
        else:
            labels = [str(r[0]) for r in rows]
            series = columns[1:]
            width = 0.8 / max(1, len(series))
            for k, name in enumerate(series):
                ax.bar([i + k * width for i in range(len(rows))], [r[k + 1] or 0 for r in rows], width, label=name)
            ax.set_xticks([i + width * (len(series) - 1) / 2 for i in range(len(rows))], labels,
                          rotation=40, ha="right", fontsize=8)
            if len(series) > 1:
                ax.legend(fontsize=8)
        ax.set_xlabel(figure.xlabel)
        fig.tight_layout()
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=90, metadata={"Software": None})
    finally:
        plt.close(fig)
    return buffer.getvalue()


def persona_coverage(rows: list[tuple[str, str, Any]]) -> list[dict[str, Any]]:
    """Per attribute of the (persona_id, attribute, value) rows: personas, distinct values, the
    commonest value and its share, and evenness (entropy over its maximum; 1 is perfectly even)."""
    by_attribute: dict[str, Counter[str]] = {}
    for _, attribute, value in rows:
        by_attribute.setdefault(attribute, Counter())[str(value)] += 1
    out = []
    for attribute, counts in by_attribute.items():
        n = sum(counts.values())
        top, top_n = counts.most_common(1)[0]
        entropy = -sum(c / n * math.log(c / n) for c in counts.values())
        evenness = entropy / math.log(len(counts)) if len(counts) > 1 else 0.0
        out.append({"attribute": attribute, "personas": n, "distinct": len(counts), "top": top,
                    "top_share": round(top_n / n, 4), "evenness": round(evenness, 4)})
    return out


def _png(figure: Figure, columns: list[str], rows: list[tuple[Any, ...]]) -> str:
    return base64.b64encode(figure_png(figure, columns, rows)).decode()


def card_quality(con: Any, recipe: Any, plots_dir: Path, skip_titles: set[str]) -> dict[str, Any]:
    """The report's recipe figures, diversity and persona coverage for a release card: each
    figure (but those the card already draws under the same title) as a PNG in `plots_dir`."""
    figures = []
    for figure in recipe.report_figures:
        if figure.title.casefold() in skip_titles:
            continue
        cur = con.execute(figure.sql)
        name = "quality_" + re.sub(r"[^a-z0-9]+", "_", figure.title.casefold()).strip("_")
        plots_dir.mkdir(parents=True, exist_ok=True)
        (plots_dir / f"{name}.png").write_bytes(figure_png(figure, [d[0] for d in cur.description], cur.fetchall()))
        figures.append({"name": name, "title": figure.title})
    texts = [(str(p), str(t)) for p, t in con.execute(recipe.report_texts).fetchall() if t] \
        if recipe.report_texts else []
    return {"figures": figures, "diversity": diversity(texts) if texts else None,
            "coverage": persona_coverage(con.execute(recipe.report_personas).fetchall())
            if recipe.report_personas else []}


def report_steps(warehouse: Path, dataset: str, version: int | None = None, compare: int | None = None) -> int:
    """How many times `build_report` calls its `step`: for a progress bar's total."""
    from memsynth.generation.registry import recipe_class
    from memsynth.warehouse.catalog import open_version

    con, row = open_version(warehouse, dataset, version)
    con.close()
    recipe = recipe_class(row["recipe"])
    figures = len(ENGINE_FIGURES) + len(recipe.report_figures) + (cost_figure(row.get("config") or {}) is not None)
    sections = 1 + figures + bool(recipe.report_texts) + bool(recipe.report_personas)
    return sections * (2 if compare is not None else 1)


def build_report(warehouse: Path, dataset: str, version: int | None = None, compare: int | None = None,
                 step: Callable[[], None] | None = None) -> str:
    """The HTML page for a version (and, with `compare`, another version beside it);
    `step()` is called as each part is done."""
    from memsynth.generation.registry import recipe_class
    from memsynth.warehouse.catalog import open_version

    con, row = open_version(warehouse, dataset, version)
    con.close()
    versions = [row["version"]]
    if compare is not None:
        other_con, other = open_version(warehouse, dataset, compare)
        other_con.close()
        if other["recipe"] != row["recipe"]:
            raise MemsynthError(f"version {compare} is a {other['recipe']} version, not {row['recipe']}")
        versions.append(other["version"])
    recipe = recipe_class(row["recipe"])
    cost = cost_figure(row.get("config") or {})
    figures = (*ENGINE_FIGURES[:3], *([cost] if cost else []), *ENGINE_FIGURES[3:], *recipe.report_figures)
    step = step or (lambda: None)
    head = (f"{dataset} version {versions[0]}" + (f" beside version {versions[1]}" if compare is not None else ""))
    parts = [f"<h1>{html.escape(head)}</h1>",
             f"<p>recipe {html.escape(row['recipe'])}; rows: " + html.escape(", ".join(
                 f"{t} {n:,}" for t, n in sorted((row.get("row_counts") or {}).items()))) + "</p>"]
    judged = [s.qualified_name for s in recipe.all_stages() if getattr(s, "judge", None) is not None]
    meta = {row["version"]: row, **({other["version"]: other} if compare is not None else {})}
    sqls = {**_summary_sqls(judged), **{f"figure {i}": f.sql for i, f in enumerate(figures)},
            **({"texts": recipe.report_texts} if recipe.report_texts else {}),
            **({"personas": recipe.report_personas} if recipe.report_personas else {})}
    answers = {v: _answers(warehouse, dataset, sqls, v) for v in versions}

    def summary(v: int) -> str:
        cell = _summary_cell(answers[v], meta[v], judged)
        step()
        return cell

    parts.append(_beside("What decides", versions, summary))
    charts, empty = [], []
    for i, figure in enumerate(figures):
        results = []
        for v in versions:
            results.append(answers[v][f"figure {i}"])
            step()
        if not any(rows for _, rows in results):
            empty.append(figure.title)  # a chart of nothing is a line below, not a screen
            continue
        cells = [f'<td><div class="v">version {v}</div><img alt="{html.escape(figure.title)}" '
                 f'src="data:image/png;base64,{_png(figure, columns, rows)}"></td>'
                 for v, (columns, rows) in zip(versions, results)]
        charts.append(f"<section><h2>{html.escape(figure.title)}</h2><table><tr>{''.join(cells)}</tr></table>"
                      "</section>")
    # One version: two charts a row; two versions: a row per chart, the versions side by side.
    parts.append(f'<div class="{"wide" if compare is not None else "grid"}">{"".join(charts)}</div>')
    if empty:
        parts.append(f'<p class="v">Nothing to plot (no rows): {html.escape("; ".join(empty))}.</p>')
    if recipe.report_texts:
        parts.append(_beside("Diversity of generated text", versions, lambda v: _stepped(step, _diversity_cell(
            answers[v]["texts"][1]))))
    if recipe.report_personas:
        parts.append(_beside("Persona attribute coverage", versions, lambda v: _stepped(step, _coverage_cell(
            answers[v]["personas"][1]))))
    style = ("body{font-family:sans-serif;margin:2em;max-width:1500px}td{vertical-align:top;padding:0 1em}"
             "img{max-width:100%}.v{color:#666;font-size:90%}table.numbers td{border-bottom:1px solid #ddd}"
             ".grid{display:flex;flex-wrap:wrap;gap:0 2em}.grid section{flex:1 1 640px;max-width:720px}"
             "h2{font-size:1.2em;margin-top:1.5em}")
    return (f"<!doctype html><html><head><meta charset=\"utf-8\"><title>{html.escape(head)}</title>"
            f"<style>{style}</style></head><body>{''.join(parts)}</body></html>\n")


def _stepped(step: Callable[[], None], value: str) -> str:
    step()
    return value


Answers = dict[str, tuple[list[str], list[tuple[Any, ...]]]]


def _answers(warehouse: Path, dataset: str, sqls: dict[str, str], version: int) -> Answers:
    """Every query of the page for one version, the catalog attached once: {name: (columns, rows)}."""
    from memsynth.warehouse.catalog import run_queries

    results, _ = run_queries(warehouse, dataset, list(sqls.values()), version)
    return dict(zip(sqls, results))


def _summary_sqls(judged: list[str]) -> dict[str, str]:
    """The queries behind the "What decides" cell, by the name `_summary_cell` reads them."""
    stages = ", ".join("'" + j.replace("'", "''") + "'" for j in judged)
    return {"items": ITEMS_SQL, "failures": FAILURES_SQL, "reasons": REASONS_SQL,
            **({"judged": JUDGED_SQL.format(stages=stages)} if judged else {})}


def _summary_cell(answers: Answers, row: dict[str, Any], judged: list[str]) -> str:
    """Items kept, repaired, dropped and flagged, the main reasons, the cost, the judges' pass rates."""
    items, first, repaired = answers["items"][1][0]
    lost = dict(answers["failures"][1])
    reasons = answers["reasons"][1]
    cost = row.get("estimated_cost_usd")
    lines = [("items asked", f"{items:,}"), ("right the first time", f"{first:,}"), ("repaired", f"{repaired:,}"),
             ("dropped", f"{lost.get('dropped', 0):,}"), ("flagged (kept, marked)", f"{lost.get('flagged', 0):,}"),
             ("LLM calls (sent / from the cache)",
              f"{row.get('llm_calls') or 0:,} ({row.get('llm_requests') or 0:,} / {row.get('llm_cache_hits') or 0:,})"),
             ("estimated cost", "unknown (no price for the model)" if cost is None else f"${cost:,.2f}")]
    if judged:
        for stage, seen, rejected in answers["judged"][1]:
            rate = f"{(seen - rejected) / seen:.0%}" if seen else "–"
            lines.append((f"judge of {stage}: passed", f"{seen - rejected:,} of {seen:,} ({rate})"))
    table = "".join(f"<tr><td>{html.escape(k)}</td><td>{html.escape(v)}</td></tr>" for k, v in lines)
    why = "".join(f"<tr><td>{html.escape(stage)}</td><td>{html.escape(reason)}</td><td>{html.escape(action)}</td>"
                  f"<td>{n:,}</td></tr>" for stage, reason, action, n in reasons)
    return (f'<table class="numbers">{table}</table>'
            + (f'<p>Why items were dropped or flagged (the first problem\'s check)</p><table class="numbers">'
               f"<tr><th>stage</th><th>check</th><th>action</th><th>items</th></tr>{why}</table>" if why else ""))


def _beside(title: str, versions: list[int], cell: Any) -> str:
    """A section with `cell(version)` for each version, side by side."""
    cells = "".join(f'<td><div class="v">version {v}</div>{cell(v)}</td>' for v in versions)
    return f"<h2>{html.escape(title)}</h2><table><tr>{cells}</tr></table>"


def _diversity_cell(rows: list[tuple[Any, ...]]) -> str:
    d = diversity([(str(p), str(t)) for p, t in rows if t])
    nd = d["near_duplicates"]
    opening_rows = "".join(f"<tr><td>{html.escape(o)}</td><td>{n}</td></tr>" for o, n in d["openings"])
    return ('<table class="numbers">'
            f"<tr><td>texts</td><td>{nd['texts']:,}</td></tr>"
            f"<tr><td>distinct-1</td><td>{d['distinct_1']}</td></tr>"
            f"<tr><td>distinct-2</td><td>{d['distinct_2']}</td></tr>"
            f"<tr><td>near duplicates within a persona (Jaccard ≥ {nd['threshold']})</td>"
            f"<td>{nd['within_persona']:.1%}</td></tr>"
            f"<tr><td>near duplicates across personas</td><td>{nd['across_personas']:.1%}</td></tr>"
            f"</table><p>Most frequent openings</p><table class=\"numbers\">{opening_rows}</table>")


def _coverage_cell(rows: list[tuple[Any, ...]]) -> str:
    body = "".join(
        f"<tr><td>{html.escape(c['attribute'])}</td><td>{c['personas']:,}</td><td>{c['distinct']:,}</td>"
        f"<td>{html.escape(c['top'][:60])} ({c['top_share']:.0%})</td><td>{c['evenness']:.2f}</td></tr>"
        for c in persona_coverage(rows))
    return ('<table class="numbers"><tr><th>attribute</th><th>personas</th><th>distinct values</th>'
            f"<th>most common</th><th>evenness</th></tr>{body}</table>")


def write_report(warehouse: Path, dataset: str, out: Path, version: int | None = None,
                 compare: int | None = None, step: Callable[[], None] | None = None) -> Path:
    """Write the page to `out` whole (a temporary file, then a rename)."""
    page = build_report(warehouse, dataset, version, compare, step)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_text(page, encoding="utf-8")
    tmp.replace(out)
    return out
