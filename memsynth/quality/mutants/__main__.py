"""`python -m memsynth.quality.mutants [PATH...]`: the per-rule mutation table (the same as
`memsynth check-answers PATH... --mutants`, with the shared corpus as its default).

PATH: answer files or folders (default: ../shared/model-answers beside the project, or
$MEMSYNTH_MODEL_ANSWERS). Mutants of every acceptable answer go through their stage's
schema and checks; the table says, per rule, how many the rule's checks reject.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from memsynth.core.errors import MemsynthError
from memsynth.quality.mutants.report import mutation_report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m memsynth.quality.mutants", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="*", metavar="PATH")
    parser.add_argument("--survivors", action="store_true", help="also list each mutant no check rejects")
    args = parser.parse_args(argv)
    default = os.environ.get("MEMSYNTH_MODEL_ANSWERS") or str(
        Path(__file__).resolve().parents[3].parent / "shared" / "model-answers")
    try:
        report = mutation_report(args.paths or [default])
    except MemsynthError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(report.text(args.survivors))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
