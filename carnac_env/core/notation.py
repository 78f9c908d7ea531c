"""The move notation: a short text for every action, and its parser.

* Squares are named like a chess board seen with north at the top: a column letter from
  the west edge (``a``, ``b``, ... ``z``, ``aa``, ...) and a row number from the north edge
  starting at 1. Square ``a1`` is the north-west corner.
* A placement names the square, the colour on top (``R`` red, ``W`` white) and the axis
  whose long faces share the top colour (``ns`` or ``ew``): ``c4 Rns`` puts red on top on
  c4, and a tilt north or south would then show red, a tilt east or west white.
* A tilt names the direction: ``tilt N``, ``tilt E``, ``tilt S``, ``tilt W``.
* A decline is ``decline``.

Colours in the notation are absolute (what a person sees); the action numbers are relative
to the mover, so formatting and parsing a placement need to know who moves.
The parser accepts any letter case, extra spaces, ``c4Rns`` without the space, direction
words (``tilt north``) and the bare action number as a string. The notation is ASCII: letters,
the digits 0-9, spaces and tabs. Any other character (another script's digits such as ``١``,
a full-width letter, a NUL or another control character, a no-break space) is refused with the
character named, never read as a look-alike.
"""

from __future__ import annotations

import re

from carnac_env._checks import is_whole
from carnac_env.core.actions import decline_action, decode, orientation_for, place_number, tilt_action, tilt_colours
from carnac_env.core.boards import DIRECTION_NAMES, Board
from carnac_env.errors import NotationError

COLOUR_LETTERS = {1: "R", 2: "W"}
DIRECTION_LETTERS = "NESW"

_PLACE = re.compile(r"([a-z]+)([0-9]+) *([rw]) *(ns|ew)")
_SQUARE = re.compile(r"([a-z]+)([0-9]+)")
_TILT = re.compile(r"tilt *(n|e|s|w|north|east|south|west)")
#: The characters of the notation (any case): letters, digits 0-9, space and tab.
_ALLOWED = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 \t")


def _normalise(text: str) -> str:
    """``text`` lower-cased with its runs of spaces and tabs made one space, trimmed.

    Raises:
        NotationError: a character outside the notation's ASCII letters, digits, spaces and
            tabs, named with its code point and position.
    """
    for at, ch in enumerate(text):
        if ch not in _ALLOWED:
            raise NotationError(
                f"{text[:40]!r}: character {ch!r} (U+{ord(ch):04X}) at position {at} is not part of the notation, "
                "which is written with the letters a-z, the digits 0-9 and spaces"
            )
    return " ".join(text.lower().split())


def _check_mover(mover: object) -> int:
    """``mover`` as 0 or 1 (an int, not a bool or a float), else a NotationError."""
    if not is_whole(mover) or mover not in (0, 1):
        raise NotationError(f"mover {mover!r} must be 0 (Red) or 1 (White)")
    return int(mover)  # type: ignore[call-overload]


def square_name(board: Board, square: int) -> str:
    """``a1`` for square 0 (north-west); see the module docstring.

    Raises:
        NotationError: ``square`` is not a whole number naming a square of ``board``.
    """
    if not is_whole(square) or not 0 <= square < board.rows * board.cols:
        raise NotationError(f"square {square!r} must be a whole number in 0..{board.rows * board.cols - 1}")
    r, c = divmod(int(square), board.cols)
    return f"{column_name(c)}{r + 1}"


def column_name(col: int) -> str:
    """Column letters: a..z, then aa, ab, ... (west to east)."""
    name = ""
    col += 1
    while col:
        col, rem = divmod(col - 1, 26)
        name = chr(97 + rem) + name
    return name


def parse_square(board: Board, text: str) -> int:
    """The square index (row-major) for a square name such as ``c4``.

    Raises:
        NotationError: not a square name (or not a string), or a square off this board.
    """
    if not isinstance(text, str):
        raise NotationError(f"a square name must be a string such as 'c4', got {text!r}")
    match = _SQUARE.fullmatch(_normalise(text))
    if not match:
        raise NotationError(f"{text!r} is not a square name; expected a column letter and a row number such as 'c4'")
    return _square(board, match.group(1), match.group(2), text)


def _square(board: Board, letters: str, digits: str, text: str) -> int:
    col = 0
    for ch in letters:
        col = col * 26 + (ord(ch) - 96)
    col -= 1
    row = int(digits) - 1
    if not (0 <= row < board.rows and 0 <= col < board.cols):
        raise NotationError(
            f"{text!r}: square {letters}{digits} is not on the {board.rows} x {board.cols} board "
            f"(columns a-{column_name(board.cols - 1)}, rows 1-{board.rows})"
        )
    return row * board.cols + col


def action_to_text(board: Board, action: int, mover: int) -> str:
    """The notation for ``action`` played by ``mover`` (0 Red, 1 White).

    Raises:
        NotationError: ``action`` is not a whole number in the action space (a bool, a float
            or a string is not an action) or ``mover`` not 0 or 1.
    """
    mover = _check_mover(mover)
    if not is_whole(action):
        raise NotationError(f"action {action!r} must be a whole number in 0..{board.num_actions - 1}")
    if not 0 <= action < board.num_actions:
        raise NotationError(f"action {action} is outside 0..{board.num_actions - 1}")
    move = decode(board, int(action))
    if move.kind == "place":
        top, north_south, _ = tilt_colours(mover, move.orientation)
        axis = "ns" if north_south == top else "ew"
        return f"{square_name(board, move.square)} {COLOUR_LETTERS[top]}{axis}"
    if move.kind == "tilt":
        return f"tilt {DIRECTION_LETTERS[move.direction]}"
    return "decline"


def parse_action(board: Board, text: str, mover: int) -> int:
    """The action number that ``text`` means when ``mover`` (0 Red, 1 White) plays it.

    This checks the notation and the board, not whether the move is legal now.

    Raises:
        NotationError: the text says where it does not parse.
    """
    if not isinstance(text, str):
        raise NotationError(f"a move must be a string, got {type(text).__name__}")
    mover = _check_mover(mover)
    norm = _normalise(text)  # ASCII only: '²', '٣', NUL and the like are refused here
    if norm.isdigit():
        if len(norm) > 9:  # int() of thousands of digits is slow or refused; no action is that large
            raise NotationError(
                f"{text[:20]!r}...: a {len(norm)}-digit action number is outside 0..{board.num_actions - 1}"
            )
        action = int(norm)
        if action >= board.num_actions:
            raise NotationError(f"{text!r}: action {action} is outside 0..{board.num_actions - 1}")
        return action
    if norm in ("decline", "d", "pass"):
        return decline_action(board)
    match = _TILT.fullmatch(norm)
    if match:
        word = match.group(1)
        direction = DIRECTION_LETTERS.lower().index(word[0]) if len(word) == 1 else DIRECTION_NAMES.index(word)
        return tilt_action(board, direction)
    match = _PLACE.fullmatch(norm)
    if match:
        letters, digits, colour, axis = match.groups()
        square = _square(board, letters, digits, text)
        top = 1 if colour == "r" else 2
        north_south = top if axis == "ns" else 3 - top
        return place_number(square, orientation_for(mover, top, north_south))
    if _SQUARE.fullmatch(norm):
        raise NotationError(
            f"{text!r}: a placement needs the colour on top and the axis showing it, "
            f"for example '{norm} Rns' or '{norm} Wew'"
        )
    raise NotationError(
        f"{text!r} is not a move; expected a placement such as 'c4 Rns' (square, top colour R/W, "
        "axis ns/ew), 'tilt N' (N, E, S or W) or 'decline'"
    )
