"""Human review of a dataset: judgments kept per annotator, and agreement between them."""
