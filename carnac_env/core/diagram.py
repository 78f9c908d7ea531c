"""Positions from pictures of the board: :meth:`GameState.from_diagram` and :meth:`GameState.diagram`.

A diagram has one line per row, north first, and one character per square (spaces are
ignored): ``.`` empty, ``R``/``W`` a standing megalith showing red/white, ``r``/``w`` a
square of a lying megalith. The lying squares are paired into megaliths here (each square
in reading order with an unpaired neighbour of its colour, east first, else south); the
position is then checked by :func:`carnac_env.core.fields.check_fields`, the check of a
position's fields that :func:`carnac_env.core.validate.validate` makes for the engines too.
This module sits below :mod:`carnac_env.core.game`: it writes into the fresh GameState that
:meth:`GameState.from_diagram <carnac_env.core.game.GameState.from_diagram>` hands it, and it
does not import the game module.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from carnac_env._checks import whole
from carnac_env.core.arithmetic import RED, WHITE
from carnac_env.core.boards import Board
from carnac_env.core.fields import EMPTY, LYING, STANDING, Position, check_fields
from carnac_env.core.notation import square_name
from carnac_env.errors import CarnacError

#: Diagram characters and the (cell colour, kind) each stands for.
CODES = {
    ".": (0, EMPTY),
    "R": (RED, STANDING),
    "W": (WHITE, STANDING),
    "r": (RED, LYING),
    "w": (WHITE, LYING),
}
_LETTERS = {code: char for char, code in CODES.items()}


def position_from_diagram(state: Position, diagram: Any, *, to_act: Any = 0, supply: Any = None) -> Position:
    """Fill the fresh game ``state`` (a new GameState) from ``diagram`` (see
    :meth:`GameState.from_diagram <carnac_env.core.game.GameState.from_diagram>`).

    Raises:
        CarnacError: see :meth:`GameState.from_diagram`; the message names the bad value.
    """
    board = state.board
    to_act = whole("to_act", to_act, 0, 1)
    supply = None if supply is None else whole("supply", supply)
    for square, char in enumerate("".join(diagram_rows(board, diagram))):
        code = CODES.get(char)
        if code is None:
            raise CarnacError(f"diagram square {square_name(board, square)} has {char!r}; expected one of . R W r w")
        state.cells[square], state.kinds[square] = code
    pairs = pair_lying_squares(board, state.cells, state.kinds)
    if pairs is None:
        raise CarnacError(_why_unpairable(board, state.cells, state.kinds))
    used = state.kinds.count(STANDING) + len(pairs)
    if used > board.megaliths:
        raise CarnacError(
            f"the diagram shows {used} megaliths ({len(pairs)} lying), more than the {board.megaliths} "
            "of this game's supply"
        )
    state.lying.extend(pairs)
    state.empty = state.kinds.count(EMPTY)
    state.supply = board.megaliths - used if supply is None else supply
    state.to_act = to_act
    check_fields(state)
    return state


def diagram_of(state: Position) -> str:
    """The inverse of :func:`position_from_diagram`: one line per row, north first."""
    cols = state.board.cols
    return "\n".join(
        "".join(_LETTERS[state.cells[s], state.kinds[s]] for s in range(r * cols, (r + 1) * cols))
        for r in range(state.board.rows)
    )


def diagram_rows(board: Board, diagram: Any) -> list[str]:
    """The rows of a diagram without spaces, checked to be text and to match the board's size.

    Raises:
        CarnacError: ``diagram`` is neither a string nor an iterable of strings (bytes,
            numbers and None are refused), or its rows do not fit ``board``.
    """
    if isinstance(diagram, str):
        lines = diagram.strip().splitlines()
    elif isinstance(diagram, bytes | bytearray) or not isinstance(diagram, Iterable):
        raise CarnacError(f"diagram={diagram!r}; expected a string (one line per row) or an iterable of row strings")
    else:
        lines = list(diagram)
        for index, line in enumerate(lines):
            if not isinstance(line, str):
                raise CarnacError(f"diagram row {index + 1} is {line!r}; expected a string of squares such as 'R..w'")
    rows = ["".join(line.split()) for line in lines if line.strip()]
    if len(rows) != board.rows or any(len(r) != board.cols for r in rows):
        raise CarnacError(
            f"diagram is {len(rows)} rows of lengths {[len(r) for r in rows]}; "
            f"expected {board.rows} rows of {board.cols} squares"
        )
    return rows


def pair_lying_squares(board: Board, cells: bytearray, kinds: bytearray) -> list[tuple[int, int]] | None:
    """Pair every lying square with an adjacent lying square of its colour, or None if impossible.

    The squares are taken in reading order; each unpaired one pairs with its east neighbour
    if it can, else its south one (its north and west neighbours are paired already), and a
    choice that leaves some square without a partner is taken back. The search keeps its own
    stack (no recursion, whatever the board's size) and remembers the situations that led
    nowhere: from a square, what can still follow depends only on which of the next ``cols``
    squares are paired already, so no situation is explored twice.
    """
    cols, squares = board.cols, board.squares
    lying = [s for s in range(squares) if kinds[s] == LYING]
    paired = bytearray(squares)
    pairs: list[tuple[int, int]] = []
    frames: list[list[Any]] = []  # [index into lying, partners, next partner to try, situation]
    failed: set[tuple[int, bytes]] = set()

    def next_unpaired(index: int) -> int:
        while index < len(lying) and paired[lying[index]]:
            index += 1
        return index

    index = next_unpaired(0)
    while True:
        if index == len(lying):
            return pairs
        square = lying[index]
        situation = (square, bytes(paired[square : square + cols]))
        partners = [] if situation in failed else _partners(board, cells, kinds, paired, square)
        frames.append([index, partners, 0, situation])
        while True:  # try the next partner of the newest square, going back when none is left
            if not frames:
                return None
            frame = frames[-1]
            index, partners, tried, situation = frame
            square = lying[index]
            if tried:
                paired[square] = paired[partners[tried - 1]] = 0
                pairs.pop()
            if tried < len(partners):
                other = partners[tried]
                frame[2] = tried + 1
                paired[square] = paired[other] = 1
                pairs.append((square, other))
                index = next_unpaired(index + 1)
                break
            failed.add(situation)
            frames.pop()


def _partners(board: Board, cells: bytearray, kinds: bytearray, paired: bytearray, square: int) -> list[int]:
    """The east, then the south, neighbour of ``square`` that can pair with it."""
    r, c = divmod(square, board.cols)
    candidates = (square + 1 if c + 1 < board.cols else -1, square + board.cols if r + 1 < board.rows else -1)
    return [
        other
        for other in candidates
        if other >= 0 and kinds[other] == LYING and not paired[other] and cells[other] == cells[square]
    ]


def _why_unpairable(board: Board, cells: bytearray, kinds: bytearray) -> str:
    """The message for lying squares that do not pair up: a square with no lying
    neighbour of its colour if there is one, else the lying squares as a whole."""
    lying = [s for s in range(board.squares) if kinds[s] == LYING]
    for square in lying:
        if not any(kinds[o] == LYING and cells[o] == cells[square] for o in board.neighbours[square]):
            return (
                f"diagram square {square_name(board, square)} is a lying megalith with no "
                "partner of its colour next to it"
            )
    names = " ".join(square_name(board, s) for s in lying)
    return f"diagram lying squares {names} cannot be paired into megaliths of one colour each"
