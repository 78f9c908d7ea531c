"""carnac_env: the board game Carnac as a reinforcement-learning environment.

>>> import carnac_env
>>> env = carnac_env.env(board="medium")      # PettingZoo AEC, standard wrappers
>>> env.reset(seed=0)

The rules live in :mod:`carnac_env.core` (no RL library imported there); the adapters
around it are :mod:`carnac_env.aec` (PettingZoo AEC), :mod:`carnac_env.gym_env` and
:mod:`carnac_env.vector_env` (Gymnasium, registered on import as ``carnac_env/Carnac-v0``),
:mod:`carnac_env.batch` (many games as arrays), :mod:`carnac_env.agents`,
:mod:`carnac_env.arena`, :mod:`carnac_env.render` and the optional :mod:`carnac_env.jax`.
"""

from carnac_env.aec import env, raw_env
from carnac_env.core import BOARDS, Board, GameState, make_board
from carnac_env.core.record import GameRecord
from carnac_env.errors import CarnacError, IllegalActionError, NotationError, RecordError
from carnac_env.gym_env import register_envs

register_envs()  # gymnasium.make("carnac_env/Carnac-v0", ...)

__version__ = "0.1.0"

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
    "env",
    "make_board",
    "raw_env",
    "register_envs",
]
