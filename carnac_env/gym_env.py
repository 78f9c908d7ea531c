"""Kept for old imports: the single-agent Gymnasium env now lives in :mod:`carnac_env.envs.gym`.

``gymnasium.make("carnac_env/Carnac-v0")`` is the public entry point; this module re-exports
what it used to hold.
"""

from carnac_env.envs.gym import CarnacEnv
from carnac_env.envs.infos import GymInfo
from carnac_env.envs.opponents import make_opponent
from carnac_env.envs.options import ENV_OPTIONS, ILLEGAL_ACTION_MODES, SEATS, check_options
from carnac_env.envs.spaces import (
    MIN_IMAGE_SIDE,
    OBSERVATION_LAYOUTS,
    default_image_scale,
    image_observation,
    image_space,
)

__all__ = [
    "ENV_OPTIONS",
    "ILLEGAL_ACTION_MODES",
    "MIN_IMAGE_SIDE",
    "OBSERVATION_LAYOUTS",
    "SEATS",
    "CarnacEnv",
    "GymInfo",
    "check_options",
    "default_image_scale",
    "image_observation",
    "image_space",
    "make_opponent",
]
