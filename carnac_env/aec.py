"""Kept for old imports: the PettingZoo AEC env now lives in :mod:`carnac_env.envs.aec`.

``carnac_env.env``, ``carnac_env.raw_env`` and ``carnac_env.carnac_v0`` are the public names;
this module re-exports what it used to hold.
"""

from carnac_env.envs.aec import AGENTS, RENDER_MODES, env, raw_env
from carnac_env.envs.infos import AECInfo, blank_info, end_info, info_dolmen_slots
from carnac_env.envs.options import check_seed, moves_option
from carnac_env.envs.spaces import observation_space

__all__ = [
    "AGENTS",
    "RENDER_MODES",
    "AECInfo",
    "blank_info",
    "check_seed",
    "end_info",
    "env",
    "info_dolmen_slots",
    "moves_option",
    "observation_space",
    "raw_env",
]
