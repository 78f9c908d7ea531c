"""The environments' observation spaces, and the learner's observation in each layout.

:func:`observation_space` is the AEC env's (the planes beside the mask);
:func:`image_space` and :func:`image_observation` lay the planes out as an image for
Stable-Baselines3's CNNs; :func:`learner_space` and :func:`learner_observation` give the
Gymnasium envs' learner its observation in the layout asked for (planes or image, with or
without the mask).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from gymnasium import spaces

from carnac_env.core.boards import Board
from carnac_env.core.observation import NUM_PLANES, SUPPLY

__all__ = [
    "MIN_IMAGE_SIDE",
    "OBSERVATION_LAYOUTS",
    "default_image_scale",
    "image_observation",
    "image_space",
    "learner_observation",
    "learner_space",
    "observation_space",
]

#: The least image side that SB3's default CNN (NatureCNN) accepts.
MIN_IMAGE_SIDE = 36


def observation_space(board: Board) -> spaces.Dict:
    """The AEC observation space for ``board``: ``Dict(observation=Box(int8, (rows, cols, 9)),
    action_mask=Box(int8, (num_actions,)))`` (a fresh object; the envs cache theirs)."""
    high = np.ones((board.rows, board.cols, NUM_PLANES), dtype=np.int8)
    high[:, :, SUPPLY] = board.megaliths
    return spaces.Dict(
        {
            "observation": spaces.Box(0, high, dtype=np.int8),
            "action_mask": spaces.Box(0, 1, (board.num_actions,), dtype=np.int8),
        }
    )


def default_image_scale(board: Board) -> int:
    """The smallest block size that makes ``board``'s image at least 36 pixels each way."""
    return max(1, math.ceil(MIN_IMAGE_SIDE / min(board.rows, board.cols)))


def image_space(board: Board, scale: int) -> spaces.Box:
    """``Box(uint8, 0, 255, (9, rows*scale, cols*scale))``: the space of :func:`image_observation`."""
    return spaces.Box(0, 255, (NUM_PLANES, board.rows * scale, board.cols * scale), dtype=np.uint8)


def image_observation(planes: np.ndarray, board: Board, scale: int) -> np.ndarray:
    """The observation planes ``(..., rows, cols, 9)`` as uint8 images ``(..., 9, rows*scale, cols*scale)``.

    0/1 planes become 0/255; the supply plane becomes ``255 * supply // megaliths``; each square
    becomes a ``scale`` x ``scale`` block. Works on one observation or a batch.
    """
    image = planes.astype(np.int32) * 255
    image[..., SUPPLY] = planes[..., SUPPLY].astype(np.int32) * 255 // max(1, board.megaliths)
    image = np.moveaxis(image.astype(np.uint8), -1, -3)
    if scale > 1:
        image = np.repeat(np.repeat(image, scale, axis=-2), scale, axis=-1)
    return np.ascontiguousarray(image)


#: The layouts of a learner's observation (``observation=`` of the Gymnasium envs).
OBSERVATION_LAYOUTS = ("planes", "image")


def learner_space(board: Board, layout: str, scale: int, mask_in_observation: bool) -> spaces.Space:
    """The single learner's observation space of the Gymnasium envs: the planes
    ``Box(int8, (rows, cols, 9))`` or the image ``Box(uint8, (9, H, W))``, in a
    ``Dict(observation=..., action_mask=Box(int8, (num_actions,)))`` with ``mask_in_observation``."""
    aec = observation_space(board)
    board_space = image_space(board, scale) if layout == "image" else aec["observation"]
    if mask_in_observation:
        return spaces.Dict({"observation": board_space, "action_mask": aec["action_mask"]})
    return board_space


def learner_observation(
    planes: np.ndarray, mask: np.ndarray, board: Board, layout: str, scale: int, mask_in_observation: bool
) -> Any:
    """What the learner sees, in the layout of :func:`learner_space`: ``planes`` (``(..., rows,
    cols, 9)`` int8, one observation or a batch) as they are or as an image, beside ``mask``
    (``(..., num_actions)``, bool or int8) as int8 with ``mask_in_observation``."""
    shown = image_observation(planes, board, scale) if layout == "image" else planes
    if mask_in_observation:
        return {"observation": shown, "action_mask": mask.astype(np.int8)}
    return shown
