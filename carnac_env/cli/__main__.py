"""``python -m carnac_env.cli``: the ``carnac`` command without the console script."""

import sys

from carnac_env.cli import main

sys.exit(main())
