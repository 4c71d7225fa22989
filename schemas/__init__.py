"""Pydantic models: what each stage must answer, and the rows of each output table."""
