"""memsynth: synthesize memory-augmented, persona-grounded dialogue benchmarks."""

__version__ = "0.1.0"
