"""``python -m carnac_env.analysis``: ``carnac analyse`` (:mod:`carnac_env.cli.analyse`)."""

import sys

from carnac_env.cli import main

sys.exit(main(["analyse", *sys.argv[1:]]))
