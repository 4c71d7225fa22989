"""A build's summary as Markdown, left on its Prefect run for the UI (what the terminal summary shows)."""

from __future__ import annotations

import logging
from typing import Any


def report_markdown(s: dict[str, Any]) -> str:
    """Rows per table, LLM usage and cost, failures and check pass rates per stage."""
    llm = s["llm"]
    head = f"# {s['dataset']} version {s['version']}" + (" (nothing changed: not published again)"
                                                         if s.get("unchanged") else "")
    lines = [head, "",
             f"{s['personas']} personas in {s['shards']} shards, model `{s['model']}`, {s['seconds']} s; "
             f"{s['failed_items']} of {s['items']} items failed"
             + (f", {s['lost_items']} of them never asked by the {s['lost_personas']} personas that lost their chain."
                if s.get("lost_items") else "."), "",
             "| table | rows |", "|---|---:|"]
    lines += [f"| {name} | {n:,} |" for name, n in sorted(s["row_counts"].items())]
    lines += ["", "| LLM | |", "|---|---:|",
              f"| calls | {llm['calls']:,} |", f"| from cache | {llm['cache_hits']:,} |",
              f"| requests sent | {llm['requests']:,} |", f"| retries | {llm['retries']:,} |",
              f"| prompt tokens | {llm['prompt_tokens']:,} |",
              f"| completion tokens | {llm['completion_tokens']:,} |",
              f"| estimated cost | ${llm['estimated_cost_usd']:.4f} |"]
    lines += ["", "| stage | items | ok | repaired | flagged | dropped | runaways | budget | largest answer |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    lines += [f"| {name} | " + " | ".join(str(c.get(k, 0)) for k in ("items", "ok", "repaired", "flagged", "dropped",
                                                                      "runaways"))
              + f" | {'limit' if c.get('budget') is None else c['budget']} | {c.get('largest_answer', 0)} |"
              for name, c in s["stages"].items()]
    if s.get("checks"):
        lines += ["", "| check | passed | total | pass rate |", "|---|---:|---:|---:|"]
        lines += [f"| {name} | {c.get('passed', 0)} | {c.get('total', 0)} | "
                  f"{'' if c['pass_rate'] is None else format(c['pass_rate'], '.0%')} |"
                  for name, c in s["checks"].items()]
    if s.get("statistics"):
        seed = s.get("seed_figures") or {}
        lines += ["", "| figure | this build | seed |", "|---|---:|---:|"]
        lines += [f"| {name} | {value} | {seed.get(name, '')} |" for name, value in s["statistics"].items()]
    return "\n".join(lines) + "\n"


def attach_report(flow_run_id: Any, summary: dict[str, Any]) -> None:
    """Leave the summary on the build's Prefect run as a Markdown artifact."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.actions import ArtifactCreate

    if flow_run_id is None:
        return
    try:
        with get_client(sync_client=True) as client:
            client.create_artifact(ArtifactCreate(
                key=f"memsynth-{summary['dataset']}".replace("_", "-"), type="markdown",
                description=f"{summary['dataset']} version {summary['version']}",
                data=report_markdown(summary), flow_run_id=flow_run_id))
    except Exception as exc:  # noqa: BLE001 - the version is published; the report is a view of it
        logging.getLogger("memsynth").warning("could not attach the build report to Prefect: %s", exc)
