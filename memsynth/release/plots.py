"""Bar charts for the dataset card, as PNG files whose bytes depend on their data only."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display; must precede pyplot
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

# Fixed so that two releases of one version render identical files.
_RC = {"font.family": "DejaVu Sans", "font.size": 9, "svg.hashsalt": "memsynth",
       "path.simplify": False}


def bar_chart(path: Path, title: str, labels: list[str], values: list[float], xlabel: str, ylabel: str) -> None:
    """Write one bar chart; PNG metadata is emptied (no software version, no time)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with plt.rc_context(_RC):
        fig, ax = plt.subplots(figsize=(6, 3.2), dpi=100)
        try:
            ax.bar(range(len(values)), values, color="#4C72B0")
            ax.set_xticks(range(len(values)), labels, rotation=30 if len(labels) > 8 else 0, ha="right"
                          if len(labels) > 8 else "center")
            ax.set_title(title)
            ax.set_xlabel(xlabel)
            ax.set_ylabel(ylabel)
            ax.yaxis.set_major_locator(MaxNLocator(integer=True))
            ax.spines[["top", "right"]].set_visible(False)
            fig.tight_layout()
            fig.savefig(path, format="png", metadata={"Software": None})
        finally:
            plt.close(fig)
