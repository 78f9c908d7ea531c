"""Shared by the trainer's tests (tests/train/test_train.py, tests/train/test_train_ray.py): a tiny run's
settings and the check that two runs are the same run. Import it after ``require("torch")``."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

#: A run of seconds on petit_menec: a tiny network, few games and simulations.
TINY: dict[str, Any] = {
    "board": "petit_menec",
    "games": 4,
    "bootstrap_iterations": 1,
    "sims": 4,
    "train_steps": 10,
    "batch_size": 64,
    "buffer": 2_000,
    "channels": 8,
    "blocks": 1,
    "hidden": 8,
    "eval_every": 2,
    "eval_games": 2,
    "eval_sims": 2,
    "mcts_sims": 10,
}
#: Two iterations, no evaluation, the games split into two seeded shards.
SHARDED: dict[str, Any] = dict(TINY, iterations=2, eval_every=0, selfplay_shards=2)


def assert_same_run(a: Any, b: Any) -> None:
    """The two trainers hold the same replay buffer, curve (times aside) and weights, bit for bit."""
    mine, theirs = a.replay.state()["chunks"], b.replay.state()["chunks"]
    assert len(mine) == len(theirs)
    for n, (chunk, other) in enumerate(zip(mine, theirs)):
        assert chunk.keys() == other.keys()
        for key, value in chunk.items():
            if key == "board":
                assert value == other[key]
            else:
                np.testing.assert_array_equal(other[key], value, err_msg=f"chunk {n} {key}")

    def timeless(curve: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [
            {k: v for k, v in row.items() if not k.endswith("_seconds") and not k.startswith("selfplay_cpu@")}
            for row in curve
        ]

    assert timeless(b.curve) == timeless(a.curve)
    for name, value in a.net.state_dict().items():
        torch.testing.assert_close(b.net.state_dict()[name], value, rtol=0, atol=0)
