"""A server that exits before it says anything, as one with a missing setting does."""

import sys

print("fatal: EXAMPLE_API_KEY is not set", file=sys.stderr, flush=True)
sys.exit(2)
