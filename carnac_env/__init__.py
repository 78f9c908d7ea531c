"""carnac_env: the board game Carnac as a reinforcement-learning environment.

>>> import carnac_env
>>> env = carnac_env.env(board="medium")      # PettingZoo AEC, standard wrappers
>>> env.reset(seed=0)

The rules live in :mod:`carnac_env.core` (no RL library imported there); the adapters
around it are :mod:`carnac_env.aec` (PettingZoo) and the others listed in the README.
"""

from carnac_env.aec import env, raw_env
from carnac_env.core import BOARDS, Board, GameState, make_board
from carnac_env.core.record import GameRecord
from carnac_env.errors import CarnacError, IllegalActionError, NotationError, RecordError

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
]
