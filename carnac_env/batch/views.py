"""What the players see, compiled: the observation planes and the legal mask of each game.

The core's :func:`~carnac_env.core.observation.observation_planes` and
:func:`~carnac_env.core.observation.legal_mask`, for the games of a
:class:`~carnac_env.batch.state.KernelState`. Planes 0-3 of both players' views and the
place bits of the mask are kept per game and updated square by square as moves change them
(:func:`show_square`); writing an observation copies the view of one player, adding the
supply in the same pass, then marks the pending megalith and the tilt previews
(:func:`write_observation`).

A note for whoever edits the loops: for a loop over many elements, read the field through
a local variable (``view = st.planes[player, i]``) rather than ``st.planes[...]`` on every
element (the latter reloads the field each time; measured 2.5x slower overall); but each
local array or view costs numba a reference-count call, so for one or two accesses index
``st`` directly. Write copies as explicit loops (numba's slice assignment measured about
10x slower).
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.extending import register_jitable

from carnac_env.core import actions as _actions
from carnac_env.core import arithmetic as _arithmetic
from carnac_env.core.game import EMPTY, LYING, OVER, PLACE, RESPOND, STANDING
from carnac_env.core.observation import (
    AWAITING,
    LYING_PLANE,
    NUM_PLANES,
    OPPONENT,
    OWN,
    STANDING_PLANE,
    TILT_OPPONENT,
    TILT_OWN,
    TO_ACT,
)

_JIT = {"cache": True, "nogil": True}
_INLINE = {"inline": "always", **_JIT}

# The core's action numbers and colour arithmetic, compiled from the very same functions.
place_number = njit(**_INLINE)(_actions.place_number)
register_jitable(_actions.tilt_base)  # the core's decline_number calls it
decline_number = njit(**_INLINE)(_actions.decline_number)
own_colour = njit(**_INLINE)(_arithmetic.own_colour)
opponent_colour = njit(**_INLINE)(_arithmetic.opponent_colour)
tilt_colour = njit(**_INLINE)(_arithmetic.tilt_colour)


@njit(**_INLINE)
def show_square(st, i, square):  # pragma: no cover - compiled
    """Bring both players' planes 0-3 and the place bits of one square of game ``i`` up to
    date with its cell and kind (after a move changed it)."""
    colour = st.cells[i, square]
    kind = st.kinds[i, square]
    at = square * NUM_PLANES
    planes = st.planes
    for player in range(2):
        planes[player, i, at + OWN] = colour == own_colour(player)
        planes[player, i, at + OPPONENT] = colour == opponent_colour(player)
        planes[player, i, at + STANDING_PLANE] = kind == STANDING
        planes[player, i, at + LYING_PLANE] = kind == LYING
    free = kind == EMPTY
    place_bits = st.place_bits
    for o in range(4):
        place_bits[i, place_number(square, o)] = free


@njit(**_INLINE)
def fresh_views(st, i):  # pragma: no cover - compiled
    """The planes and place bits of an empty board (what :func:`refresh_views` gives)."""
    for player in range(2):
        view = st.planes[player, i]
        for j in range(view.shape[0]):
            view[j] = 0
        for j in range(TO_ACT, view.shape[0], NUM_PLANES):
            view[j] = 1
    bits = st.place_bits[i]
    for a in range(bits.shape[0]):
        bits[a] = True


@njit(**_JIT)
def refresh_views(st, i):  # pragma: no cover - compiled
    """Rebuild game ``i``'s planes and place bits from its cells and kinds."""
    fresh_views(st, i)
    for square in range(st.cells.shape[1]):
        show_square(st, i, square)


@njit(**_INLINE)
def write_observation(st, i, player, out):  # pragma: no cover - compiled
    """Write game ``i`` seen by ``player`` into ``out`` (``(S * NUM_PLANES,)`` int8): the
    planes of :func:`carnac_env.core.observation.observation_planes`."""
    view = st.planes[player, i]
    # The view (whose supply plane is 0) ORed with the supply in the supply plane's bytes: one
    # vectorised pass (a copy, then a strided loop over the supply plane, measured 1.9x slower).
    supply = np.int8(st.supply[i])
    supply_bytes = st.supply_bytes
    for j in range(out.shape[0]):  # explicit loops: numba's slice assignment is ~10x slower
        out[j] = view[j] | (supply_bytes[j] & supply)
    phase = st.phase[i]
    if phase == OVER or st.to_act[i] != player:
        for j in range(TO_ACT, out.shape[0], NUM_PLANES):
            out[j] = 0
    if phase == RESPOND:
        origin = st.pending[i]
        out[origin * NUM_PLANES + AWAITING] = 1
        north_south = st.pending_colour[i]
        own = own_colour(player)
        for d in range(4):
            if st.tilt_ok[i, d]:
                plane = TILT_OWN if tilt_colour(north_south, d) == own else TILT_OPPONENT
                out[st.tilt_squares[origin, d, 0] * NUM_PLANES + plane] = 1
                out[st.tilt_squares[origin, d, 1] * NUM_PLANES + plane] = 1


@njit(**_INLINE)
def write_mask(st, i, out):  # pragma: no cover - compiled
    """Write game ``i``'s legal-action mask (for the player to act) into ``out`` (bool): the
    rule of :func:`~carnac_env.batch.rules.is_legal`, with the placements read from the place
    bits that :func:`show_square` keeps (``kinds == EMPTY`` per square, four times)."""
    base = st.place_bits.shape[1]
    phase = st.phase[i]
    if phase == PLACE:
        bits = st.place_bits[i]
        for a in range(base):
            out[a] = bits[a]
    else:
        for a in range(base):
            out[a] = False
    responding = phase == RESPOND
    for d in range(4):
        out[base + d] = responding and st.tilt_ok[i, d]
    out[decline_number(st.cells.shape[1])] = responding


@njit(**_JIT)
def observe_all(st, obs, mask):  # pragma: no cover - compiled
    """Observations ``(N, S * NUM_PLANES)`` and masks ``(N, actions)`` of every game, seen by
    the player to act."""
    for i in range(st.cells.shape[0]):
        write_observation(st, i, st.to_act[i], obs[i])
        write_mask(st, i, mask[i])


@njit(**_JIT)
def masks_all(st, mask):  # pragma: no cover - compiled
    """The legal-action masks ``(N, actions)`` of every game."""
    for i in range(st.cells.shape[0]):
        write_mask(st, i, mask[i])
