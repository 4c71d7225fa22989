"""memsynth: synthesize memory-augmented, persona-grounded dialogue benchmarks."""

__version__ = "0.1.0"

import os as _os

# Before anything imports Prefect: no telemetry (builds run offline), and quiet logs
# unless asked (`memsynth build -v`).
_os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
_os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
