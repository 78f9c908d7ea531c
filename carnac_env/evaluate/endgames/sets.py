"""The endgame-set file: its format, reading and checking it, and writing it.

**The sets.** One versioned file per built-in board,
``carnac_env/evaluate/endgame_sets/BOARD-vVERSION.json``, written once by
``carnac endgames --make BOARD`` (:func:`~carnac_env.evaluate.endgames.make.make_endgame_set`)
and never rewritten: another selection is a new version. Only *informative* positions are kept:
won or drawn ones where at least one legal move loses value (in a lost position no move can, and
where every move keeps the value no agent can err).

**The file.** JSON: ``format`` (:data:`ENDGAME_FORMAT`), ``name`` (the board), ``version``,
``board`` and ``rules``, ``made`` (the command, the package version, how the games were played)
and ``positions``, each with ``moves`` (the game from its start, in the move notation),
``value`` (+1 won, 0 drawn, for the player to act) and ``values``: one character per legal
action in the order of :meth:`~carnac_env.core.game.GameState.legal_actions`, ``+`` a win,
``=`` a draw, ``-`` a loss for the player to act after that move. A file is untrusted input
(docs/security.md): it is read only from a regular file, at most :data:`MAX_SET_BYTES`, parsed as
JSON and nothing else, every position replayed through the rules core, and every field checked
(the values' length against the legal actions, the value against the best move, the position
informative); anything else is refused with a CarnacError naming the file and the position.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from carnac_env import _checks
from carnac_env.core.boards import BOARDS, Board
from carnac_env.core.game import GameState
from carnac_env.core.notation import parse_action
from carnac_env.core.record import MAX_MOVE_CHARS
from carnac_env.errors import CarnacError
from carnac_env.evaluate.versioned import check_board, check_identity, is_whole_from, versioned_ids

__all__ = [
    "ENDGAME_DIR",
    "ENDGAME_FORMAT",
    "MAX_SET_BYTES",
    "EndgamePosition",
    "EndgameSet",
    "endgame_set_ids",
    "load_endgames",
    "parse_endgames",
    "set_text",
]

#: Where the package's endgame sets live.
ENDGAME_DIR = Path(__file__).resolve().parent.parent / "endgame_sets"
#: The format of endgame-set files this code reads.
ENDGAME_FORMAT = 1
#: The largest endgame-set file read, in bytes (the shipped ones are tens of kilobytes).
MAX_SET_BYTES = 4_000_000
#: The most positions a set may hold.
MAX_POSITIONS = 2000
#: The most moves a position's game may have before it (two per megalith, the longest board's).
MAX_GAME_MOVES = 2 * 127
#: The characters of a position's ``values``, and the values they stand for.
VALUE_CHARS = {"+": 1, "=": 0, "-": -1}


@dataclass(frozen=True)
class EndgamePosition:
    """One solved position of a set.

    Attributes:
        moves: the game up to the position, in the move notation.
        state: the position (replayed from ``moves``; do not change it, copy it).
        value: its value for the player to act: +1 won, 0 drawn.
        actions: its legal actions, in the order of ``GameState.legal_actions``.
        values: the value of each of ``actions`` for the player to act here (+1, 0, -1).
    """

    moves: tuple[str, ...]
    state: GameState = field(repr=False, compare=False)
    value: int
    actions: tuple[int, ...]
    values: tuple[int, ...]

    def value_of(self, action: int) -> int:
        """The value of playing ``action`` here, for the player to act.

        Raises:
            CarnacError: ``action`` is not legal here.
        """
        try:
            return self.values[self.actions.index(action)]
        except ValueError:
            raise CarnacError(f"action {action!r} is not legal in this position; legal: {list(self.actions)}") from None


@dataclass(frozen=True)
class EndgameSet:
    """A loaded, checked endgame set (see the module docstring)."""

    name: str
    version: int
    board: Board
    positions: tuple[EndgamePosition, ...]
    made: dict[str, Any]

    @property
    def id(self) -> str:
        """``NAME-vVERSION``, e.g. ``small-v1``: how tables cite the set."""
        return f"{self.name}-v{self.version}"


# --------------------------------------------------------------------------- loading
def endgame_set_ids() -> list[str]:
    """The ids of the sets shipped with the package, sorted by board then version."""
    return versioned_ids(ENDGAME_DIR)


def _newest(board: str) -> str:
    best: tuple[int, str] | None = None
    for set_id in endgame_set_ids():
        name, _, version = set_id.rpartition("-v")
        if name == board and (best is None or int(version) > best[0]):
            best = (int(version), set_id)
    if best is None:
        raise CarnacError(
            f"no endgame set is made for board {board!r}; the sets are: {', '.join(endgame_set_ids()) or 'none'}"
        )
    return best[1]


def load_endgames(endgames: str | Path | Board = "medium") -> EndgameSet:
    """An endgame set: the newest shipped one for a board (by name or :class:`Board`), one by
    id (``"small-v1"``), or a set file by its path.

    Raises:
        CarnacError: an unknown board or id, or a file that is not a valid set (naming the file,
            the field and the position).
    """
    if isinstance(endgames, Board):
        endgames = endgames.name
    if isinstance(endgames, Path) or (isinstance(endgames, str) and endgames.endswith(".json")):
        path = Path(endgames)
    elif isinstance(endgames, str) and endgames in endgame_set_ids():
        path = ENDGAME_DIR / f"{endgames}.json"
    elif isinstance(endgames, str) and endgames in BOARDS:
        path = ENDGAME_DIR / f"{_newest(endgames)}.json"
    else:
        raise CarnacError(
            f"unknown endgame set {endgames!r}; expected a board ({', '.join(BOARDS)}), a set id "
            f"({', '.join(endgame_set_ids())}) or a set .json file"
        )
    return parse_endgames(_read(path), path)


def _read(path: Path) -> Any:
    from carnac_env._files import reading

    with reading(path, "the endgame set") as handle:  # a FIFO or a device is refused, never waited on
        data = handle.read(MAX_SET_BYTES + 1)
    if len(data) > MAX_SET_BYTES:
        raise CarnacError(f"endgame set {path}: larger than {MAX_SET_BYTES} bytes")
    try:  # NaN and Infinity (which Python's json reads) are refused too
        return json.loads(data.decode("utf-8"), parse_constant=_checks.json_constant)
    except (ValueError, RecursionError) as err:  # not UTF-8, not JSON, too deep, a 5000-digit number
        raise CarnacError(f"endgame set {path}: not a JSON file (UTF-8 text): {str(err)[:200]}") from None


def _bad(path: Path, what: str) -> CarnacError:
    return CarnacError(f"endgame set {path}: {what}"[:800])


def parse_endgames(data: Any, path: Path) -> EndgameSet:
    """The :class:`EndgameSet` that a set file's contents ``data`` describe (``path`` names the
    file in errors), checked field by field and every position replayed.

    Raises:
        CarnacError: a field that does not check, naming the file, the field and the position.
    """
    if not isinstance(data, dict):
        raise _bad(path, f"must be a JSON object, got {type(data).__name__}")
    name, version = check_identity(data, ENDGAME_FORMAT, lambda what: _bad(path, what))
    board = check_board(data, lambda what: _bad(path, what))
    made = data.get("made")
    if not isinstance(made, dict):
        raise _bad(path, "made must be an object (the command and how the games were played)")
    raw = data.get("positions")
    if not isinstance(raw, list) or not raw:
        raise _bad(path, "positions must be a non-empty list")
    if len(raw) > MAX_POSITIONS:
        raise _bad(path, f"holds {len(raw)} positions, more than {MAX_POSITIONS}")
    positions = tuple(_parse_position(entry, board, path, index) for index, entry in enumerate(raw))
    return EndgameSet(name, version, board, positions, made)


def _parse_position(entry: Any, board: Board, path: Path, index: int) -> EndgamePosition:
    where = f"position {index}"
    if not isinstance(entry, dict):
        raise _bad(path, f"{where} must be an object, got {type(entry).__name__}")
    moves, value, text = entry.get("moves"), entry.get("value"), entry.get("values")
    if not isinstance(moves, list) or len(moves) > MAX_GAME_MOVES:
        raise _bad(path, f"{where}: moves must be a list of at most {MAX_GAME_MOVES} moves in the notation")
    state = GameState(board)
    for number, move in enumerate(moves, start=1):
        if not isinstance(move, str) or len(move) > MAX_MOVE_CHARS:
            raise _bad(path, f"{where}: move {number} must be a move in the notation, got {move!r}"[:300])
        try:
            state.apply(parse_action(board, move, state.to_act))
        except CarnacError as err:
            raise _bad(path, f"{where}: move {number} ({move!r}): {err}") from None
    if state.is_over:
        raise _bad(path, f"{where}: the game is over after its {len(moves)} moves; a position needs a move to judge")
    if not is_whole_from(value, 0) or value > 1:
        raise _bad(path, f"{where}: value must be 1 (won) or 0 (drawn) for the player to act, got {value!r}")
    actions = tuple(state.legal_actions())
    if not isinstance(text, str) or len(text) != len(actions) or not set(text) <= set(VALUE_CHARS):
        raise _bad(
            path,
            f"{where}: values must be a string of {len(actions)} characters from '+=-' (one per legal action), "
            f"got {text!r}"[:400],
        )
    values = tuple(VALUE_CHARS[c] for c in text)
    if max(values) != value:
        raise _bad(path, f"{where}: value {value} is not the best move's value {max(values)}")
    if min(values) == value:
        raise _bad(path, f"{where}: no move loses value, so the position judges nothing")
    return EndgamePosition(tuple(moves), state, value, actions, values)


# --------------------------------------------------------------------------- writing
def set_text(data: dict[str, Any]) -> str:
    """A set file's text (``data`` as :func:`~carnac_env.evaluate.endgames.make.make_endgame_set`
    gives it): the header indented, one position a line (small diffs, small files)."""
    head = {k: v for k, v in data.items() if k != "positions"}
    text = json.dumps(head, indent=1)[:-2]
    rows = ",\n".join("  " + json.dumps(p, separators=(",", ":")) for p in data["positions"])
    return f'{text},\n "positions": [\n{rows}\n ]\n}}\n'
