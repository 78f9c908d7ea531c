"""The boards Carnac is played on, and the rules options that come with them.

A :class:`Board` is an immutable description of one variant: its size, the number of
megaliths in the shared supply, the smallest group that counts as a dolmen, and whether
the last megalith placed may still be tilted (``last_tilt``). The seven boards played on
Board Game Arena are in :data:`BOARDS`; :func:`make_board` builds a named board, a named
board with some options changed, or a custom one, and rejects impossible ones.

Every ``--board`` of the command line, and :func:`make_board` itself, reads one syntax,
written here beside the names (:func:`parse_board`; :func:`board_spec` writes it back)::

    medium                          a named board
    medium:last_tilt=0              a named board with options changed
    7x9                             a custom board, 7 rows by 9 columns (28 megaliths, dolmens of 3)
    7x9:megaliths=30,min_dolmen=4,last_tilt=0
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

import numpy as np

from carnac_env._checks import is_flag, whole_text
from carnac_env.errors import CarnacError, UnknownOptionError

#: Directions, in the order of the action encoding: 0 north, 1 east, 2 south, 3 west.
NORTH, EAST, SOUTH, WEST = 0, 1, 2, 3
DIRECTION_NAMES = ("north", "east", "south", "west")
#: (row step, column step) of each direction; row 0 is the north edge, column 0 the west.
DIRECTION_STEPS = ((-1, 0), (0, 1), (1, 0), (0, -1))

#: The largest supply a board may have: the observation stores the supply in an int8 plane.
MAX_MEGALITHS = 127
#: The most rows and the most columns a board may have (so at most 4096 squares; the largest
#: official board, le_menec, is 12 x 16). Checked before any table is built.
MAX_SIDE = 64

RULE_OPTIONS = ("rows", "cols", "megaliths", "min_dolmen", "last_tilt")


class BoardArrays(NamedTuple):
    """A board's geometry as read-only numpy arrays, for compiled and array engines.

    The same facts as :attr:`Board.tilt_squares` and :attr:`Board.neighbours`, laid out
    for numba, numpy and JAX. ``S`` is the number of squares; ``-1`` marks "off the board".

    Attributes:
        tilt_squares: ``(S, 4, 2)`` int32: per square and direction (0 N, 1 E, 2 S, 3 W)
            the two squares a megalith standing there covers when tilted that way, nearer
            first; ``-1, -1`` where that runs off the board.
        neighbours: ``(S, 4)`` int32: per square and direction the adjacent square, or -1.
        edges: ``(E, 2)`` int32: every pair of orthogonally adjacent squares once, the
            smaller square first, in increasing order.
    """

    tilt_squares: np.ndarray
    neighbours: np.ndarray
    edges: np.ndarray


def _geometry(rows: int, cols: int) -> tuple[tuple, tuple, BoardArrays]:
    """Tilt landing squares, neighbours and edges of a ``rows x cols`` board, as tuples
    (for Python code) and as arrays (for compiled engines); the one place they are derived."""
    squares = rows * cols
    tilt = np.full((squares, 4, 2), -1, dtype=np.int32)
    beside = np.full((squares, 4), -1, dtype=np.int32)
    for square in range(squares):
        r, c = divmod(square, cols)
        for direction, (dr, dc) in enumerate(DIRECTION_STEPS):
            r1, c1, r2, c2 = r + dr, c + dc, r + 2 * dr, c + 2 * dc
            if 0 <= r1 < rows and 0 <= c1 < cols:
                beside[square, direction] = r1 * cols + c1
            if 0 <= r2 < rows and 0 <= c2 < cols:
                tilt[square, direction] = (r1 * cols + c1, r2 * cols + c2)
    edges = np.array([(s, int(o)) for s in range(squares) for o in beside[s] if o > s], dtype=np.int32).reshape(-1, 2)
    tilt_tuples = tuple(
        tuple(None if pair[0] < 0 else (int(pair[0]), int(pair[1])) for pair in per_square) for per_square in tilt
    )
    neighbour_tuples = tuple(tuple(int(o) for o in per_square if o >= 0) for per_square in beside)
    for array in (tilt, beside, edges):
        array.flags.writeable = False
    return tilt_tuples, neighbour_tuples, BoardArrays(tilt, beside, edges)


@dataclass(frozen=True)
class Board:
    """One Carnac variant: board size, supply, dolmen threshold and the last-tilt rule.

    Attributes:
        name: the board's name (``"custom"`` for a board that is not one of :data:`BOARDS`
            or is one with options changed).
        rows, cols: board size; row 0 is the north edge, column 0 the west edge.
        megaliths: megaliths in the shared supply at the start.
        min_dolmen: the smallest connected group of one colour that scores as a dolmen.
        last_tilt: whether the opponent may still tilt or decline the megalith placed
            last (boardspace.net's rule, the default). With ``False`` the game ends as
            soon as the final megalith is placed.

    Build boards with :func:`make_board`, which validates them. The derived tables below
    (``tilt_squares``) are computed once per board and shared by every game on it.
    """

    name: str
    rows: int
    cols: int
    megaliths: int
    min_dolmen: int
    last_tilt: bool = True
    #: ``tilt_squares[square][direction]`` is the pair of squares a megalith standing on
    #: ``square`` would cover if tilted that way, or ``None`` where that runs off the board.
    tilt_squares: tuple[tuple[tuple[int, int] | None, ...], ...] = field(init=False, repr=False, compare=False)
    #: ``neighbours[square]``: the orthogonally adjacent squares (N, E, S, W order), for dolmens.
    neighbours: tuple[tuple[int, ...], ...] = field(init=False, repr=False, compare=False)
    #: The same geometry as numpy arrays (:class:`BoardArrays`) for the compiled engines.
    arrays: BoardArrays = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        _validate(self)
        tilt_squares, neighbours, arrays = _geometry(self.rows, self.cols)
        object.__setattr__(self, "tilt_squares", tilt_squares)
        object.__setattr__(self, "neighbours", neighbours)
        object.__setattr__(self, "arrays", arrays)

    def __reduce__(self) -> tuple[type, tuple]:
        # Pickled by its rules and rebuilt, so that a copy's arrays are read-only as well: a
        # worker process that got writeable ones would compile every engine function again
        # (numba types read-only and writeable arrays apart) instead of loading the cache.
        return (Board, (self.name, self.rows, self.cols, self.megaliths, self.min_dolmen, self.last_tilt))

    @property
    def squares(self) -> int:
        """Number of squares, ``rows * cols``."""
        return self.rows * self.cols

    @property
    def num_actions(self) -> int:
        """Size of the action space, ``rows * cols * 4 + 5``."""
        return self.rows * self.cols * 4 + 5

    def rules(self) -> dict[str, Any]:
        """The options that define this board, as keyword arguments of :func:`make_board`."""
        return {
            "rows": self.rows,
            "cols": self.cols,
            "megaliths": self.megaliths,
            "min_dolmen": self.min_dolmen,
            "last_tilt": self.last_tilt,
        }


def _validate(board: Board) -> None:
    for option in ("rows", "cols", "megaliths", "min_dolmen"):
        value = getattr(board, option)
        if is_flag(value) or not isinstance(value, int):  # plain ints only: a Board's fields are stored as given
            raise CarnacError(f"board option {option}={value!r} must be an integer, got {type(value).__name__}")
    if not isinstance(board.last_tilt, bool):  # a plain bool (numpy's is refused: it would be stored as given)
        raise CarnacError(f"board option last_tilt={board.last_tilt!r} must be True or False")
    if board.rows < 1 or board.cols < 1:
        raise CarnacError(f"a {board.rows} x {board.cols} board has no room to play: rows and cols must be >= 1")
    if board.rows > MAX_SIDE or board.cols > MAX_SIDE:
        raise CarnacError(
            f"a {board.rows} x {board.cols} board is too large: rows and cols must be <= {MAX_SIDE} "
            f"(at most {MAX_SIDE * MAX_SIDE} squares)"
        )
    if board.megaliths < 1:
        raise CarnacError(f"megaliths={board.megaliths} is impossible: the supply needs >= 1 megalith")
    if board.megaliths > MAX_MEGALITHS:
        raise CarnacError(
            f"megaliths={board.megaliths} is too many: at most {MAX_MEGALITHS} "
            "(the observation stores the supply in an int8 plane)"
        )
    if board.min_dolmen < 1:
        raise CarnacError(f"min_dolmen={board.min_dolmen} is impossible: a dolmen needs >= 1 square")
    if board.min_dolmen > board.rows * board.cols:
        raise CarnacError(
            f"min_dolmen={board.min_dolmen} can never be reached on a {board.rows} x {board.cols} "
            f"board of {board.rows * board.cols} squares"
        )


#: The seven boards of Board Game Arena (sizes of kermario, le_menec and petit_menec are
#: not published there; see docs/rules.md for the choices made).
BOARDS: dict[str, Board] = {
    "small": Board("small", 5, 8, 28, 3),
    "medium": Board("medium", 7, 10, 28, 3),
    "large": Board("large", 9, 14, 28, 3),
    "kermario": Board("kermario", 5, 20, 56, 3),
    "kerlescan": Board("kerlescan", 7, 10, 28, 5),
    "le_menec": Board("le_menec", 12, 16, 56, 3),
    "petit_menec": Board("petit_menec", 6, 6, 14, 3),
}


def make_board(board: str | Board = "medium", **rules: Any) -> Board:
    """Return the :class:`Board` for a name (or a Board), with rules options applied.

    Args:
        board: one of the names in :data:`BOARDS`, ``"custom"`` (then ``rows`` and ``cols``
            are required; ``megaliths`` defaults to 28 and ``min_dolmen`` to 3), or a
            :class:`Board`.
        **rules: any of ``rows``, ``cols``, ``megaliths``, ``min_dolmen``, ``last_tilt``.
            Changing anything but ``last_tilt`` on a named board makes it ``"custom"``.

    Raises:
        CarnacError: an unknown board name, an unknown option, or an impossible board
            (including one with more than :data:`MAX_SIDE` rows or columns, refused before
            any table is built).
    """
    unknown = sorted(set(rules) - set(RULE_OPTIONS))
    if unknown:
        raise UnknownOptionError(
            f"unknown rules option(s) {', '.join(map(repr, unknown))}; expected any of {', '.join(RULE_OPTIONS)}"
        )
    if isinstance(board, Board):
        base = board
    elif board == "custom":
        missing = [k for k in ("rows", "cols") if k not in rules]
        if missing:
            raise CarnacError(f"board='custom' needs {' and '.join(missing)}")
        return Board(
            "custom",
            rules["rows"],
            rules["cols"],
            rules.get("megaliths", 28),
            rules.get("min_dolmen", 3),
            rules.get("last_tilt", True),
        )
    elif isinstance(board, str) and board in BOARDS:
        base = BOARDS[board]
    elif isinstance(board, str):
        base = parse_board(board)  # a spec: a size, or a name with options (or an unknown name, refused there)
    else:
        raise CarnacError(f"unknown board {board!r}; expected {BOARD_SYNTAX}")
    if not rules:
        return base
    changed = {key for key, value in rules.items() if getattr(base, key) != value}
    name = "custom" if changed - {"last_tilt"} else base.name
    return replace(base, name=name, **rules)


#: What a board spec may be, for error messages.
BOARD_SYNTAX = (
    f"one of {', '.join(BOARDS)}, a custom size ROWSxCOLS (e.g. 7x9), or either followed by options "
    "(e.g. 7x9:megaliths=30,min_dolmen=4,last_tilt=0)"
)
#: The options a board spec may set after its name or size.
SPEC_OPTIONS = ("megaliths", "min_dolmen", "last_tilt")
#: The longest board spec read (a longer one is refused before it is parsed).
MAX_SPEC_CHARS = 200
_SIZE = re.compile(r"([0-9]+)x([0-9]+)", re.ASCII)
_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def parse_board(spec: str) -> Board:
    """The :class:`Board` a board spec names (the syntax is in the module docstring): a name
    from :data:`BOARDS` or a size ``ROWSxCOLS``, then optionally ``:`` and ``option=value``
    pairs joined by ``,`` (``megaliths``, ``min_dolmen``, ``last_tilt`` as 0/1 or
    true/false). Sizes and counts are ASCII digits.

    Raises:
        CarnacError: anything else, naming the bad part and what was expected; an impossible
            board names the limit it breaks (:data:`MAX_SIDE`, :data:`MAX_MEGALITHS`, ...).
    """
    if not isinstance(spec, str):
        raise CarnacError(f"a board spec must be text, got {type(spec).__name__}; expected {BOARD_SYNTAX}")
    text = spec.strip()
    if len(text) > MAX_SPEC_CHARS:
        raise CarnacError(f"board spec of {len(text)} characters; expected at most {MAX_SPEC_CHARS}: {BOARD_SYNTAX}")
    head, colon, tail = text.partition(":")
    options = _spec_options(spec, tail) if colon else {}
    size = _SIZE.fullmatch(head)
    if size:
        rows = whole_text(f"board {spec!r}: rows", size.group(1), 1, MAX_SIDE)
        cols = whole_text(f"board {spec!r}: cols", size.group(2), 1, MAX_SIDE)
        return make_board("custom", rows=rows, cols=cols, **options)
    if head not in BOARDS:
        where = "" if head == text else f" in {spec!r}"
        raise CarnacError(f"unknown board {head!r}{where}; expected {BOARD_SYNTAX}")
    return make_board(head, **options)


def _spec_options(spec: str, tail: str) -> dict[str, Any]:
    """The ``option=value`` pairs after a board spec's colon, read and range-checked."""
    options: dict[str, Any] = {}
    for part in tail.split(","):
        key, eq, value = (piece.strip() for piece in part.partition("="))
        if not eq or not key or not value:
            raise CarnacError(f"board {spec!r}: {part.strip()!r} is not option=value (e.g. megaliths=30)")
        if key not in SPEC_OPTIONS:
            raise CarnacError(f"board {spec!r}: unknown option {key!r}; expected any of {', '.join(SPEC_OPTIONS)}")
        if key in options:
            raise CarnacError(f"board {spec!r}: option {key!r} is given twice")
        if key == "last_tilt":
            if value.lower() not in _TRUE + _FALSE:
                raise CarnacError(f"board {spec!r}: last_tilt={value!r}; expected 0 or 1 (or true/false)")
            options[key] = value.lower() in _TRUE
        elif key == "megaliths":
            options[key] = whole_text(f"board {spec!r}: megaliths", value, 1, MAX_MEGALITHS)
        else:
            options[key] = whole_text(f"board {spec!r}: min_dolmen", value, 1, MAX_SIDE * MAX_SIDE)
    return options


def board_spec(board: Board) -> str:
    """The board spec that :func:`parse_board` reads back as ``board``: its name for a named
    board (with ``:last_tilt=0`` where that differs), else ``ROWSxCOLS:megaliths=M,min_dolmen=D``
    (and ``,last_tilt=0``). Two boards with the same rules have the same spec."""
    named = BOARDS.get(board.name)
    if named is not None and replace(named, last_tilt=board.last_tilt) == board:
        return board.name + ("" if board.last_tilt == named.last_tilt else f":last_tilt={int(board.last_tilt)}")
    spec = f"{board.rows}x{board.cols}:megaliths={board.megaliths},min_dolmen={board.min_dolmen}"
    return spec + ("" if board.last_tilt else ",last_tilt=0")


def split_boards(text: str) -> list[str]:
    """A comma-separated list of board specs, split where a new board starts: a part with an
    ``=`` continues the spec before it (``"7x9:megaliths=30,min_dolmen=4,small"`` is
    ``["7x9:megaliths=30,min_dolmen=4", "small"]``). Empty parts are dropped; the specs are
    not checked here (:func:`parse_board` does)."""
    specs: list[str] = []
    for part in (piece.strip() for piece in text.split(",")):
        if not part:
            continue
        if "=" in part and ":" not in part and specs:
            specs[-1] += "," + part
        else:
            specs.append(part)
    return specs
