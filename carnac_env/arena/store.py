"""The arena's files: settings, games and results, written atomically and checked on load.

An output folder belongs to one arena. ``arena.json`` holds its settings; ``games.jsonl``
one game record per finished game. Before an arena resumes, every stored line is checked
against the settings: its board and rules, its place in the schedule (pair, index, seats,
seed), and its moves, replayed with the rules core up to the stated result. A folder
holding another arena, games without their settings, or a line that does not check is
refused with an error naming the file (and line), before any game is played. The one
thing repaired silently is a torn last line (a kill during a write), which is dropped and
played again.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import IO, Any

from carnac_env import _checks, _files
from carnac_env.arena.schedule import ArenaGame
from carnac_env.core.boards import Board
from carnac_env.core.record import MAX_RECORD_BYTES, GameRecord
from carnac_env.errors import CarnacError, RecordError

Key = tuple[str, str, int]


def check_record(line: str, game: ArenaGame, board: Board) -> None:
    """Check one stored line against the game it claims to be.

    Raises:
        RecordError: the line is not that game's record: another board or rules, other
            agents, seats or seed, no result, a move that does not replay, or a stated
            result that differs from the replayed one.
    """
    record = GameRecord.from_json(line)
    if record.board != board:
        raise RecordError(
            f"the game is on board {record.board.name!r} {record.board.rules()}, "
            f"the arena on {board.name!r} {board.rules()}"
        )
    for key, value in game.meta().items():
        if json.dumps(record.meta.get(key)) != json.dumps(value):
            raise RecordError(f"field {key!r} is {record.meta.get(key)!r}, expected {value!r}")
    if record.result is None:
        raise RecordError("the game has no result")
    record.replay()


class ArenaStore:
    """The files of one output folder (``out``)."""

    def __init__(self, out: str | Path) -> None:
        self.out = Path(out)
        self.settings_path = self.out / "arena.json"
        self.games_path = self.out / "games.jsonl"
        self.results_path = self.out / "results.json"
        self.plot_path = self.out / "ratings.png"

    # ------------------------------------------------------------------ settings
    def check_settings(self, settings: dict[str, Any]) -> None:
        """Refuse a folder that holds another arena (read only; nothing is written).

        Raises:
            CarnacError: ``out`` is not a folder; ``arena.json`` is unreadable, not JSON, or
                holds other settings; or ``games.jsonl`` holds games while ``arena.json``
                is missing.
        """
        if self.out.exists() and not self.out.is_dir():
            raise CarnacError(f"--out {self.out} is not a folder")
        if self.settings_path.exists():
            previous = self._read_settings()
            if previous != settings:
                keys = sorted(k for k in set(previous) | set(settings) if previous.get(k) != settings.get(k))
                differ = "; ".join(f"{k}: {previous.get(k)!r} there, {settings.get(k)!r} now" for k in keys)
                raise CarnacError(
                    f"{self.out} holds an arena with other settings ({differ}); use another --out or remove the folder"
                )
        elif self.games_path.exists() and self.games_path.stat().st_size > 0:
            raise CarnacError(
                f"{self.settings_path} is missing, so the games in {self.games_path} cannot be checked "
                "against this arena's settings; use another --out, or move games.jsonl away"
            )

    def _read_settings(self) -> dict[str, Any]:
        path = self.settings_path
        with _files.reading(path) as handle:  # a FIFO or a device is refused, never waited on
            data = handle.read(MAX_RECORD_BYTES + 1)
        try:  # NaN and Infinity (which Python's json reads) are refused too
            previous = _json(data.decode("utf-8")) if len(data) <= MAX_RECORD_BYTES else None
        except (ValueError, RecursionError):  # not UTF-8, not JSON, too deep, a 5000-digit number
            previous = None
        if not isinstance(previous, dict):
            raise CarnacError(
                f"{path} is not an arena's settings (not a JSON object); it is never rewritten: "
                "use another --out, or remove the folder"
            )
        return previous

    def write_settings(self, settings: dict[str, Any]) -> None:
        """Create the folder (if needed) and write ``arena.json`` (left alone when it already
        holds these settings, so a finished arena can be shown from a read-only folder).

        Raises:
            CarnacError: the folder cannot be created or written.
        """
        if not self.out.is_dir():
            try:
                self.out.mkdir(parents=True, exist_ok=True)
            except OSError as err:
                raise CarnacError(f"cannot create the output folder {self.out}: {err.strerror or err}") from None
        _files.write_json(self.settings_path, settings, if_changed=True)

    # ------------------------------------------------------------------ games
    def load_games(self, expected: dict[Key, ArenaGame], board: Board | None = None) -> dict[Key, str]:
        """The finished games (key -> line), each checked; a torn last line is cut from the file.

        Every line must be a game of ``expected`` (with its seed); when ``board`` is given,
        it must also be that game's record on ``board``, replaying to its stated result
        (:func:`check_record`).

        Raises:
            CarnacError: naming the file and line: a line that is not UTF-8, too long, not a
                game record of this arena, or does not check.
        """
        if not self.games_path.exists():
            return {}
        done: dict[Key, str] = {}
        good_bytes = 0
        with _files.reading(self.games_path) as handle:  # a FIFO or a device is refused, never waited on
            size = os.fstat(handle.fileno()).st_size
            for number, raw, last in _lines(handle):
                text = self._decode(number, raw, last)
                if text is None:
                    break  # a torn last line: drop it, play the game again
                if text.strip():
                    key = self._check_line(number, text, expected, board)
                    done.setdefault(key, text.rstrip("\n"))
                good_bytes += len(raw)
        if good_bytes != size:
            _files.truncate(self.games_path, good_bytes)  # a hard link there is copied, never cut
        return done

    def _decode(self, number: int, raw: bytes, last: bool) -> str | None:
        """The line's text, or None for a torn last line."""
        where = f"{self.games_path} line {number}"
        if len(raw) > MAX_RECORD_BYTES + 1:
            raise CarnacError(f"{where} is longer than a game record may be ({MAX_RECORD_BYTES} bytes)")
        if not raw.endswith(b"\n"):
            return None  # killed mid-write
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise CarnacError(f"{where} is not UTF-8 text; move the file away") from None
        if last:
            try:
                _json(text)
            except (ValueError, RecursionError):  # not JSON, too deep, a 5000-digit number, NaN
                return None  # a damaged last line: play the game again
        return text

    def _check_line(self, number: int, text: str, expected: dict[Key, ArenaGame], board: Board | None) -> Key:
        where = f"{self.games_path} line {number}"
        try:
            record = _json(text)
            key = (record["pair"][0], record["pair"][1], record["game"])
            game = expected.get(key)
        except ValueError as err:  # not JSON, a 5000-digit number, NaN or Infinity
            raise CarnacError(f"{where} is not an arena game record ({str(err)[:200]}); move the file away") from None
        except (RecursionError, KeyError, TypeError, IndexError):
            raise CarnacError(f"{where} is not an arena game record; move the file away") from None
        if game is None:
            raise CarnacError(f"{where} holds game {key}, which is not part of this arena; use another --out")
        if game.seed != record.get("seed"):
            raise CarnacError(f"{where}: game {key} has seed {record.get('seed')}, expected {game.seed}")
        if board is not None:
            try:
                check_record(text, game, board)
            except RecordError as err:
                raise CarnacError(f"{where} (game {key}) does not check: {err}; move the file away") from None
        return key

    def appending(self) -> AbstractContextManager[_files.Appender]:
        """``games.jsonl`` opened for appending finished games: ``with store.appending() as
        out: out.line(record)`` writes each line and forces it to disk (a later kill keeps
        it). A link at ``games.jsonl`` is refused, never followed.

        Raises:
            CarnacError: the file cannot be opened or written, naming it.
        """
        return _files.appending(self.games_path)

    def finish(self, lines: list[str], results: dict[str, Any]) -> None:
        """Rewrite ``games.jsonl`` in canonical order and write ``results.json`` (each left
        alone when it already holds exactly that)."""
        _files.write_text(self.games_path, "".join(line + "\n" for line in lines), if_changed=True)
        _files.write_json(self.results_path, results, if_changed=True)


def _json(text: str) -> Any:
    """JSON text as the arena's files hold it: ``NaN`` and ``Infinity`` (which Python's json
    reads) raise ValueError, as malformed JSON does."""
    return json.loads(text, parse_constant=_checks.json_constant)


def _lines(handle: IO[bytes]) -> Iterator[tuple[int, bytes, bool]]:
    """``(number, raw line with its newline, is_last)``, each read with a bounded size."""
    number = 0
    raw = handle.readline(MAX_RECORD_BYTES + 2)
    while raw:
        following = handle.readline(MAX_RECORD_BYTES + 2)
        number += 1
        yield number, raw, not following
        if len(raw) > MAX_RECORD_BYTES + 1:
            return
        raw = following


def load_games(path: str | Path, expected: dict[Key, ArenaGame], board: Board | None = None) -> dict[Key, str]:
    """The finished games in the ``games.jsonl`` at ``path``: see :meth:`ArenaStore.load_games`."""
    path = Path(path)
    store = ArenaStore(path.parent)
    store.games_path = path
    return store.load_games(expected, board)
