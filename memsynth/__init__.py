"""memsynth: synthesize memory-augmented, persona-grounded dialogue benchmarks."""

__version__ = "0.1.0"

import os as _os

# Before anything imports Prefect: no telemetry (builds run offline), and quiet logs
# unless asked (`memsynth build -v`).
_os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
_os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")

# Prefect's events client reports at exit that events are still being sent ("EventsWorker -
# Still processing items"): a note about delivery to a server the build no longer needs, not
# something a user can act on. Shown with `-v`, which lowers PREFECT_LOGGING_LEVEL.
if _os.environ["PREFECT_LOGGING_LEVEL"].upper() in ("WARNING", "ERROR", "CRITICAL"):
    import logging as _logging

    _logging.getLogger("EventsWorker").setLevel(_logging.ERROR)
    # When the build is stopped (SIGTERM, Ctrl-C) its private Prefect server may go first, and
    # the events service then logs "Service 'EventsWorker' failed with N pending items" after
    # memsynth's own last line: the same undeliverable events, at ERROR. (A level set on that
    # logger here would not hold: Prefect's logging config resets its loggers' children.)
    _os.environ.setdefault("PREFECT_INTERNAL_LOGGING_LEVEL", "CRITICAL")

# Whatever a library logs (Prefect logs a failed task's error), no API key or password in it.
from memsynth.core.secrets import mask_log_records as _mask_log_records  # noqa: E402

_mask_log_records()
