"""Copy a MaskablePPO ``model.zip`` without its optimizer state (Adam's moments).

    PYTHONPATH=examples python examples/models/strip_optimizer.py runs/sb3/model.zip examples/models/sb3-ppo-small.zip

The copy has the same policy weights (checked before it returns) at about a third of the
size; loading it gives a fresh optimizer, so it is for playing, not for resuming training.
"""

import sys

import numpy as np
from sb3_contrib import MaskablePPO

src, dst = sys.argv[1], sys.argv[2]
model = MaskablePPO.load(src, device="cpu")
model.policy.optimizer.state.clear()
model.save(dst)
a, b = MaskablePPO.load(src, device="cpu"), MaskablePPO.load(dst, device="cpu")
for x, y in zip(a.policy.state_dict().values(), b.policy.state_dict().values()):
    assert np.array_equal(x.numpy(), y.numpy())
print("same policy weights;", dst)
