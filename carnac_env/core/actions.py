"""The action encoding (a public contract) and the megalith orientations.

With R rows and C columns there are ``R*C*4 + 5`` actions:

* place: ``(row*C + col)*4 + o`` for orientation ``o`` in 0..3, where
  ``o & 1 == 0`` puts the mover's own colour on top (``1``: the opponent's colour), and
  ``o & 2 == 0`` gives the north/south long faces the top colour (tilting north or south
  shows the top colour, east or west the other); ``o & 2 == 2`` gives it to east/west;
* tilt: ``R*C*4 + d`` for direction d = 0 north, 1 east, 2 south, 3 west;
* decline: ``R*C*4 + 4``.

Colours in actions are relative to the mover so one policy can play both seats. What an
orientation shows (:func:`tilt_colours`) is rules arithmetic shared by every engine and lives
in :mod:`carnac_env.core.arithmetic`; it is re-exported here.
"""

from __future__ import annotations

from typing import NamedTuple

from carnac_env._checks import whole
from carnac_env.core.arithmetic import EAST_WEST_SHOWS_TOP, OPPONENT_ON_TOP, orientation_for, tilt_colours
from carnac_env.core.boards import Board

__all__ = [
    "DECLINE",
    "EAST_WEST_SHOWS_TOP",
    "OPPONENT_ON_TOP",
    "ORIENTATIONS",
    "PLACE",
    "TILT",
    "Action",
    "decline_action",
    "decline_number",
    "decode",
    "orientation_for",
    "place_action",
    "place_number",
    "place_orientation",
    "place_square",
    "tilt_action",
    "tilt_base",
    "tilt_colours",
]

PLACE, TILT, DECLINE = "place", "tilt", "decline"


class Action(NamedTuple):
    """A decoded action: ``kind`` is ``"place"``, ``"tilt"`` or ``"decline"``.

    For a place, ``square`` and ``orientation`` are set (``direction`` is -1); for a tilt,
    ``direction``; for a decline neither (-1).
    """

    kind: str
    square: int = -1
    orientation: int = -1
    direction: int = -1


#: Place actions per square: one per orientation.
ORIENTATIONS = 4


def place_number(square, orientation):
    """``square * 4 + orientation``: the place action number, unchecked.

    Plain arithmetic, so it works on ints, numpy arrays and inside compiled (numba) code;
    :func:`place_action` is the checked form for one board.
    """
    return square * ORIENTATIONS + orientation


def place_square(action):
    """The square of a place action number (ints, arrays or compiled code)."""
    return action // ORIENTATIONS


def place_orientation(action):
    """The orientation 0..3 of a place action number (ints, arrays or compiled code)."""
    return action % ORIENTATIONS


def tilt_base(squares):
    """The first tilt action number (tilt north) on a board of ``squares`` squares; the
    tilts are ``tilt_base + direction`` and the decline ``tilt_base + 4`` (see
    :func:`decline_number`). Every action below it is a place."""
    return squares * ORIENTATIONS


def decline_number(squares):
    """The decline action number on a board of ``squares`` squares (the last action)."""
    return tilt_base(squares) + 4


def place_action(board: Board, square: int, orientation: int) -> int:
    """The action number that places on ``square`` (row-major) with ``orientation`` 0..3.

    Raises:
        CarnacError: ``square`` is not a square of ``board`` or ``orientation`` not in 0..3.
    """
    return place_number(whole("square", square, 0, board.squares - 1), whole("orientation", orientation, 0, 3))


def tilt_action(board: Board, direction: int) -> int:
    """The action number that tilts the waiting megalith towards ``direction`` 0..3.

    Raises:
        CarnacError: ``direction`` is not in 0..3.
    """
    return tilt_base(board.squares) + whole("direction", direction, 0, 3)


def decline_action(board: Board) -> int:
    """The action number that declines to tilt."""
    return decline_number(board.squares)


def decode(board: Board, action: int) -> Action:
    """Split an action number into its meaning. ``action`` must be in range."""
    base = tilt_base(board.squares)
    if action < base:
        return Action(PLACE, place_square(action), place_orientation(action))
    if action < base + 4:
        return Action(TILT, direction=action - base)
    return Action(DECLINE)
