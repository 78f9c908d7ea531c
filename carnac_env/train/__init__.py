"""AlphaZero-style training for the ``az`` agent (PyTorch, CPU): ``python -m carnac_env.train``.

>>> from carnac_env.train import Config, Trainer
>>> Trainer("runs/az-petit", Config(board="petit_menec", iterations=20)).run()

:mod:`carnac_env.train.trainer` has the loop (bootstrap from greedy, PUCT self-play on the
batched engine, replay buffer with board symmetries, resumable checkpoints, learning curve),
:mod:`carnac_env.train.selfplay` the game generation (in shards that
:mod:`carnac_env.train.workers` plays on local processes or Ray actors, without PyTorch),
:mod:`carnac_env.train.model` the PyTorch twin of the numpy network in
:mod:`carnac_env.models`, :mod:`carnac_env.train.config` the settings,
:mod:`carnac_env.train.diagnose` a check of a model's value head
(``carnac diagnose``); the command line is ``carnac train`` (:mod:`carnac_env.cli.train`).
docs/training.md tells how to train and what the shipped models cost. Needs PyTorch
(``pip install 'carnac-env[train]'``); playing a model does not. (The self-play PPO tutorial
that lived here is examples/selfplay_ppo.py, Tutorial 4.)
"""

from __future__ import annotations

from typing import Any

__all__ = ["Config", "Trainer"]


def __getattr__(name: str) -> Any:
    if name == "Config":
        from carnac_env.train.config import Config

        return Config
    if name == "Trainer":
        from carnac_env.train.trainer import Trainer

        return Trainer
    raise AttributeError(f"module 'carnac_env.train' has no attribute {name!r}")
