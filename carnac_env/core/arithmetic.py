"""The rules arithmetic every engine shares: small rules written once, as plain arithmetic.

The core (Python ints), the compiled batch engine (numba, which compiles these very
functions) and the JAX engine (``jax.numpy`` arrays, traced) all call the functions here,
so each of these rules has one statement:

* :func:`tilt_colours`: what a megalith placed with an orientation shows on top and after a
  tilt each way;
* :func:`tilt_colour`: the colour a tilt towards a direction shows, from the one colour a
  game stores for its pending megalith (the north/south colour; east/west shows the other,
  :func:`other_colour`);
* :func:`own_colour` and :func:`opponent_colour`: a player's colours as cell values;
* :func:`gets_response`: whether a placement is answered (tilted or declined) at all;
* :func:`game_ends`: the one end-of-game rule, applied after every move.

Every function uses only ``+ - * & | >> ==`` and comparisons, with no branch, no
``and``/``or``/``not`` and no call to another function: those work on Python ints and bools,
numpy and numba scalars (numba compiles each function on its own) and traced JAX arrays
alike. Nothing here imports more than the standard library.
"""

from __future__ import annotations

from typing import Any

#: Cell colours (``GameState.cells``): 0 empty, then ``player + 1``.
RED, WHITE = 1, 2

#: Orientation bits of a placement (see :mod:`carnac_env.core.actions`).
OPPONENT_ON_TOP = 1
EAST_WEST_SHOWS_TOP = 2


def own_colour(player: Any) -> Any:
    """The cell colour of ``player`` (0 Red -> 1, 1 White -> 2)."""
    return player + RED


def opponent_colour(player: Any) -> Any:
    """The cell colour of ``player``'s opponent (0 Red -> 2, 1 White -> 1)."""
    return WHITE - player


def other_colour(colour: Any) -> Any:
    """The other cell colour: red (1) <-> white (2)."""
    return RED + WHITE - colour


def tilt_colours(mover: Any, orientation: Any) -> tuple[Any, Any, Any]:
    """Colours a megalith placed by ``mover`` (0 or 1) with ``orientation`` (0..3) shows.

    Returns ``(top, north_south, east_west)`` as cell values (1 red, 2 white): the colour
    of its top end, and the colour both squares show after a tilt north or south, and
    after a tilt east or west. Bit 0 of the orientation puts the opponent's colour on top;
    bit 1 gives the top colour to the east/west long faces instead of the north/south ones.
    """
    # Written out without calling the helpers above, so that numba compiles it on its own.
    own = mover + RED
    top = own + (orientation & OPPONENT_ON_TOP) * (WHITE - mover - own)
    north_south = top + ((orientation & EAST_WEST_SHOWS_TOP) >> 1) * (RED + WHITE - 2 * top)
    return top, north_south, RED + WHITE - north_south


def orientation_for(mover: int, top: int, north_south: int) -> int:
    """The orientation (0..3) by which ``mover`` puts cell colour ``top`` on top and makes a
    north/south tilt show cell colour ``north_south``. Inverse of :func:`tilt_colours`."""
    o = 0 if top == own_colour(mover) else OPPONENT_ON_TOP
    if north_south != top:
        o |= EAST_WEST_SHOWS_TOP
    return o


def tilt_colour(north_south: Any, direction: Any) -> Any:
    """The colour a tilt towards ``direction`` (0 N, 1 E, 2 S, 3 W) shows, for a megalith
    whose north/south tilt shows ``north_south``: that colour for north and south (even
    directions), the other for east and west (odd)."""
    return north_south + (direction & 1) * (RED + WHITE - 2 * north_south)


def gets_response(can_tilt: Any, supply_left: Any, last_tilt: Any) -> Any:
    """Whether a megalith just placed awaits a tilt-or-decline decision: it can tilt in at
    least one direction, and it is not the final megalith of a game played with
    ``last_tilt=False`` (``supply_left`` counts the megaliths still in the supply)."""
    return can_tilt & ((supply_left > 0) | last_tilt)


def game_ends(pending: Any, supply: Any, empty: Any) -> Any:
    """The end of the game, checked after every move: no megalith awaits a decision
    (``pending < 0``) and the supply is used up or no empty square is left."""
    return (pending < 0) & ((supply == 0) | (empty == 0))
