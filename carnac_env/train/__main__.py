"""``python -m carnac_env.train``: ``carnac train`` (:mod:`carnac_env.cli.train`)."""

import os
import sys

# Small matrix products thrash when OpenBLAS spreads them over threads on a busy machine;
# the network is evaluated in small batches, so one thread is faster (set before numpy loads).
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

from carnac_env.cli import main  # noqa: E402

sys.exit(main(["train", *sys.argv[1:]]))
