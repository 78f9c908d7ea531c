"""The fields of a position: the codes they hold, and :func:`check_fields`, the check that
they agree.

A position (a :class:`~carnac_env.core.game.GameState`) is ten plain fields (:class:`Position`).
The codes are stated here: the phases of the turn and what a square holds (the cell colours,
:data:`RED` and :data:`WHITE`, are :mod:`carnac_env.core.arithmetic`'s). :mod:`carnac_env.core.game`
re-exports them. :func:`check_fields` is the check of
:func:`carnac_env.core.validate.validate` without the type check. The diagram parser
(:mod:`carnac_env.core.diagram`), which writes into a fresh GameState for
:meth:`GameState.from_diagram <carnac_env.core.game.GameState.from_diagram>`, calls it from
below the game module. Everything else calls ``validate``.

Cheap enough for a search's inner loop: the per-square facts are checked with C-speed
``bytearray`` operations and only the lying megaliths (at most the supply) are looped over.
Nothing here imports more than the standard library and the core.
"""

from __future__ import annotations

from typing import Any, Protocol

from carnac_env._checks import is_whole
from carnac_env.core.arithmetic import RED, WHITE, game_ends
from carnac_env.core.boards import Board
from carnac_env.errors import CarnacError

__all__ = ["EMPTY", "LYING", "OVER", "PHASE_NAMES", "PLACE", "RESPOND", "STANDING", "Position", "check_fields"]

#: Phases of the turn.
PLACE, RESPOND, OVER = 0, 1, 2
PHASE_NAMES = ("place", "respond", "over")

#: What a square holds (``GameState.kinds``).
EMPTY, STANDING, LYING = 0, 1, 2

# bytes.translate tables: any non-zero value -> 1, and the values above 2 -> 1 (others 0).
_NONZERO = bytes([0] + [1] * 255)
_ABOVE_TWO = bytes([0, 0, 0] + [1] * 253)


class Position(Protocol):
    """The fields of a position, as a :class:`~carnac_env.core.game.GameState` holds them
    (its docstring says what each means)."""

    board: Board
    cells: bytearray
    kinds: bytearray
    lying: list[tuple[int, int]]
    supply: int
    phase: int
    to_act: int
    pending: int
    pending_colour: int
    empty: int


def check_fields(state: Position, *, name: str = "state") -> None:
    """Check that the fields of ``state`` agree; raise if they do not.

    The facts checked: ``board`` is a Board; ``cells`` and ``kinds`` are bytearrays of one
    byte per square with values 0..2, a square being empty in both or in neither; ``empty``
    counts the empty squares; ``phase``, ``to_act``, ``supply`` and ``pending`` are whole
    numbers (never bools) in range; ``lying`` is a list of ``(square, square)`` pairs of
    orthogonally adjacent lying squares of one colour that covers every lying square exactly
    once; no more megaliths are on the board than have left the supply; in ``PLACE`` a
    megalith is left to place and an empty square to place it on; in ``RESPOND`` the
    ``pending`` square holds a standing megalith, ``pending_colour`` is 1 or 2, and the
    supply may be 0 only under ``last_tilt``; outside ``RESPOND`` nothing is pending; and a
    finished game (``OVER``) is one the end-of-game rule ends.

    Args:
        state: the position (any object with a position's fields).
        name: how messages name it (``"the state"``, ``"set_state's state"``...).

    Raises:
        CarnacError: the first fact that fails, naming the field, its value and what was
            expected. ``state`` is not changed.
    """
    board = state.board
    if not isinstance(board, Board):
        raise CarnacError(f"{name}.board={board!r}; expected a Board")
    squares = board.squares
    cells = _square_bytes(name, "cells", state.cells, squares)
    kinds = _square_bytes(name, "kinds", state.kinds, squares)
    if cells.translate(_NONZERO) != kinds.translate(_NONZERO):
        square = next(s for s in range(squares) if (cells[s] == 0) != (kinds[s] == EMPTY))
        raise CarnacError(
            f"{name}: square {square} has colour {cells[square]} and kind {kinds[square]}; "
            "a square is empty (0) in both or in neither"
        )
    phase = _whole(name, "phase", state.phase, (PLACE, RESPOND, OVER), "PLACE (0), RESPOND (1) or OVER (2)")
    _whole(name, "to_act", state.to_act, (0, 1), "0 (Red) or 1 (White)")
    supply = _whole(name, "supply", state.supply, range(board.megaliths + 1), f"0..{board.megaliths}")
    empty = kinds.count(EMPTY)
    if not is_whole(state.empty) or state.empty != empty:
        raise CarnacError(f"{name}.empty={state.empty!r} but {empty} squares are empty")
    lying = _lying_pairs(name, board, state.lying, cells, kinds)
    on_board = kinds.count(STANDING) + lying
    if on_board > board.megaliths - supply:
        raise CarnacError(
            f"{name}: {on_board} megaliths on the board but only {board.megaliths - supply} left a supply "
            f"of {board.megaliths} (supply={supply})"
        )
    _pending(name, board, state, phase, supply, kinds)
    if phase == PLACE:
        if supply == 0:
            raise CarnacError(f"{name}.supply=0 in the place phase; expected a megalith left to place (>= 1)")
        if empty == 0:
            raise CarnacError(f"{name}: no square is empty; a game in the place phase needs an empty square")
    elif phase == OVER and not game_ends(-1, supply, empty):
        raise CarnacError(
            f"{name}.phase=OVER with supply={supply} and {empty} empty squares; the game ends only when the "
            "supply is used up or no square is empty"
        )


def _square_bytes(name: str, field: str, value: Any, squares: int) -> bytearray:
    if not isinstance(value, bytearray) or len(value) != squares:
        size = f"{len(value)} bytes" if isinstance(value, bytes | bytearray) else type(value).__name__
        raise CarnacError(f"{name}.{field} must be a bytearray of {squares} squares, got {size}")
    if value.translate(_ABOVE_TWO).count(1):
        square = next(s for s in range(squares) if value[s] > 2)
        raise CarnacError(f"{name}.{field}[{square}]={value[square]}; expected 0, 1 or 2")
    return value


def _whole(name: str, field: str, value: Any, allowed: Any, expected: str) -> int:
    if not is_whole(value) or value not in allowed:
        raise CarnacError(f"{name}.{field}={_short(value)}; expected {expected}")
    return int(value)


def _lying_pairs(name: str, board: Board, pairs: Any, cells: bytearray, kinds: bytearray) -> int:
    """Check the lying megaliths; return how many there are."""
    if not isinstance(pairs, list) or len(pairs) > board.megaliths:
        what = f"a list of {len(pairs)} pairs" if isinstance(pairs, list) else _short(pairs)
        raise CarnacError(f"{name}.lying must be a list of at most {board.megaliths} square pairs, got {what}")
    covered: set[int] = set()
    for pair in pairs:
        first, second = _lying_pair(name, board, pair, cells, kinds)
        if first in covered or second in covered:
            twice = first if first in covered else second
            raise CarnacError(f"{name}.lying: square {twice} is in two lying pairs")
        covered.update((first, second))
    if len(covered) != kinds.count(LYING):
        square = next(s for s in range(board.squares) if kinds[s] == LYING and s not in covered)
        raise CarnacError(f"{name}: square {square} is lying but in no lying pair of {name}.lying")
    return len(pairs)


def _lying_pair(name: str, board: Board, pair: Any, cells: bytearray, kinds: bytearray) -> tuple[int, int]:
    """One lying pair, checked: two orthogonally adjacent squares that lie and show one colour."""
    if not isinstance(pair, tuple) or len(pair) != 2:
        raise CarnacError(f"{name}.lying pair {_short(pair)} is not a (square, square) tuple")
    first, second = pair
    squares, cols = board.squares, board.cols
    if not all(is_whole(square) and 0 <= square < squares for square in pair):
        raise CarnacError(f"{name}.lying pair {_short(pair)} is not two squares of the board (0..{squares - 1})")
    gap = abs(first - second)
    if not (gap == cols or (gap == 1 and first // cols == second // cols)):
        raise CarnacError(f"{name}.lying pair {pair!r}: the squares are not orthogonally adjacent")
    if kinds[first] != LYING or kinds[second] != LYING or cells[first] != cells[second]:
        raise CarnacError(f"{name}.lying pair {pair!r}: both squares must be lying and show one colour")
    return first, second


def _short(value: Any) -> str:
    """``repr(value)``, cut short (a message names a bad value, it does not dump it)."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _pending(name: str, board: Board, state: Position, phase: int, supply: int, kinds: bytearray) -> None:
    pending, colour = state.pending, state.pending_colour
    if phase != RESPOND:
        if not (is_whole(pending) and pending == -1 and is_whole(colour) and colour == 0):
            raise CarnacError(
                f"{name}.pending={pending!r}, pending_colour={colour!r} in the {PHASE_NAMES[phase]} phase; "
                "expected -1 and 0 (nothing awaits a decision)"
            )
        return
    _whole(name, "pending", pending, range(board.squares), f"a square 0..{board.squares - 1}")
    if kinds[pending] != STANDING:
        raise CarnacError(f"{name}.pending={pending}: the megalith awaiting a tilt must be standing there")
    _whole(name, "pending_colour", colour, (RED, WHITE), "1 (red) or 2 (white), the colour a north/south tilt shows")
    if supply == 0 and not board.last_tilt:
        raise CarnacError(
            f"{name}.supply=0 while a megalith awaits a decision, but this board has last_tilt=False "
            "(the final megalith is never tilted)"
        )
