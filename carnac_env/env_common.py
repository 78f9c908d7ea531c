"""Kept for old imports: what the environments share now lives in :mod:`carnac_env.envs`,
one job to a module (:mod:`~carnac_env.envs.options`, :mod:`~carnac_env.envs.spaces`,
:mod:`~carnac_env.envs.infos`, :mod:`~carnac_env.envs.opponents`); this module re-exports
what it used to hold."""

from carnac_env.envs.infos import AECInfo, GymInfo, VectorInfo, blank_info, end_info, info_dolmen_slots
from carnac_env.envs.opponents import make_opponent
from carnac_env.envs.options import as_action, check_options, check_seed, moves_option
from carnac_env.envs.spaces import (
    MIN_IMAGE_SIDE,
    OBSERVATION_LAYOUTS,
    default_image_scale,
    image_observation,
    image_space,
    learner_observation,
    learner_space,
    observation_space,
)

__all__ = [
    "MIN_IMAGE_SIDE",
    "OBSERVATION_LAYOUTS",
    "AECInfo",
    "GymInfo",
    "VectorInfo",
    "as_action",
    "blank_info",
    "check_options",
    "check_seed",
    "default_image_scale",
    "end_info",
    "image_observation",
    "image_space",
    "info_dolmen_slots",
    "learner_observation",
    "learner_space",
    "make_opponent",
    "moves_option",
    "observation_space",
]
