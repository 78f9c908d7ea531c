"""Carnac for RLlib's stock action-masking module: the observation under RLlib's keys.

RLlib's own ``ActionMaskingTorchRLModule`` (``ray.rllib.examples.rl_modules.classes``) reads a
``Dict`` observation with the keys ``"observations"`` and ``"action_mask"``; PettingZoo's
convention, which ``carnac_env.env()`` follows, is ``"observation"``, so the module fails at
once with ``KeyError: 'observations'``. :class:`RLlibObservations` renames the key and gives
the planes as float32 (RLlib's default encoders are float networks: int8 planes into its CNN
fail with ``Input type (signed char) and bias type (float) should be the same``). Nothing else
changes: the same int8 mask, game, turn order, rewards and infos.

>>> import carnac_env.envs.rllib
>>> from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
>>> from ray.tune.registry import register_env
>>> register_env("carnac", carnac_env.envs.rllib.multi_agent_env)      # env_config: env()'s arguments
>>> PettingZooEnv(carnac_env.envs.rllib.env(board="small", flatten=True))  # the same, by hand

With the planes kept as ``(rows, cols, 9)`` RLlib builds a CNN and asks for ``conv_filters``
in the module's ``model_config`` (it has defaults only for 10x10, 42x42, 64x64 and 84x84
inputs); with ``flatten=True`` the planes are one vector and RLlib's default MLP takes them
with no configuration. docs/frameworks.md shows both. This module does not import Ray.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import BaseWrapper

from carnac_env import _checks
from carnac_env.envs.aec import env as carnac_aec_env

__all__ = ["RLlibObservations", "env", "multi_agent_env"]

#: The keys of RLlib's action-masking examples (``ActionMaskingTorchRLModule``, ``ActionMaskEnv``).
OBSERVATIONS, ACTION_MASK = "observations", "action_mask"


class RLlibObservations(BaseWrapper):
    """A PettingZoo AEC wrapper: ``{"observations": planes as float32, "action_mask": mask}``.

    Args:
        env: a Carnac AEC env (``carnac_env.env(...)``), or any AEC env whose observations are
            ``Dict(observation=Box, action_mask=Box)``.
        flatten: give the planes as one vector of ``rows*cols*9`` (for RLlib's default MLP)
            instead of ``(rows, cols, 9)`` (for a CNN, with ``conv_filters``).
    """

    def __init__(self, env: AECEnv, flatten: bool = False) -> None:
        super().__init__(env)
        self.flatten = _checks.flag("flatten", flatten)
        self._spaces: dict[str, spaces.Dict] = {}

    def observation_space(self, agent: str) -> spaces.Dict:
        """The env's space with the planes under ``"observations"`` (float32) and the mask as it was."""
        if agent not in self._spaces:
            inner = self.env.observation_space(agent)
            planes, mask = inner["observation"], inner["action_mask"]
            low, high = planes.low.astype(np.float32), planes.high.astype(np.float32)
            if self.flatten:
                low, high = low.reshape(-1), high.reshape(-1)
            self._spaces[agent] = spaces.Dict(
                {
                    OBSERVATIONS: spaces.Box(low, high, dtype=np.float32),
                    ACTION_MASK: mask,
                }
            )
        return self._spaces[agent]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """The env's observation of ``agent`` under RLlib's keys, the planes as float32."""
        seen = self.env.observe(agent)
        planes = np.asarray(seen["observation"], dtype=np.float32)
        return {
            OBSERVATIONS: planes.reshape(-1) if self.flatten else planes,
            ACTION_MASK: seen["action_mask"],
        }

    def __str__(self) -> str:
        return str(self.env)


def env(flatten: bool = False, **kwargs: Any) -> RLlibObservations:
    """``carnac_env.env(**kwargs)`` (board, render_mode, rules options) under RLlib's keys."""
    return RLlibObservations(carnac_aec_env(**kwargs), flatten=flatten)


def multi_agent_env(config: dict[str, Any] | None = None) -> Any:
    """An env creator for ``ray.tune.registry.register_env``: RLlib's ``PettingZooEnv`` over
    :func:`env`, whose arguments come from RLlib's ``env_config`` (``{"board": "small",
    "flatten": True}``). Imports RLlib's wrapper when called."""
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

    return PettingZooEnv(env(**dict(config or {})))
