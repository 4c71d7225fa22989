"""An OpenAI-compatible simulator for dry runs, tests and benchmarks: no real model behind it.

A development endpoint, above the engine and never under it: the build (or `eval`,
`annotate`) chooses it and hands the LLM layer its URL.

May import: `generation`, `llm`, `core`.
"""
