"""Run the memsynth CLI in this process and report its CPU time and peak RSS on exit.

Used by the benchmarks to measure one command alone: `python bench/measured_cli.py build …`.
The figures go to stderr as a last JSON line starting with `{"measured":`.
"""

from __future__ import annotations

import atexit
import json
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

_STARTED = time.perf_counter()


@atexit.register
def _report() -> None:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"measured": {"wall_seconds": time.perf_counter() - _STARTED,
                                   "cpu_seconds": usage.ru_utime + usage.ru_stime,
                                   "peak_rss_mb": usage.ru_maxrss / 1024}}), file=sys.stderr)


if __name__ == "__main__":
    from memsynth.cli import main

    sys.argv = ["memsynth", *sys.argv[1:]]
    main()
