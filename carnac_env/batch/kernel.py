"""The compiled rules of Carnac (numba): the one batched implementation, and random playouts.

:class:`~carnac_env.batch.BatchGame` keeps its games in one :class:`KernelState` (a numba
structref holding the board's tables and one row per game in each of its arrays) and steps
them with the functions here; so does
:func:`random_playout`, which plays one game to the end from a core
:class:`~carnac_env.core.game.GameState`. The rules are written once, in small functions
named for them:

* :func:`tilt_fits`: may a megalith standing on a square tilt one way (the compiled form of
  the core's tilt legality);
* :func:`place`, :func:`tilt`, :func:`decline` (and :func:`play`, which decodes an action
  number and calls one of them), each returning whether the game ended;
* :func:`dolmen_winner`: dolmens and the tie-break chain (the compiled form of
  :func:`carnac_env.core.scoring.score`'s winner);
* :func:`write_observation` and :func:`write_mask`: the core's observation planes and
  legal mask for one game;
* :func:`show_square`: both players' planes and the place bits of one square, kept up to
  date move by move;
* :func:`reset_game`: a fresh game in one slot.

Nothing here declares a rule constant or derives geometry: phases, kinds, colours and plane
indices come from :mod:`carnac_env.core`, the tilt squares and neighbours from
:attr:`Board.arrays <carnac_env.core.boards.Board.arrays>`, the action numbers from the
helpers of :mod:`carnac_env.core.actions` (compiled from the same Python functions). The
differential tests (tests/test_batch.py) play tens of thousands of games against the core.

Everything is compiled with ``cache=True``: the first import on a machine compiles once
(see docs/performance.md for the time) and later processes load the machine code from
numba's on-disk cache. The kernels take any board size without recompiling.

A note for whoever edits the loops: for a loop over many elements, read the field through
a local variable (``view = st.planes[player, i]``) rather than ``st.planes[...]`` on every
element (the latter reloads the field each time; measured 2.5x slower overall); but each
local array or view costs numba a reference-count call, so for one or two accesses index
``st`` directly. Write copies as explicit loops (numba's slice assignment measured about
10x slower).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, types
from numba.experimental import structref

from carnac_env.core import actions as _actions
from carnac_env.core.boards import Board
from carnac_env.core.game import EMPTY, LYING, OVER, PLACE, RED, RESPOND, STANDING, WHITE, GameState
from carnac_env.core.observation import (
    AWAITING,
    LYING_PLANE,
    NUM_PLANES,
    OPPONENT,
    OWN,
    STANDING_PLANE,
    SUPPLY,
    TILT_OPPONENT,
    TILT_OWN,
    TO_ACT,
)
from carnac_env.errors import CarnacError

__all__ = ["FIELDS", "KernelState", "StateArrays", "dolmen_winner", "new_state", "random_playout", "state_from_arrays"]

_JIT = {"cache": True, "nogil": True}

# The core's action-number helpers and colour rule, compiled from the very same functions.
_place_number = njit(inline="always", **_JIT)(_actions.place_number)
_place_square = njit(inline="always", **_JIT)(_actions.place_square)
_place_orientation = njit(inline="always", **_JIT)(_actions.place_orientation)
_tilt_base = njit(inline="always", **_JIT)(_actions.tilt_base)
_tilt_colours = njit(**_JIT)(_actions.tilt_colours)


#: The fields of a :class:`KernelState`, in order: the board's tables, then the games.
FIELDS = (
    "tilt_squares",
    "neighbours",
    "megaliths",
    "min_dolmen",
    "last_tilt",
    "cells",
    "kinds",
    "lying",
    "num_lying",
    "supply",
    "empty",
    "phase",
    "to_act",
    "pending",
    "pending_ns",
    "tilt_ok",
    "planes",
    "place_bits",
)


class StateArrays(NamedTuple):
    """The numpy arrays behind a :class:`KernelState`, for Python code (the same memory).

    Attributes:
        tilt_squares: ``Board.arrays.tilt_squares``, ``(S, 4, 2)`` int32, -1 off the board.
        neighbours: ``Board.arrays.neighbours``, ``(S, 4)`` int32, -1 off the board.
        megaliths: the supply at the start.
        min_dolmen: the smallest group that scores.
        last_tilt: whether the final megalith may still be tilted or declined.
        cells: ``(N, S)`` uint8, the colour seen from above (0 empty, 1 red, 2 white).
        kinds: ``(N, S)`` uint8, ``EMPTY``, ``STANDING`` or ``LYING``.
        lying: ``(N, megaliths, 2)`` int16, the lying megaliths' square pairs in the order
            they fell (the first ``num_lying`` rows count).
        num_lying: ``(N,)`` int16.
        supply: ``(N,)`` int16, megaliths not yet placed.
        empty: ``(N,)`` int32, empty squares.
        phase: ``(N,)`` int8, ``PLACE``, ``RESPOND`` or ``OVER``.
        to_act: ``(N,)`` int8, the player to act (after the end, the last to act).
        pending: ``(N,)`` int32, the square awaiting a tilt decision, else -1.
        pending_ns: ``(N,)`` uint8, the colour a north/south tilt of it shows (east/west
            shows the other), else 0.
        tilt_ok: ``(N, 4)`` bool, its legal tilt directions (all False outside ``RESPOND``).
        planes: ``(2, N, S * NUM_PLANES)`` int8, game ``i`` seen by player ``p`` in row
            ``[p, i]``: planes 0-3 kept up to date square by square (:func:`show_square`),
            plane 7 all ones; the rest is added when an observation is written.
        place_bits: ``(N, 4 * S)`` bool, the place part of the legal mask (4 per empty
            square), kept up to date with the planes.
    """

    tilt_squares: np.ndarray
    neighbours: np.ndarray
    megaliths: int
    min_dolmen: int
    last_tilt: bool
    cells: np.ndarray
    kinds: np.ndarray
    lying: np.ndarray
    num_lying: np.ndarray
    supply: np.ndarray
    empty: np.ndarray
    phase: np.ndarray
    to_act: np.ndarray
    pending: np.ndarray
    pending_ns: np.ndarray
    tilt_ok: np.ndarray
    planes: np.ndarray
    place_bits: np.ndarray


@structref.register
class KernelStateType(types.StructRef):
    """The numba type of :class:`KernelState`."""

    def preprocess_fields(self, fields):
        return tuple((name, types.unliteral(kind)) for name, kind in fields)


class KernelState(structref.StructRefProxy):
    """``N`` games on one board and that board's tables: the one object every kernel takes.

    A numba structref (a typed, by-reference struct) whose fields, named in :data:`FIELDS`
    and described in :class:`StateArrays`, mirror :class:`~carnac_env.core.game.GameState`
    row by row; the kernels read them by name only. (A tuple of arrays would do the same
    job but costs numba a reference count per array at every call between kernels, about
    100x slower per game here; a record dtype would recompile for every board size.)
    Build one with :func:`new_state`; :func:`state_arrays` gives Python the same arrays.
    """

    def __new__(cls, *fields: object) -> KernelState:
        return _make_state(*fields)


structref.define_constructor(KernelState, KernelStateType, list(FIELDS))
structref.define_boxing(KernelStateType, KernelState)


@njit(**_JIT)
def _make_state(  # pragma: no cover - compiled
    tilt_squares,
    neighbours,
    megaliths,
    min_dolmen,
    last_tilt,
    cells,
    kinds,
    lying,
    num_lying,
    supply,
    empty,
    phase,
    to_act,
    pending,
    pending_ns,
    tilt_ok,
    planes,
    place_bits,
):
    return KernelState(
        tilt_squares,
        neighbours,
        megaliths,
        min_dolmen,
        last_tilt,
        cells,
        kinds,
        lying,
        num_lying,
        supply,
        empty,
        phase,
        to_act,
        pending,
        pending_ns,
        tilt_ok,
        planes,
        place_bits,
    )


def new_state(board: Board, num_games: int) -> tuple[KernelState, StateArrays]:
    """``num_games`` fresh games on ``board``: the :class:`KernelState` for the kernels and
    the :class:`StateArrays` view of the same memory for Python."""
    n, squares = num_games, board.squares
    arrays = StateArrays(
        tilt_squares=board.arrays.tilt_squares,
        neighbours=board.arrays.neighbours,
        megaliths=int(board.megaliths),
        min_dolmen=int(board.min_dolmen),
        last_tilt=bool(board.last_tilt),
        cells=np.zeros((n, squares), dtype=np.uint8),
        kinds=np.zeros((n, squares), dtype=np.uint8),
        lying=np.zeros((n, board.megaliths, 2), dtype=np.int16),
        num_lying=np.zeros(n, dtype=np.int16),
        supply=np.zeros(n, dtype=np.int16),
        empty=np.zeros(n, dtype=np.int32),
        phase=np.zeros(n, dtype=np.int8),
        to_act=np.zeros(n, dtype=np.int8),
        pending=np.zeros(n, dtype=np.int32),
        pending_ns=np.zeros(n, dtype=np.uint8),
        tilt_ok=np.zeros((n, 4), dtype=np.bool_),
        planes=np.zeros((2, n, squares * NUM_PLANES), dtype=np.int8),
        place_bits=np.zeros((n, _actions.tilt_base(squares)), dtype=np.bool_),
    )
    state = state_from_arrays(arrays)
    reset_all(state)
    return state, arrays


def state_from_arrays(arrays: StateArrays) -> KernelState:
    """The :class:`KernelState` over ``arrays`` (no copy)."""
    return _make_state(*arrays)


# --------------------------------------------------------------------- the rules
@njit(inline="always", **_JIT)
def tilt_fits(st, i, square, direction):  # pragma: no cover - compiled
    """Whether a megalith standing on ``square`` in game ``i`` may tilt towards
    ``direction``: both squares it would cover are on the board and empty."""
    first = st.tilt_squares[square, direction, 0]
    if first < 0:
        return False
    return st.kinds[i, first] == EMPTY and st.kinds[i, st.tilt_squares[square, direction, 1]] == EMPTY


@njit(inline="always", **_JIT)
def place(st, i, square, orientation):  # pragma: no cover - compiled
    """The player to act in game ``i`` places on ``square``; True if the game ended."""
    mover = st.to_act[i]
    top, north_south, _ = _tilt_colours(mover, orientation)
    st.cells[i, square] = top
    st.kinds[i, square] = STANDING
    show_square(st, i, square)
    supply = st.supply[i] - 1
    st.supply[i] = supply
    st.empty[i] -= 1
    can_tilt = False
    tilt_ok = st.tilt_ok
    for direction in range(4):
        fits = tilt_fits(st, i, square, direction)
        tilt_ok[i, direction] = fits
        can_tilt |= fits
    last = supply == 0
    if can_tilt and (st.last_tilt or not last):
        st.phase[i] = RESPOND
        st.pending[i] = square
        st.pending_ns[i] = north_south
        st.to_act[i] = 1 - mover
        return False
    for d in range(4):
        st.tilt_ok[i, d] = False
    if last or st.empty[i] == 0:
        st.phase[i] = OVER  # the placer stays the last to act, as in the core
        return True
    st.to_act[i] = 1 - mover
    return False


@njit(inline="always", **_JIT)
def tilt(st, i, direction):  # pragma: no cover - compiled
    """Game ``i``'s responder tilts the pending megalith (a legal direction); True if it ended."""
    origin = st.pending[i]
    first = st.tilt_squares[origin, direction, 0]
    second = st.tilt_squares[origin, direction, 1]
    ns = st.pending_ns[i]
    colour = (RED + WHITE - ns) if direction & 1 else ns
    cells = st.cells
    kinds = st.kinds
    cells[i, origin] = 0
    kinds[i, origin] = EMPTY
    show_square(st, i, origin)
    for square in (first, second):
        cells[i, square] = colour
        kinds[i, square] = LYING
        show_square(st, i, square)
    count = st.num_lying[i]
    st.lying[i, count, 0] = first
    st.lying[i, count, 1] = second
    st.num_lying[i] = count + 1
    st.empty[i] -= 1
    return _after_response(st, i)  # the tilter places next


@njit(inline="always", **_JIT)
def decline(st, i):  # pragma: no cover - compiled
    """Game ``i``'s responder declines; the placer places again. True if the game ended."""
    st.to_act[i] = 1 - st.to_act[i]
    return _after_response(st, i)


@njit(inline="always", **_JIT)
def _after_response(st, i):  # pragma: no cover - compiled
    st.pending[i] = -1
    st.pending_ns[i] = 0
    for d in range(4):
        st.tilt_ok[i, d] = False
    if st.supply[i] == 0:
        st.phase[i] = OVER
        return True
    st.phase[i] = PLACE
    return False


@njit(inline="always", **_JIT)
def play(st, i, action):  # pragma: no cover - compiled
    """Play the (legal) action number ``action`` in game ``i``; True if the game ended."""
    base = _tilt_base(st.cells.shape[1])
    if action < base:
        return place(st, i, _place_square(action), _place_orientation(action))
    if action < base + 4:
        return tilt(st, i, action - base)
    return decline(st, i)


@njit(**_JIT)
def dolmen_winner(cells, neighbours, min_dolmen):  # pragma: no cover - compiled
    """The winner of a position: 0 Red, 1 White, -1 a draw (the core's scoring rules).

    Args:
        cells: ``(S,)`` cell colours of one game (0 empty, 1 red, 2 white).
        neighbours: ``Board.arrays.neighbours``.
        min_dolmen: the smallest group that counts as a dolmen.

    Dolmens are the maximal same-coloured groups of at least ``min_dolmen`` squares (found
    by a flood fill); more dolmens wins, then the sizes from largest down; identical lists
    draw. Callable from Python and from other numba code.
    """
    squares = cells.shape[0]
    seen = np.zeros(squares, np.bool_)
    stack = np.empty(squares, np.int32)
    sizes = np.zeros((2, squares), np.int32)
    counts = np.zeros(2, np.int32)
    for start in range(squares):
        colour = cells[start]
        if (colour != RED and colour != WHITE) or seen[start]:
            continue
        seen[start] = True
        stack[0] = start
        top = 1
        size = 0
        while top:
            top -= 1
            square = stack[top]
            size += 1
            for d in range(4):
                other = neighbours[square, d]
                if other >= 0 and not seen[other] and cells[other] == colour:
                    seen[other] = True
                    stack[top] = other
                    top += 1
        if size >= min_dolmen:
            player = colour - RED
            sizes[player, counts[player]] = size
            counts[player] += 1
    if counts[0] != counts[1]:
        return 0 if counts[0] > counts[1] else 1
    red = np.sort(sizes[0, : counts[0]])
    white = np.sort(sizes[1, : counts[1]])
    for k in range(counts[0] - 1, -1, -1):  # largest first
        if red[k] != white[k]:
            return 0 if red[k] > white[k] else 1
    return -1


@njit(**_JIT)
def reset_game(st, i):  # pragma: no cover - compiled
    """A fresh game in slot ``i``: empty board, full supply, Red to place."""
    for square in range(st.cells.shape[1]):
        st.cells[i, square] = 0
        st.kinds[i, square] = EMPTY
    st.num_lying[i] = 0
    st.supply[i] = st.megaliths
    st.empty[i] = st.cells.shape[1]
    st.phase[i] = PLACE
    st.to_act[i] = 0
    st.pending[i] = -1
    st.pending_ns[i] = 0
    for d in range(4):
        st.tilt_ok[i, d] = False
    _fresh_views(st, i)


@njit(inline="always", **_JIT)
def _fresh_views(st, i):  # pragma: no cover - compiled
    """The planes and place bits of an empty board (what :func:`refresh_views` gives)."""
    planes = st.planes
    for player in range(2):
        for j in range(planes.shape[2]):
            planes[player, i, j] = 0
        for j in range(TO_ACT, planes.shape[2], NUM_PLANES):
            planes[player, i, j] = 1
    place_bits = st.place_bits
    for a in range(place_bits.shape[1]):
        place_bits[i, a] = True


@njit(inline="always", **_JIT)
def show_square(st, i, square):  # pragma: no cover - compiled
    """Bring both players' planes 0-3 and the place bits of one square of game ``i`` up to
    date with its cell and kind (after a move changed it)."""
    colour = st.cells[i, square]
    kind = st.kinds[i, square]
    at = square * NUM_PLANES
    planes = st.planes
    for player in range(2):
        planes[player, i, at + OWN] = colour == player + RED
        planes[player, i, at + OPPONENT] = colour != 0 and colour != player + RED
        planes[player, i, at + STANDING_PLANE] = kind == STANDING
        planes[player, i, at + LYING_PLANE] = kind == LYING
    free = kind == EMPTY
    place_bits = st.place_bits
    for o in range(4):
        place_bits[i, _place_number(square, o)] = free


@njit(**_JIT)
def refresh_views(st, i):  # pragma: no cover - compiled
    """Rebuild game ``i``'s planes and place bits from its cells and kinds."""
    squares = st.cells.shape[1]
    for player in range(2):
        for j in range(squares * NUM_PLANES):
            st.planes[player, i, j] = 0
    for square in range(squares):
        show_square(st, i, square)
        st.planes[0, i, square * NUM_PLANES + TO_ACT] = 1
        st.planes[1, i, square * NUM_PLANES + TO_ACT] = 1


@njit(**_JIT)
def reset_all(st):  # pragma: no cover - compiled
    """A fresh game in every slot."""
    for i in range(st.cells.shape[0]):
        reset_game(st, i)


# --------------------------------------------------------------------- what the player sees
@njit(**_JIT)
def write_observation(st, i, player, out):  # pragma: no cover - compiled
    """Write game ``i`` seen by ``player`` into ``out`` (``(S * NUM_PLANES,)`` int8): the
    planes of :func:`carnac_env.core.observation.observation_planes`."""
    view = st.planes[player, i]
    for j in range(out.shape[0]):  # explicit loops: numba's slice assignment is ~10x slower
        out[j] = view[j]
    squares = st.cells.shape[1]
    phase = st.phase[i]
    supply = st.supply[i]
    acting = phase != OVER and st.to_act[i] == player
    for s in range(squares):
        out[s * NUM_PLANES + SUPPLY] = supply
        if not acting:
            out[s * NUM_PLANES + TO_ACT] = 0
    if phase == RESPOND:
        origin = st.pending[i]
        out[origin * NUM_PLANES + AWAITING] = 1
        ns = st.pending_ns[i]
        own = player + RED
        tilt_squares = st.tilt_squares
        for d in range(4):
            if st.tilt_ok[i, d]:
                colour = (RED + WHITE - ns) if d & 1 else ns
                plane = TILT_OWN if colour == own else TILT_OPPONENT
                out[tilt_squares[origin, d, 0] * NUM_PLANES + plane] = 1
                out[tilt_squares[origin, d, 1] * NUM_PLANES + plane] = 1


@njit(**_JIT)
def write_mask(st, i, out):  # pragma: no cover - compiled
    """Write game ``i``'s legal-action mask (for the player to act) into ``out`` (bool)."""
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
    out[base + 4] = responding


@njit(**_JIT)
def observe_all(st, obs, mask):  # pragma: no cover - compiled
    """Observations ``(N, S * NUM_PLANES)`` and masks ``(N, actions)`` of every game, seen by
    the player to act."""
    for i in range(st.cells.shape[0]):
        write_observation(st, i, st.to_act[i], obs[i])
        write_mask(st, i, mask[i])


# --------------------------------------------------------------------- batched steps
@njit(inline="always", **_JIT)
def is_legal(st, i, action):  # pragma: no cover - compiled
    """Whether ``action`` is legal for the player to act in game ``i``."""
    base = _tilt_base(st.cells.shape[1])
    if action < 0 or action > base + 4:
        return False
    if action < base:
        return st.phase[i] == PLACE and st.kinds[i, _place_square(action)] == EMPTY
    return st.phase[i] == RESPOND and (action == base + 4 or st.tilt_ok[i, action - base])


@njit(**_JIT)
def count_illegal(st, actions, active):  # pragma: no cover - compiled
    """How many of the active games' actions are illegal (0: all legal)."""
    bad = 0
    for i in range(actions.shape[0]):
        if active[i] and not is_legal(st, i, actions[i]):
            bad += 1
    return bad


@njit(**_JIT)
def find_illegal(st, actions, active, out):  # pragma: no cover - compiled
    """Mark in ``out`` the active games whose action is illegal."""
    for i in range(actions.shape[0]):
        out[i] = active[i] and not is_legal(st, i, actions[i])


@njit(**_JIT)
def masks_all(st, mask):  # pragma: no cover - compiled
    """The legal-action masks ``(N, actions)`` of every game."""
    for i in range(st.cells.shape[0]):
        write_mask(st, i, mask[i])


@njit(**_JIT)
def step_all(st, actions, active, rewards, terminated, final, observer):  # pragma: no cover - compiled
    """Play the (checked) actions of the active games; score, report and reset the games that
    end. ``final`` is ``(N, S * NUM_PLANES)`` (or ``(0, 0)`` when not wanted): the finished
    games seen by ``observer[i]``."""
    want_final = final.shape[0] > 0
    for i in range(actions.shape[0]):
        if not active[i] or not play(st, i, actions[i]):
            continue
        winner = dolmen_winner(st.cells[i], st.neighbours, st.min_dolmen)
        if winner >= 0:
            rewards[i, winner] = 1.0
            rewards[i, 1 - winner] = -1.0
        terminated[i] = True
        if want_final:
            write_observation(st, i, observer[i], final[i])
        reset_game(st, i)


@njit(inline="always", **_JIT)
def _pick(st, i, u):  # pragma: no cover - compiled
    """The legal action number of rank ``floor(u * count)`` in increasing order, ``u`` in [0, 1)."""
    kinds = st.kinds
    squares = kinds.shape[1]
    if st.phase[i] == PLACE:
        k = int(u * (4 * st.empty[i]))
        rank = k // 4
        for s in range(squares):
            if kinds[i, s] == EMPTY:
                if rank == 0:
                    return _place_number(s, k % 4)
                rank -= 1
    count = 1
    for d in range(4):
        count += st.tilt_ok[i, d]
    k = int(u * count)
    for d in range(4):
        if st.tilt_ok[i, d]:
            if k == 0:
                return _tilt_base(squares) + d
            k -= 1
    return _tilt_base(squares) + 4


@njit(**_JIT)
def sample_all(st, uniform, actions):  # pragma: no cover - compiled
    """One uniformly random legal action per game, from one uniform number per game."""
    for i in range(uniform.shape[0]):
        actions[i] = _pick(st, i, uniform[i])


@njit(**_JIT)
def winners(cells, neighbours, min_dolmen, out):  # pragma: no cover - compiled
    """:func:`dolmen_winner` of every row of ``cells`` ``(K, S)`` into ``out`` ``(K,)``."""
    for k in range(cells.shape[0]):
        out[k] = dolmen_winner(cells[k], neighbours, min_dolmen)


# --------------------------------------------------------------------- random playouts
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


@njit(**_JIT)
def _splitmix(x):  # pragma: no cover - compiled
    """SplitMix64: the next generator state and a uniform float in [0, 1)."""
    x = x + _GOLDEN
    z = x
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    z = z ^ (z >> np.uint64(31))
    return x, np.float64(z >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@njit(**_JIT)
def _random_action(st, x):  # pragma: no cover - compiled
    """A uniformly random legal action of game 0 and the generator's next state. Placements
    draw (square, orientation) pairs until the square is empty (uniform over the empty
    squares, cheaper than counting them); responses use :func:`_pick`."""
    squares = st.cells.shape[1]
    if st.phase[0] != PLACE:
        x, u = _splitmix(x)
        return x, _pick(st, 0, u)
    while True:
        x, u = _splitmix(x)
        k = int(u * (4 * squares))
        if st.kinds[0, _place_square(k)] == EMPTY:
            return x, k


@njit(**_JIT)
def _playout(
    tables, cells, kinds, num_lying, supply, empty, phase, to_act, pending, pending_ns, seed, record
):  # pragma: no cover
    """Copy one core game into a one-game KernelState and play uniformly random legal moves
    to the end; return the winner (0, 1, -1 draw). ``tables`` are the board's
    ``(tilt_squares, neighbours, megaliths, min_dolmen, last_tilt)``. The actions played are
    written to ``record`` while it has room (``record[0]`` first; pass an empty array to
    skip), and their number is returned too."""
    tilt_squares, neighbours, megaliths, min_dolmen, last_tilt = tables
    st = KernelState(
        tilt_squares,
        neighbours,
        megaliths,
        min_dolmen,
        last_tilt,
        cells.copy().reshape(1, cells.shape[0]),
        kinds.copy().reshape(1, kinds.shape[0]),
        np.zeros((1, megaliths, 2), np.int16),
        np.full(1, num_lying, np.int16),
        np.full(1, supply, np.int16),
        np.full(1, empty, np.int32),
        np.full(1, phase, np.int8),
        np.full(1, to_act, np.int8),
        np.full(1, pending, np.int32),
        np.full(1, pending_ns, np.uint8),
        np.zeros((1, 4), np.bool_),
        np.zeros((2, 1, cells.shape[0] * NUM_PLANES), np.int8),
        np.zeros((1, _tilt_base(cells.shape[0])), np.bool_),
    )
    if phase == RESPOND:
        for d in range(4):
            st.tilt_ok[0, d] = tilt_fits(st, 0, pending, d)
    x = np.uint64(seed)
    over = phase == OVER
    moves = 0
    while not over:
        x, action = _random_action(st, x)
        if moves < record.shape[0]:
            record[moves] = action
        moves += 1
        over = play(st, 0, action)
    return dolmen_winner(st.cells[0], neighbours, min_dolmen), moves


_TABLES: dict[Board, tuple] = {}


def _board_tables(board: Board) -> tuple:
    """``(tilt_squares, neighbours, megaliths, min_dolmen, last_tilt)`` of ``board``, kept."""
    tables = _TABLES.get(board)
    if tables is None:
        arrays = board.arrays
        tables = (
            arrays.tilt_squares,
            arrays.neighbours,
            int(board.megaliths),
            int(board.min_dolmen),
            bool(board.last_tilt),
        )
        _TABLES[board] = tables
    return tables


_NO_RECORD = np.zeros(0, dtype=np.int64)


def random_playout(state: GameState, seed: int) -> int:
    """Play one game of uniformly random legal moves from ``state`` to the end, compiled.

    Every move is drawn uniformly from the legal actions and played by the same compiled
    rules functions as :class:`~carnac_env.batch.BatchGame` (:func:`play`); the generator is
    SplitMix64 seeded with ``seed``, so the same state and seed give the same game on every
    machine. ``state`` is not changed (its cells and kinds are copied); a finished
    ``state`` is simply scored. The call costs a few microseconds on top of the game.

    Args:
        state: a core game state (one the core built or played; it is not validated).
        seed: any integer (taken modulo 2**64).

    Returns:
        The winner: 0 (Red), 1 (White) or -1 for a draw.

    Raises:
        CarnacError: ``state`` is not a GameState or ``seed`` not an integer.
    """
    return _run_playout(state, seed, _NO_RECORD)[0]


def playout_actions(state: GameState, seed: int) -> tuple[int, list[int]]:
    """:func:`random_playout`, also returning the actions it played (for tests and replays)."""
    record = np.zeros(2 * state.board.megaliths + 2, dtype=np.int64)  # a place, maybe a response, each
    winner, moves = _run_playout(state, seed, record)
    return winner, record[:moves].tolist()


def _check_bounds(state: GameState) -> None:
    """The few facts the compiled playout relies on to stay inside its arrays and to end
    (cheap: a playout is called in tight loops). Not a full check of the state."""
    board = state.board
    squares = board.squares
    phase, supply = state.phase, state.supply
    if (
        not isinstance(state.cells, bytearray)
        or not isinstance(state.kinds, bytearray)
        or len(state.cells) != squares
        or len(state.kinds) != squares
        or phase not in (PLACE, RESPOND, OVER)
        or state.to_act not in (0, 1)
        or not 0 <= supply <= board.megaliths
        or len(state.lying) + supply > board.megaliths
        or state.empty != state.kinds.count(EMPTY)
        or (phase == PLACE and (supply == 0 or state.empty == 0))
        or (phase == RESPOND and not 0 <= state.pending < squares)
    ):
        raise CarnacError(
            f"random_playout got a malformed state (phase={phase!r}, to_act={state.to_act!r}, "
            f"supply={supply!r}, empty={state.empty!r}, pending={state.pending!r}, {len(state.lying)} lying, "
            f"{len(state.cells)} cells on a {squares}-square board); expected a game the core built or played"
        )


def _run_playout(state: GameState, seed: int, record: np.ndarray) -> tuple[int, int]:
    if not isinstance(state, GameState):
        raise CarnacError(f"random_playout needs a GameState, got {type(state).__name__}")
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
        raise CarnacError(f"seed={seed!r} must be an integer")
    _check_bounds(state)
    winner, moves = _playout(
        _board_tables(state.board),
        np.frombuffer(state.cells, dtype=np.uint8),
        np.frombuffer(state.kinds, dtype=np.uint8),
        len(state.lying),
        state.supply,
        state.empty,
        state.phase,
        state.to_act,
        state.pending,
        state.pending_colours[0],
        (int(seed) + 2**63) % 2**64 - 2**63,  # as int64; the generator reads its 64 bits
        record,
    )
    return int(winner), int(moves)
