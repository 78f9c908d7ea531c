"""The settings of a training run (no PyTorch needed to read them: the command line builds its
options from this class)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from carnac_env.errors import CarnacError

__all__ = ["Config", "check_shards"]


@dataclass
class Config:
    """The settings of a run (``python -m carnac_env.train --help`` describes each)."""

    board: str = "petit_menec"
    seed: int = 0
    iterations: int = 30
    games: int = 32
    bootstrap_iterations: int = 4
    bootstrap_temperature: float = 8.0
    sims: int = 32
    c: float = 1.5
    temperature_moves: int = 8
    train_steps: int = 100
    batch_size: int = 256
    lr: float = 1e-3
    weight_decay: float = 1e-4
    buffer: int = 40_000
    channels: int = 32
    blocks: int = 3
    hidden: int = 64
    eval_every: int = 2
    eval_games: int = 10
    eval_sims: int = 32
    mcts_sims: int = 200
    threads: int = 1
    init: str = ""
    #: Each iteration's games are split into this many shards, each played with a generator of
    #: its own seed (drawn from the run's), so that workers can play them; 1 plays them all with
    #: the run's own generator, as before shards existed (the results differ between the two).
    selfplay_shards: int = 1


def check_shards(shards: Any, games: int) -> int:
    """``selfplay_shards`` as a whole number from 1 to ``games``; CarnacError otherwise."""
    if isinstance(shards, bool) or not hasattr(shards, "__index__") or not 1 <= int(shards) <= games:
        raise CarnacError(
            f"selfplay_shards must be a whole number from 1 to the games per iteration ({games}), got {shards!r}"
        )
    return int(shards)
