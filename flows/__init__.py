"""Prefect flows: one module per recipe, plus the generic build flow."""

import os

# Builds run offline on a throwaway ephemeral API: no telemetry, quiet logs unless asked.
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
