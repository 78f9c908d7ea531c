"""The mctx side of ``benchmarks/selfplay_speed.py``: its jax.numpy forward gives the network the
input :meth:`PolicyValueNet.forward` gets from the search (the rules planes of a rules-conditioned
network, the supply plane divided by the played board's megaliths), so both sides of the
benchmark evaluate the same network. Skipped without jax."""

from __future__ import annotations

import numpy as np
import pytest
from _frameworks import require
from _scripts import load_script

from carnac_env.core.boards import make_board
from carnac_env.models import load, model_path
from carnac_env.models.onnx_runtime import random_positions

TOLERANCE = 1e-4


@pytest.mark.parametrize(
    ("model", "board"),
    [("general", "small"), ("general", "medium"), ("small", "small"), ("medium", "medium")],
)
def test_jax_forward_equals_numpy_forward(model: str, board: str) -> None:
    require("jax", "the benchmark's mctx side (pip install 'carnac-env[search]')")
    benchmark = load_script("benchmarks/selfplay_speed.py")
    net, rules = load(model_path(model)), make_board(board)
    observations, _ = random_positions(rules, 24, seed=3)
    want_logits, want_values = net.forward(observations, supply_scale=rules.megaliths, board=rules)
    logits, values = benchmark.jax_forward(net, rules)(observations)
    assert np.abs(np.asarray(logits) - want_logits).max() <= TOLERANCE
    assert np.abs(np.asarray(values) - want_values).max() <= TOLERANCE
