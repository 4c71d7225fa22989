"""The warehouse: one DuckLake catalog per dataset, one snapshot per published version.

May import: `core`. It stores and reads data; it knows no recipe, LLM, build or quality tool.
"""
