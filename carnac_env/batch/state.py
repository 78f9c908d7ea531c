"""The compiled engine's state: the fields of :class:`KernelState`, declared once.

A :class:`KernelState` is a numba structref (a typed, by-reference struct) holding one
board's tables and ``N`` games, one row per game in each of its arrays; every compiled
function of :mod:`carnac_env.batch.rules` and :mod:`carnac_env.batch.views` takes it and
reads its fields by name. (A tuple of arrays would do the same job but costs numba a
reference count per array at every call between kernels, about 100x slower per game here; a
record dtype would recompile for every board size.)

:data:`FIELDS` is the one declaration of the fields: name, type, shape and meaning. The
structref's constructor, the :class:`StateArrays` view that Python code reads, the
allocation in :func:`new_state` and the documentation are all made from it, so a field is
added or changed in one place.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
from numba import njit, types
from numba.experimental import structref

from carnac_env.core.actions import tilt_base
from carnac_env.core.boards import Board
from carnac_env.core.game import GameState
from carnac_env.core.observation import NUM_PLANES, SUPPLY

__all__ = ["FIELDS", "Field", "KernelState", "StateArrays", "game_fields", "new_state", "state_from_arrays"]

_JIT = {"cache": True, "nogil": True}


class Field(NamedTuple):
    """One field of :class:`KernelState`.

    Attributes:
        name: the field's name (the same in the structref and in :class:`StateArrays`).
        make: ``make(board, n)``: the field's value for ``n`` fresh games on ``board`` (a
            board table, a scalar, or a zero array of the field's type and shape).
        doc: what it holds.
    """

    name: str
    make: Callable[[Board, int], Any]
    doc: str


def _games(dtype: type, shape: Callable[[Board], tuple[int, ...]]) -> Callable[[Board, int], np.ndarray]:
    """A per-game array: zeros of ``(n, *shape(board))``."""
    return lambda board, n: np.zeros((n, *shape(board)), dtype=dtype)


def _scratch(dtype: type, size: Callable[[Board], int]) -> Callable[[Board, int], np.ndarray]:
    """A work array shared by the games (for the compiled scorer), of ``size(board)`` entries."""
    return lambda board, n: np.zeros(size(board), dtype=dtype)


def _supply_bytes(board: Board) -> np.ndarray:
    mask = np.zeros(board.squares * NUM_PLANES, dtype=np.int8)
    mask[SUPPLY::NUM_PLANES] = -1
    return mask


#: The fields of a :class:`KernelState`, in order: the board's tables, then the games, then
#: scratch space. ``S`` is the number of squares, ``N`` the number of games.
FIELDS: tuple[Field, ...] = (
    Field("tilt_squares", lambda b, n: b.arrays.tilt_squares, "``Board.arrays.tilt_squares``, ``(S, 4, 2)`` int32"),
    Field("neighbours", lambda b, n: b.arrays.neighbours, "``Board.arrays.neighbours``, ``(S, 4)`` int32"),
    Field("megaliths", lambda b, n: int(b.megaliths), "the supply at the start"),
    Field("min_dolmen", lambda b, n: int(b.min_dolmen), "the smallest group that scores"),
    Field(
        "supply_bytes",
        lambda b, n: _supply_bytes(b),
        "``(S * NUM_PLANES,)`` int8, -1 (all bits set) in the supply plane's bytes of an observation and 0 "
        "elsewhere: ANDed with the supply and ORed into a copied view, it writes the supply plane in the "
        "same vectorised pass as the copy",
    ),
    Field("last_tilt", lambda b, n: bool(b.last_tilt), "whether the final megalith may still be tilted or declined"),
    Field("cells", _games(np.uint8, lambda b: (b.squares,)), "``(N, S)`` uint8, the colour seen from above"),
    Field("kinds", _games(np.uint8, lambda b: (b.squares,)), "``(N, S)`` uint8, ``EMPTY``, ``STANDING``, ``LYING``"),
    Field(
        "lying",
        _games(np.int16, lambda b: (b.megaliths, 2)),
        "``(N, megaliths, 2)`` int16, the lying megaliths' square pairs in the order they fell",
    ),
    Field("num_lying", _games(np.int16, lambda b: ()), "``(N,)`` int16, how many rows of ``lying`` count"),
    Field("supply", _games(np.int16, lambda b: ()), "``(N,)`` int16, megaliths not yet placed"),
    Field("empty", _games(np.int32, lambda b: ()), "``(N,)`` int32, empty squares"),
    Field("phase", _games(np.int8, lambda b: ()), "``(N,)`` int8, ``PLACE``, ``RESPOND`` or ``OVER``"),
    Field("to_act", _games(np.int8, lambda b: ()), "``(N,)`` int8, the player to act (after the end, the last)"),
    Field("pending", _games(np.int32, lambda b: ()), "``(N,)`` int32, the square awaiting a tilt decision, else -1"),
    Field(
        "pending_colour",
        _games(np.uint8, lambda b: ()),
        "``(N,)`` uint8, the colour a north/south tilt of it shows (east/west: the other), else 0",
    ),
    Field("tilt_ok", _games(np.bool_, lambda b: (4,)), "``(N, 4)`` bool, its legal tilt directions"),
    Field(
        "planes",
        lambda b, n: np.zeros((2, n, b.squares * NUM_PLANES), dtype=np.int8),
        "``(2, N, S * NUM_PLANES)`` int8, game ``i`` seen by player ``p`` in row ``[p, i]``: planes 0-3 "
        "kept square by square, plane 7 all ones; the rest is added when an observation is written",
    ),
    Field(
        "free",
        _games(np.int16, lambda b: (b.squares,)),
        "``(N, S)`` int16, the empty squares of each game in no particular order (the first ``empty`` entries "
        "count), for drawing a random placement without a search",
    ),
    Field("where", _games(np.int16, lambda b: (b.squares,)), "``(N, S)`` int16, each empty square's place in ``free``"),
    Field(
        "place_bits",
        _games(np.bool_, lambda b: (tilt_base(b.squares),)),
        "``(N, 4 * S)`` bool, the place part of the legal mask (4 per empty square)",
    ),
    Field("seen", _scratch(np.bool_, lambda b: b.squares), "``(S,)`` bool, scratch: squares the scorer has reached"),
    Field(
        "stack",
        _scratch(np.int32, lambda b: b.squares + 1),
        "``(S + 1,)`` int32, scratch: the scorer's flood-fill list (:func:`~carnac_env.batch.scoring.group_into`)",
    ),
    Field(
        "balance",
        _scratch(np.int32, lambda b: b.squares + 1),
        "``(S + 1,)`` int32, scratch: Red's dolmens of each size minus White's",
    ),
)
FIELD_NAMES = tuple(f.name for f in FIELDS)

#: The numpy arrays (and scalars) behind a :class:`KernelState`, for Python code: the same
#: memory, one attribute per field of :data:`FIELDS`.
StateArrays = NamedTuple("StateArrays", [(f.name, Any) for f in FIELDS])  # type: ignore[misc]
StateArrays.__doc__ = "The numpy arrays behind a :class:`KernelState` (the same memory).\n\nAttributes:\n" + "".join(
    f"    {f.name}: {f.doc}.\n" for f in FIELDS
)


@structref.register
class KernelStateType(types.StructRef):
    """The numba type of :class:`KernelState`."""

    def preprocess_fields(self, fields: Any) -> tuple:
        return tuple((name, types.unliteral(kind)) for name, kind in fields)


class KernelState(structref.StructRefProxy):
    """``N`` games on one board and that board's tables: the one object every kernel takes.

    Its fields are those of :data:`FIELDS`, mirroring :class:`~carnac_env.core.game.GameState`
    row by row. Build one with :func:`new_state`; :class:`StateArrays` gives Python the same
    arrays.
    """

    def __new__(cls, *fields: object) -> KernelState:
        return _make_state(*fields)


structref.define_constructor(KernelState, KernelStateType, list(FIELD_NAMES))
structref.define_boxing(KernelStateType, KernelState)


@njit(**_JIT)
def _make_state(*fields):  # pragma: no cover - compiled
    return KernelState(*fields)


def new_state(board: Board, num_games: int) -> tuple[KernelState, StateArrays]:
    """``num_games`` games on ``board`` (zeroed: reset them before use), as the
    :class:`KernelState` for the kernels and the :class:`StateArrays` view of the same memory."""
    arrays = StateArrays(*(f.make(board, num_games) for f in FIELDS))
    return state_from_arrays(arrays), arrays


def state_from_arrays(arrays: StateArrays) -> KernelState:
    """The :class:`KernelState` over ``arrays`` (no copy)."""
    return _make_state(*arrays)


_NO_LYING = np.zeros((0, 2), dtype=np.int16)


def game_fields(state: GameState, lying: bool = True) -> tuple:
    """The fields of a core position in the order :func:`~carnac_env.batch.rules.load_game`
    takes them after the slot: ``(cells, kinds, lying, num_lying, supply, empty, phase, to_act,
    pending, pending_colour)``, the one place that maps a
    :class:`~carnac_env.core.game.GameState` onto a kernel slot (``load_game(st, i,
    *game_fields(state))``; ``state`` is checked beforehand by the core's ``validate``).

    Args:
        state: the core position (not changed; ``cells`` and ``kinds`` are read-only views of
            its bytes).
        lying: pass the lying megaliths' square pairs. Without them (for a slot whose pairs
            are never read: a playout, a search) an empty ``(0, 2)`` array goes instead, and
            ``num_lying`` still counts the pairs, so that the slot's later tilts append theirs
            in range (at most ``megaliths`` in all) just as in a slot loaded with them.
    """
    pairs = np.array(state.lying, dtype=np.int16).reshape(-1, 2) if lying else _NO_LYING
    return (
        np.frombuffer(state.cells, dtype=np.uint8),
        np.frombuffer(state.kinds, dtype=np.uint8),
        pairs,
        len(state.lying),
        state.supply,
        state.empty,
        state.phase,
        state.to_act,
        state.pending,
        state.pending_colour,
    )
