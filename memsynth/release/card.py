"""The release's README.md: a Hugging Face dataset card with its front matter, stats and plots."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jinja2
import yaml

from memsynth.quality.review.report import card_quality
from memsynth.release.plots import bar_chart

if TYPE_CHECKING:
    from memsynth.release.error_rates import ErrorRates
    from memsynth.release.views import VersionTables

_ENV = jinja2.Environment(loader=jinja2.FileSystemLoader(Path(__file__).parent), autoescape=False,
                          keep_trailing_newline=True, undefined=jinja2.StrictUndefined)
# Config keys whose values are secrets; `api_key_env` only names a variable and stays.
_SECRET_KEY = re.compile(r"(api_?key|token|secret|password)$", re.IGNORECASE)
_URL_USER = re.compile(r"(://)[^/@\s]+@")
SIZE_CATEGORIES = [(1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"),
                   (1_000_000, "100K<n<1M"), (10_000_000, "1M<n<10M")]


def redact(value: Any) -> Any:
    """The config with secret values and URL credentials replaced by `<redacted>`."""
    if isinstance(value, dict):
        return {k: "<redacted>" if _SECRET_KEY.search(str(k)) and v else redact(v) for k, v in value.items()}
    if isinstance(value, list):
        return [redact(v) for v in value]
    if isinstance(value, str):
        return _URL_USER.sub(r"\1<redacted>@", value)
    return value


def size_category(rows: int) -> str:
    return next((label for limit, label in SIZE_CATEGORIES if rows < limit), "n>10M")


def front_matter(source: VersionTables, name: str, splits: dict[str, float], license_id: str,
                 rows: dict[str, dict[str, int]]) -> dict[str, Any]:
    """The card's YAML header: what the Hub and `datasets.load_dataset` read."""
    spec = source.spec
    main = spec.views[0].name
    return {
        "pretty_name": spec.pretty_name,
        "license": license_id,
        "language": [source.language],
        "size_categories": [size_category(sum(rows[main].values()))],
        "task_categories": list(spec.task_categories),
        "tags": list(spec.tags),
        "configs": [{
            "config_name": view.name,
            **({"default": True} if view.name == main else {}),
            "data_files": [{"split": split, "path": f"data/{view.name}/{split}-*.parquet"} for split in splits],
        } for view in spec.views],
    }


def render_card(source: VersionTables, folder: Path, name: str, tag: str, splits: dict[str, float],
                license_id: str, rows: dict[str, dict[str, int]], rates: ErrorRates | None = None) -> None:
    """Draw the plots into `folder/plots/` and write `folder/README.md`."""
    from memsynth.generation.registry import recipe_class  # recipes live above the engine

    version = source.version
    recipe = recipe_class(version["recipe"])
    plots = []
    for plot in source.spec.plots:
        data = [(str(label), value) for label, value in source.con.execute(plot.sql).fetchall()]
        bar_chart(folder / "plots" / f"{plot.name}.png", plot.title, [d[0] for d in data],
                  [float(d[1]) for d in data], plot.xlabel, plot.ylabel)
        plots.append({"name": plot.name, "title": plot.title, "xlabel": plot.xlabel, "ylabel": plot.ylabel,
                      "rows": data})
    quality = card_quality(source.con, recipe, folder / "plots", {p["title"].casefold() for p in plots})
    seed = recipe.seed_figures
    figures = [{"name": figure, "value": _scalar(source, sql), "seed": seed.get(figure, "")}
               for figure, sql in recipe.statistics.items()]
    omissions = [dict(zip(("left_out", "total"), source.con.execute(o.sql).fetchone(), strict=True),
                      what=o.what, reason=o.reason) for o in source.spec.omissions]
    persona_counts = {s: sum(1 for v in source.persona_splits.values() if v == s) for s in splits}
    card = _ENV.get_template("card.md.j2").render(
        front_matter=yaml.safe_dump(front_matter(source, name, splits, license_id, rows),
                                    sort_keys=False, allow_unicode=True),
        spec=source.spec, name=name, tag=tag, version=version, rows=rows, splits=list(splits),
        stages=[s.name for s in recipe.all_stages()], seed_format=source.spec.seed_format,
        temperature=version["config"].get("llm", {}).get("temperature", ""),
        config_yaml=yaml.safe_dump(redact(version["config"]), sort_keys=True, allow_unicode=True),
        plots=plots, figures=figures, quality=quality, omissions=omissions,
        split_seed=version["split_seed"], persona_counts=persona_counts,
        proportions=", ".join(f"{s} {p:g}" for s, p in splits.items()),
        seed_split=source.spec.seed_split, rates=rates)
    (folder / "README.md").write_text(card, encoding="utf-8")


def _scalar(source: VersionTables, sql: str) -> Any:
    value = source.con.execute(sql).fetchone()[0]
    return round(value, 2) if isinstance(value, float) else value
