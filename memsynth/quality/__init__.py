"""Quality tools on built versions: human review and agreement, the quality report,
evaluation of systems on a version, emotion annotation, and checking answers to a stage.

May import: `build`, `simulator`, `generation`, `llm`, `warehouse`, `core`.
"""
