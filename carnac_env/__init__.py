"""carnac_env: the board game Carnac as a reinforcement-learning environment.

>>> import carnac_env
>>> env = carnac_env.env(board="medium")      # PettingZoo AEC, standard wrappers
>>> env.reset(seed=0)
>>> from carnac_env import carnac_v0       # the same env under PettingZoo's module path
>>> env = carnac_v0.env(board="medium")

The rules live in :mod:`carnac_env.core` (no RL library imported there); the adapters
around it are the environments of :mod:`carnac_env.envs` (the PettingZoo AEC env, the
Gymnasium env and vector env, registered on import as ``carnac_env/Carnac-v0``, and the RLlib
and OpenSpiel adapters), :mod:`carnac_env.batch` (many games as arrays),
:mod:`carnac_env.search`, :mod:`carnac_env.agents`, :mod:`carnac_env.arena`,
:mod:`carnac_env.render` and the optional :mod:`carnac_env.jax`.

Importing the package is cheap: PettingZoo and Gymnasium load only when something that
needs them is first used (``carnac_env.env``, ``gymnasium.make``), and
``import carnac_env.core`` loads numpy and the standard library only.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from carnac_env._version import __version__
from carnac_env.envs.registration import register_envs, register_when_gymnasium_loads
from carnac_env.errors import CarnacError, IllegalActionError, NotationError, RecordError
from carnac_env.render.jupyter import register_with_ipython

if TYPE_CHECKING:
    from carnac_env.core import BOARDS, Board, GameState, make_board
    from carnac_env.core.record import GameRecord
    from carnac_env.envs.aec import env, raw_env

register_when_gymnasium_loads()  # gymnasium.make("carnac_env/Carnac-v0", ...)
register_with_ipython()  # a GameState shows as SVG in Jupyter (drawn by carnac_env.render.svg)

#: Attributes loaded on first use, so that the package import stays light.
_LAZY = {
    "env": "carnac_env.envs.aec",
    "raw_env": "carnac_env.envs.aec",
    "BOARDS": "carnac_env.core",
    "Board": "carnac_env.core",
    "GameState": "carnac_env.core",
    "make_board": "carnac_env.core",
    "GameRecord": "carnac_env.core.record",
}


#: Submodules loaded on first attribute access, as PettingZoo's ``classic`` package does.
_LAZY_MODULES = ("carnac_v0",)


def __getattr__(name: str) -> Any:
    if name in _LAZY_MODULES:
        return importlib.import_module(f"carnac_env.{name}")
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'carnac_env' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | set(_LAZY_MODULES))


__all__ = [
    "BOARDS",
    "Board",
    "CarnacError",
    "GameRecord",
    "GameState",
    "IllegalActionError",
    "NotationError",
    "RecordError",
    "__version__",
    "carnac_v0",
    "env",
    "make_board",
    "raw_env",
    "register_envs",
]
