"""`python -m memsynth.cli`."""

from memsynth.cli import main

main()
