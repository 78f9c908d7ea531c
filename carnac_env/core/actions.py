"""The action encoding (a public contract) and the megalith orientations.

With R rows and C columns there are ``R*C*4 + 5`` actions:

* place: ``(row*C + col)*4 + o`` for orientation ``o`` in 0..3, where
  ``o & 1 == 0`` puts the mover's own colour on top (``1``: the opponent's colour), and
  ``o & 2 == 0`` gives the north/south long faces the top colour (tilting north or south
  shows the top colour, east or west the other); ``o & 2 == 2`` gives it to east/west;
* tilt: ``R*C*4 + d`` for direction d = 0 north, 1 east, 2 south, 3 west;
* decline: ``R*C*4 + 4``.

Colours in actions are relative to the mover so one policy can play both seats.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from carnac_env.core.boards import Board
from carnac_env.errors import CarnacError

PLACE, TILT, DECLINE = "place", "tilt", "decline"

#: Orientation bits.
OPPONENT_ON_TOP = 1
EAST_WEST_SHOWS_TOP = 2


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


def _check_index(name: str, value: object, stop: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or not 0 <= value < stop:
        raise CarnacError(f"{name} {value!r} is not an integer in 0..{stop - 1}")
    return int(value)


def place_action(board: Board, square: int, orientation: int) -> int:
    """The action number that places on ``square`` (row-major) with ``orientation`` 0..3.

    Raises:
        CarnacError: ``square`` is not a square of ``board`` or ``orientation`` not in 0..3.
    """
    return place_number(_check_index("square", square, board.squares), _check_index("orientation", orientation, 4))


def tilt_action(board: Board, direction: int) -> int:
    """The action number that tilts the waiting megalith towards ``direction`` 0..3.

    Raises:
        CarnacError: ``direction`` is not in 0..3.
    """
    return tilt_base(board.squares) + _check_index("direction", direction, 4)


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


def tilt_colours(mover: int, orientation: int) -> tuple[int, int, int]:
    """Colours a megalith placed by ``mover`` (0 or 1) with ``orientation`` shows.

    Returns ``(top, north_south, east_west)`` as cell values (1 red, 2 white): the colour
    of its top end, and the colour both squares show after a tilt north or south, and
    after a tilt east or west.
    """
    own, other = mover + 1, 2 - mover
    top, under = (other, own) if orientation & OPPONENT_ON_TOP else (own, other)
    if orientation & EAST_WEST_SHOWS_TOP:
        return top, under, top
    return top, top, under


def orientation_for(mover: int, top: int, north_south: int) -> int:
    """The orientation (0..3) by which ``mover`` puts cell colour ``top`` on top and makes a
    north/south tilt show cell colour ``north_south``. Inverse of :func:`tilt_colours`."""
    o = 0 if top == mover + 1 else OPPONENT_ON_TOP
    if north_south != top:
        o |= EAST_WEST_SHOWS_TOP
    return o
