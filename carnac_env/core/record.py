"""Game records: a board, its rules, the moves in notation and the result, as JSON.

A record is one JSON object (one line of a ``games.jsonl`` file)::

    {"format": "carnac-record", "version": 1, "board": "medium",
     "rules": {"rows": 7, "cols": 10, "megaliths": 28, "min_dolmen": 3, "last_tilt": true},
     "moves": ["c4 Rns", "tilt N", "e5 Wew", "decline", ...],
     "result": {"winner": 0, "dolmens": [[5, 3], [4]], "scores": [205, 104]}}

``result`` is ``null`` for an unfinished game. Any other keys (agent names, seats, a seed)
are kept in :attr:`GameRecord.meta` and written back. :meth:`GameRecord.replay` plays the
moves through the rules core and checks the stored result against the replayed one.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from carnac_env.core.boards import Board, make_board
from carnac_env.core.game import GameState
from carnac_env.core.notation import action_to_text, parse_action
from carnac_env.core.scoring import Result
from carnac_env.errors import CarnacError, RecordError

FORMAT = "carnac-record"
VERSION = 1
_KNOWN = {"format", "version", "board", "rules", "moves", "result"}


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
        if data.get("format", FORMAT) != FORMAT:
            raise RecordError(f"record field 'format' is {data['format']!r}; expected {FORMAT!r}")
        if data.get("version", VERSION) != VERSION:
            raise RecordError(f"record field 'version' is {data['version']!r}; this package reads version {VERSION}")
        for key in ("board", "moves"):
            if key not in data:
                raise RecordError(f"record field {key!r} is missing")
        rules = data.get("rules", {})
        if not isinstance(rules, dict):
            raise RecordError(f"record field 'rules' must be an object, got {type(rules).__name__}")
        try:
            board = make_board(data["board"], **rules)
        except CarnacError as err:
            raise RecordError(f"record field 'board'/'rules': {err}") from None
        except TypeError as err:
            raise RecordError(f"record field 'board': {err}") from None
        moves = data["moves"]
        if not isinstance(moves, list) or not all(isinstance(m, str) for m in moves):
            raise RecordError("record field 'moves' must be a list of move strings such as 'c4 Rns'")
        result = data.get("result")
        if result is not None:
            result = _result_from_dict(result)
        meta = {k: v for k, v in data.items() if k not in _KNOWN}
        return cls(board, list(moves), result, meta)

    @classmethod
    def from_json(cls, text: str) -> GameRecord:
        """Read a record from one JSON text (for example a line of ``games.jsonl``)."""
        try:
            data = json.loads(text)
        except json.JSONDecodeError as err:
            raise RecordError(
                f"a game record must be JSON: {err.msg} at line {err.lineno} column {err.colno}"
            ) from None
        return cls.from_dict(data)

    def save(self, path: str | Path) -> None:
        """Write the record as JSON to ``path``."""
        Path(path).write_text(self.to_json() + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path, line: int | None = None) -> GameRecord:
        """Read a record from a file: a single JSON record, or line ``line`` (1-based) of a
        ``.jsonl`` file of records."""
        text = Path(path).read_text(encoding="utf-8")
        if line is not None:
            lines = [x for x in text.splitlines() if x.strip()]
            if not 1 <= line <= len(lines):
                raise RecordError(f"{path} has {len(lines)} records; line {line} does not exist")
            text = lines[line - 1]
        try:
            return cls.from_json(text)
        except RecordError as err:
            raise RecordError(f"{path}: {err}") from None


def _result_from_dict(result: Any) -> Result:
    if not isinstance(result, dict) or not {"winner", "dolmens", "scores"} <= set(result):
        raise RecordError("record field 'result' must be an object with 'winner', 'dolmens' and 'scores'")
    winner, dolmens, scores = result["winner"], result["dolmens"], result["scores"]
    if isinstance(winner, bool) or winner not in (0, 1, None):
        raise RecordError(f"record field 'result.winner' is {winner!r}; expected 0, 1 or null")
    if (
        not isinstance(dolmens, list)
        or len(dolmens) != 2
        or not all(isinstance(d, list) and all(isinstance(x, int) for x in d) for d in dolmens)
    ):
        raise RecordError("record field 'result.dolmens' must be two lists of integers")
    if not isinstance(scores, list) or len(scores) != 2 or not all(isinstance(x, int) for x in scores):
        raise RecordError("record field 'result.scores' must be two integers")
    return Result(winner, (tuple(dolmens[0]), tuple(dolmens[1])), (scores[0], scores[1]))
