"""An OpenAI-compatible simulator for dry runs, tests and benchmarks: no real model behind it."""
