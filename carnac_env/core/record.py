"""Game records: a board, its rules, the moves in notation and the result, as JSON.

A record is one JSON object (one line of a ``games.jsonl`` file)::

    {"format": "carnac-record", "version": 1, "board": "medium",
     "rules": {"rows": 7, "cols": 10, "megaliths": 28, "min_dolmen": 3, "last_tilt": true},
     "moves": ["c4 Rns", "tilt N", "e5 Wew", "decline", ...],
     "result": {"winner": 0, "dolmens": [[5, 3], [4]], "scores": [205, 104]}}

``result`` is ``null`` for an unfinished game. Any other keys (agent names, seats, a seed)
are kept in :attr:`GameRecord.meta` and written back. :meth:`GameRecord.replay` plays the
moves through the rules core and checks the stored result against the replayed one.

Records are data: reading one parses JSON and nothing else (nothing is unpickled, imported
or run). Every malformed input raises :class:`~carnac_env.errors.RecordError`, including
text that is not UTF-8, JSON nested too deeply, and records (or lines of a ``.jsonl``
file) larger than :data:`MAX_RECORD_BYTES`, which are refused before they are parsed.
The board a record names is checked by :func:`~carnac_env.core.boards.make_board` before
anything is built on it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from carnac_env import _checks
from carnac_env._checks import is_flag, is_whole
from carnac_env.core.boards import Board, make_board
from carnac_env.core.game import GameState
from carnac_env.core.notation import action_to_text, parse_action
from carnac_env.core.scoring import Result
from carnac_env.errors import CarnacError, RecordError

FORMAT = "carnac-record"
VERSION = 1
_KNOWN = {"format", "version", "board", "rules", "moves", "result"}
#: The largest record (or line of a ``.jsonl`` file) read, in bytes; a game on the largest
#: board takes a few kilobytes.
MAX_RECORD_BYTES = 1_000_000
#: The longest move text accepted in a record (``"c4 Rns"``, ``"tilt north"``, ``"decline"``).
MAX_MOVE_CHARS = 32


@dataclass
class GameRecord:
    """A recorded game. ``moves`` are in the move notation; ``meta`` holds extra keys."""

    board: Board
    moves: list[str] = field(default_factory=list)
    result: Result | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_actions(cls, board: Board, actions: Iterable[int], meta: dict[str, Any] | None = None) -> GameRecord:
        """Record a game given as action numbers from the start (validated by replaying)."""
        state = GameState(board)
        moves = []
        for index, action in enumerate(actions, start=1):
            moves.append(
                action_to_text(board, action, state.to_act) if 0 <= action < board.num_actions else str(action)
            )
            try:
                state.apply(action)
            except CarnacError as err:
                raise RecordError(f"move {index} ({moves[-1]!r}): {err}") from None
        return cls(board, moves, state.result() if state.is_over else None, dict(meta or {}))

    def replay(self) -> GameState:
        """Play the moves from the start and return the final state.

        Raises:
            RecordError: a move that does not parse or is illegal (naming its number and
                text), or a stored result that differs from the replayed one.
        """
        state = GameState(self.board)
        for index, text in enumerate(self.moves, start=1):
            try:
                state.apply(parse_action(self.board, text, state.to_act))
            except CarnacError as err:
                raise RecordError(f"move {index} ({text!r}): {err}") from None
        if self.result is not None:
            if not state.is_over:
                raise RecordError(
                    f"the record gives a result but the game is not over after its {len(self.moves)} moves"
                )
            if state.result() != self.result:
                raise RecordError(
                    f"the record's result {self.result.to_dict()} differs from the replayed "
                    f"result {state.result().to_dict()}"
                )
        return state

    def actions(self) -> list[int]:
        """The moves as action numbers (replaying to know who moved)."""
        state = GameState(self.board)
        out = []
        for index, text in enumerate(self.moves, start=1):
            try:
                action = parse_action(self.board, text, state.to_act)
                state.apply(action)
            except CarnacError as err:
                raise RecordError(f"move {index} ({text!r}): {err}") from None
            out.append(action)
        return out

    # ----------------------------------------------------------------- JSON
    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready form (extra ``meta`` keys included, after the standard ones)."""
        data: dict[str, Any] = {
            "format": FORMAT,
            "version": VERSION,
            "board": self.board.name,
            "rules": self.board.rules(),
            "moves": list(self.moves),
            "result": None if self.result is None else self.result.to_dict(),
        }
        for key, value in self.meta.items():
            data.setdefault(key, value)
        return data

    def to_json(self) -> str:
        """One line of JSON with sorted-free, stable key order."""
        return json.dumps(self.to_dict(), separators=(",", ":"))

    @classmethod
    def from_dict(cls, data: Any) -> GameRecord:
        """Read a record from its JSON-ready form, checking every field.

        Raises:
            RecordError: naming the field that is missing or malformed.
        """
        if not isinstance(data, dict):
            raise RecordError(f"a game record must be a JSON object, got {type(data).__name__}")
        _check_header(data)
        for key in ("board", "moves"):
            if key not in data:
                raise RecordError(f"record field {key!r} is missing")
        board = _board_from_fields(data["board"], data.get("rules", {}))
        moves = _moves_from_field(data["moves"], board)
        result = data.get("result")
        if result is not None:
            result = _result_from_dict(result)
        meta = {k: v for k, v in data.items() if k not in _KNOWN}
        return cls(board, moves, result, meta)

    @classmethod
    def from_json(cls, text: str | bytes) -> GameRecord:
        """Read a record from one JSON text (for example a line of ``games.jsonl``).

        Raises:
            RecordError: text larger than :data:`MAX_RECORD_BYTES`, not UTF-8, not JSON
                (or nested too deeply), or not a valid record.
        """
        if isinstance(text, bytes):
            text = _decode(text, "a game record")
        if not isinstance(text, str):
            raise RecordError(f"a game record must be JSON text, got {type(text).__name__}")
        if len(text) > MAX_RECORD_BYTES or len(text.encode("utf-8", "surrogatepass")) > MAX_RECORD_BYTES:
            raise RecordError(f"a game record is at most {MAX_RECORD_BYTES} bytes; this one is larger")
        try:
            data = json.loads(text, parse_constant=_checks.json_constant)  # NaN, Infinity: refused
        except json.JSONDecodeError as err:
            raise RecordError(
                f"a game record must be JSON: {err.msg} at line {err.lineno} column {err.colno}"
            ) from None
        except RecursionError:
            raise RecordError("a game record must be JSON of a few levels; this text is nested too deeply") from None
        except ValueError as err:  # a number of more than 4300 digits, NaN or Infinity
            raise RecordError(f"a game record must be JSON with finite numbers of a usual size: {err}") from None
        return cls.from_dict(data)

    def save(self, path: str | Path) -> None:
        """Write the record as JSON to ``path``, atomically (:mod:`carnac_env._files`: a
        full disk leaves the old file, or none, never half a record).

        Raises:
            CarnacError: the file cannot be written, naming it and why.
        """
        from carnac_env._files import write_text

        write_text(path, self.to_json() + "\n")

    @classmethod
    def load(cls, path: str | Path, line: int | None = None) -> GameRecord:
        """Read a record from a file: a single JSON record, or line ``line`` (1-based,
        counting non-blank lines) of a ``.jsonl`` file of records.

        At most :data:`MAX_RECORD_BYTES` are read for the record, and only from a regular
        file (a folder, a FIFO or a device is refused before it is read), so any path gives
        an answer at once.

        Raises:
            RecordError: the file cannot be read, the line does not exist, or the text is
                not a valid record (naming the file).
        """
        from carnac_env._files import reading

        with reading(path, error=RecordError) as handle:  # a FIFO or a device is refused, never waited on
            raw = _read_line(handle, path, line) if line is not None else _read_whole(handle, path)
        try:
            return cls.from_json(_decode(raw, str(path)))
        except RecordError as err:
            message = str(err)
            raise RecordError(message if message.startswith(str(path)) else f"{path}: {message}") from None


def _decode(raw: bytes, what: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise RecordError(
            f"{what} is not UTF-8 text (byte {err.start} is {raw[err.start]:#04x}); records are UTF-8 JSON"
        ) from None


def _read_whole(handle: Any, path: str | Path) -> bytes:
    raw = handle.read(MAX_RECORD_BYTES + 1)
    if len(raw) > MAX_RECORD_BYTES:
        raise RecordError(f"{path} is larger than a game record may be ({MAX_RECORD_BYTES} bytes)")
    return raw


def _read_line(handle: Any, path: str | Path, line: int) -> bytes:
    """The ``line``-th non-blank line, each line read with a bounded size."""
    if not is_whole(line) or line < 1:
        raise RecordError(f"line {line!r} does not exist: lines are numbered from 1")
    found = 0
    while True:
        raw = handle.readline(MAX_RECORD_BYTES + 2)
        if not raw:
            raise RecordError(f"{path} has {found} records; line {line} does not exist")
        if len(raw) > MAX_RECORD_BYTES + 1:
            raise RecordError(
                f"{path} record {found + 1} is larger than a game record may be ({MAX_RECORD_BYTES} bytes)"
            )
        if raw.strip():
            found += 1
            if found == line:
                return raw


def _check_header(data: dict[str, Any]) -> None:
    form = data.get("format", FORMAT)
    if form != FORMAT:
        raise RecordError(f"record field 'format' is {form!r}; expected {FORMAT!r}")
    version = data.get("version", VERSION)
    if type(version) is not int or version != VERSION:
        raise RecordError(f"record field 'version' is {version!r}; this package reads version {VERSION}")


def _board_from_fields(name: Any, rules: Any) -> Board:
    if not isinstance(rules, dict):
        raise RecordError(f"record field 'rules' must be an object, got {type(rules).__name__}")
    if not isinstance(name, str):
        raise RecordError(f"record field 'board' must be a board name, got {type(name).__name__}")
    try:
        return make_board(name, **rules)
    except CarnacError as err:
        raise RecordError(f"record field 'board'/'rules': {err}") from None


def _moves_from_field(moves: Any, board: Board) -> list[str]:
    if not isinstance(moves, list) or not all(isinstance(m, str) for m in moves):
        raise RecordError("record field 'moves' must be a list of move strings such as 'c4 Rns'")
    most = 2 * board.megaliths  # one placement and one tilt or decline per megalith
    if len(moves) > most:
        raise RecordError(f"record field 'moves' has {len(moves)} moves; a game on this board has at most {most}")
    for index, text in enumerate(moves, start=1):
        if len(text) > MAX_MOVE_CHARS or not text.isascii() or not text.isprintable():
            shown = text if len(text) <= MAX_MOVE_CHARS else text[:MAX_MOVE_CHARS] + "..."
            raise RecordError(
                f"move {index} ({shown!r}) is not a move: moves are short ASCII texts such as 'c4 Rns', "
                f"'tilt N' or 'decline' (at most {MAX_MOVE_CHARS} characters)"
            )
    return list(moves)


def _result_from_dict(result: Any) -> Result:
    if not isinstance(result, dict) or not {"winner", "dolmens", "scores"} <= set(result):
        raise RecordError("record field 'result' must be an object with 'winner', 'dolmens' and 'scores'")
    winner, dolmens, scores = result["winner"], result["dolmens"], result["scores"]
    if is_flag(winner) or winner not in (0, 1, None):
        raise RecordError(f"record field 'result.winner' is {winner!r}; expected 0, 1 or null")
    if (
        not isinstance(dolmens, list)
        or len(dolmens) != 2
        or not all(isinstance(d, list) and all(is_whole(x) for x in d) for d in dolmens)
    ):
        raise RecordError("record field 'result.dolmens' must be two lists of integers")
    if not isinstance(scores, list) or len(scores) != 2 or not all(is_whole(x) for x in scores):
        raise RecordError("record field 'result.scores' must be two integers")
    return Result(winner, (tuple(dolmens[0]), tuple(dolmens[1])), (scores[0], scores[1]))
