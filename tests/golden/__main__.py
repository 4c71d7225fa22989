"""Rewrite the golden prompts: `python -m tests.golden [--record-variables]`."""

import argparse

from tests.golden import record_evaluation_variables, record_variables, write_goldens

parser = argparse.ArgumentParser(prog="python -m tests.golden", description=__doc__)
parser.add_argument("--record-variables", action="store_true",
                    help="first capture each stage's variables again from a simulator run")
args = parser.parse_args()
if args.record_variables:
    record_variables()
    record_evaluation_variables()
print(f"wrote {write_goldens()} golden prompts under tests/golden/")
