"""``python -m carnac_env.train``: see :mod:`carnac_env.train.cli`."""

import os

# Small matrix products thrash when OpenBLAS spreads them over threads on a busy machine;
# the network is evaluated in small batches, so one thread is faster (set before numpy loads).
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

from carnac_env.train.cli import run  # noqa: E402

raise SystemExit(run())
