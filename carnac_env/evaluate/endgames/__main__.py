"""``python -m carnac_env.evaluate.endgames``: ``carnac endgames`` (as the shipped sets record it)."""

import sys

from carnac_env.cli import main

sys.exit(main(["endgames", *sys.argv[1:]]))
