"""Kept for old imports: the board's symmetries now live in :mod:`carnac_env.core.symmetry`."""

from carnac_env.core.symmetry import (
    AXIS_SWAPPING,
    SHAPE_KEEPING,
    TRANSFORMS,
    Symmetry,
    augment,
    inverse,
    symmetries,
    symmetry,
    transform_action,
    transform_mask,
    transform_observation,
    transform_state,
)

__all__ = [
    "AXIS_SWAPPING",
    "SHAPE_KEEPING",
    "TRANSFORMS",
    "Symmetry",
    "augment",
    "inverse",
    "symmetries",
    "symmetry",
    "transform_action",
    "transform_mask",
    "transform_observation",
    "transform_state",
]
