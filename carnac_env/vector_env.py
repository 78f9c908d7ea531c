"""Kept for old imports: the Gymnasium vector env now lives in :mod:`carnac_env.envs.vector`.

``gymnasium.make_vec("carnac_env/Carnac-v0", num_envs=N)`` is the public entry point; this
module re-exports what it used to hold.
"""

from carnac_env.envs.infos import VectorInfo
from carnac_env.envs.options import VECTOR_OPTIONS
from carnac_env.envs.vector import AUTORESET_MODES, CarnacVectorEnv

__all__ = ["AUTORESET_MODES", "VECTOR_OPTIONS", "CarnacVectorEnv", "VectorInfo"]
