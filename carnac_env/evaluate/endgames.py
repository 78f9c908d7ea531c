"""Endgame sets: positions from real games, solved exactly, and an agent's error rate on them.

Every other measure of an agent here is relative (one agent against another, or a rating on a
panel). An endgame set measures play against the truth where the truth can be computed: late in
a game, with few megaliths left, the exact solver (:func:`carnac_env.solve.solve`) gives the
game-theoretic value of a position and of every legal move in it. An agent's move *keeps* the
value, or *throws it away*: a won position played to a draw or a loss, a drawn one to a loss.

**The sets.** One versioned file per built-in board,
``carnac_env/evaluate/endgame_sets/BOARD-vVERSION.json``, written once by
``python -m carnac_env.evaluate.endgames --make BOARD`` (:func:`make_endgame_set`) and never
rewritten: another selection is a new version. Its positions come from games between
``greedy`` and ``mcts:sims=100`` (seats alternating) after seeded random openings (the
arena's), played at fixed seeds; a position is taken when the supply holds at most
``megaliths_left`` megaliths (and at least ``megaliths_left - 1``), in either phase (a
placement, or the answer to one). Only *informative* positions are kept: won or drawn ones
where at least one legal move loses value (in a lost position no move can, and where every move
keeps the value no agent can err).

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

**The error rate.** :func:`endgame_errors` asks an agent for its move in every position of a
board's set (a fresh agent per position, seeded from the evaluation seed and the position's
index, so the same seed gives the same moves) and counts the moves that lose value, over all
positions and split by the position's value, each share with its Wilson 95% interval.
``carnac evaluate SPEC --endgames [--board B[,B...]] [--seed S]`` prints the table.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shlex
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from carnac_env import _checks
from carnac_env._version import __version__
from carnac_env.agents import make, model_record
from carnac_env.arena.openings import random_opening
from carnac_env.arena.ratings import wilson
from carnac_env.arena.schedule import game_seed
from carnac_env.core.boards import BOARDS, Board, make_board
from carnac_env.core.game import GameState
from carnac_env.core.notation import action_to_text, parse_action
from carnac_env.core.record import MAX_MOVE_CHARS
from carnac_env.errors import CarnacError, SolveLimitError
from carnac_env.evaluate.panel import versioned_ids
from carnac_env.models import pinned_models

__all__ = [
    "ENDGAME_DIR",
    "ENDGAME_FORMAT",
    "MAX_SET_BYTES",
    "EndgameErrors",
    "EndgamePosition",
    "EndgameSet",
    "Share",
    "endgame_errors",
    "endgame_set_ids",
    "format_endgame_table",
    "load_endgames",
    "make_endgame_set",
    "merge_endgame_results",
    "position_seed",
    "read_endgame_results",
    "run_endgames",
    "solved_values",
]

#: Where the package's endgame sets live.
ENDGAME_DIR = Path(__file__).resolve().parent / "endgame_sets"
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
_CHAR_OF = {v: k for k, v in VALUE_CHARS.items()}

#: How the shipped sets were made, per board: positions, the most megaliths left, and the node
#: limit of one solve (default :data:`NODE_LIMIT`; a position whose solve passes it is skipped: node
#: counts, and so the choice, are deterministic). Chosen so that every set was made within about an
#: hour on a shared 2-core machine: the five boards of 70 squares and more, with the most squares
#: to search, have fewer positions and a lower limit.
MAKE_SETTINGS: dict[str, dict[str, int]] = {
    "petit_menec": {"positions": 100, "megaliths_left": 5},
    "small": {"positions": 100, "megaliths_left": 5},
    "medium": {"positions": 50, "megaliths_left": 4, "node_limit": 300_000},
    "kerlescan": {"positions": 50, "megaliths_left": 4, "node_limit": 300_000},
    "kermario": {"positions": 50, "megaliths_left": 4, "node_limit": 300_000},
    "large": {"positions": 50, "megaliths_left": 3, "node_limit": 300_000},
    "le_menec": {"positions": 50, "megaliths_left": 3, "node_limit": 300_000},
}
#: The agents of the games the positions come from (seats alternating).
GAME_AGENTS = ("greedy", "mcts:sims=100")
#: Random plies opening each of those games (the arena's seeded openings).
OPENING_PLIES = 4
#: The node limit of one solve when making a set (a position whose solve passes it is skipped).
NODE_LIMIT = 3_000_000


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


def _whole(value: Any, low: int) -> bool:
    return not isinstance(value, bool) and isinstance(value, int) and value >= low


def parse_endgames(data: Any, path: Path) -> EndgameSet:
    """The :class:`EndgameSet` that a set file's contents ``data`` describe (``path`` names the
    file in errors), checked field by field and every position replayed.

    Raises:
        CarnacError: a field that does not check, naming the file, the field and the position.
    """
    if not isinstance(data, dict):
        raise _bad(path, f"must be a JSON object, got {type(data).__name__}")
    if data.get("format") != ENDGAME_FORMAT:
        raise _bad(path, f"format must be {ENDGAME_FORMAT}, got {data.get('format')!r}")
    name, version = data.get("name"), data.get("version")
    if not isinstance(name, str) or not re.fullmatch(r"[a-z][a-z0-9_]*", name):
        raise _bad(path, f"name must be lower-case letters, digits and _, got {name!r}")
    if not _whole(version, 1):
        raise _bad(path, f"version must be a whole number from 1, got {version!r}")
    rules = data.get("rules")
    if not isinstance(rules, dict):
        raise _bad(path, f"rules must be an object, got {rules!r}")
    try:
        board = make_board(data.get("board"), **rules)
    except (CarnacError, TypeError) as err:
        raise _bad(path, f"board {data.get('board')!r} with rules {rules!r} is not a board: {err}") from None
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
    if not _whole(value, 0) or value > 1:
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


# --------------------------------------------------------------------------- solving and making
def solved_values(state: GameState, megaliths_left: int, node_limit: int = 0) -> tuple[int, list[int]]:
    """The value of ``state`` for its player to act and the value of each of its legal actions
    (in the order of ``state.legal_actions()``), by the exact solver.

    Raises:
        CarnacError: as :func:`carnac_env.solve.solve` (a malformed state, a supply above
            ``megaliths_left``, a search past ``node_limit``).
    """
    from carnac_env.solve import solve

    mover = state.to_act
    values = []
    for action in state.legal_actions():
        child = state.copy()
        child.apply(action)
        result = solve(child, max_megaliths_left=megaliths_left, node_limit=node_limit).result
        values.append(result if child.to_act == mover else -result)
    return max(values), values


def _candidates(board: Board, seed: int, game: int, low: int, high: int) -> Iterable[tuple[int, list[int]]]:
    """The positions of game ``game`` (played from the seeded opening) with ``low`` to ``high``
    megaliths left: ``(ply, actions before it)``."""
    from carnac_env.arena.runner import play_game

    red, white = GAME_AGENTS if game % 2 == 0 else GAME_AGENTS[::-1]
    opening = tuple(random_opening(board, OPENING_PLIES, seed, game))
    record = play_game(board, red, white, game_seed(seed, red, white, game), opening=opening)
    actions = record.actions()
    state = GameState(board)
    for ply, action in enumerate(actions):
        if low <= state.supply <= high and not state.is_over:
            yield ply, actions[:ply]
        state.apply(action)


def make_endgame_set(
    board: str | Board,
    positions: int = 100,
    megaliths_left: int = 4,
    seed: int = 0,
    version: int = 1,
    node_limit: int = NODE_LIMIT,
    max_games: int = 1000,
    command: str = "",
    echo: Callable[[str], None] = print,
) -> dict[str, Any]:
    """A set file's contents: the first ``positions`` informative positions (see the module
    docstring) of the games at seeds from ``seed``, with ``megaliths_left - 1`` to
    ``megaliths_left`` megaliths left, solved.

    Raises:
        CarnacError: a bad board or number, or fewer informative positions than asked for in
            ``max_games`` games.
    """
    from carnac_env.solve import solve

    board = board if isinstance(board, Board) else make_board(board)
    positions = _checks.whole("positions", positions, 1, MAX_POSITIONS)
    high = _checks.whole("megaliths_left", megaliths_left, 1, board.megaliths)
    seed = _checks.whole("seed", seed, 0, _checks.MAX_SEED)
    started = time.perf_counter()
    kept: list[dict[str, Any]] = []
    seen = skipped = lost = plain = 0
    game = 0
    for game in range(max_games):
        for ply, before in _candidates(board, seed, game, max(1, high - 1), high):
            seen += 1
            state = GameState(board)
            for action in before:
                state.apply(action)
            try:
                if solve(state, max_megaliths_left=high, node_limit=node_limit).result < 0:
                    lost += 1
                    continue
                value, values = solved_values(state, high, node_limit)
            except SolveLimitError:
                skipped += 1
                continue
            if min(values) == value:
                plain += 1
                continue
            moves, replay = [], GameState(board)
            for action in before:
                moves.append(action_to_text(board, action, replay.to_act))
                replay.apply(action)
            text = "".join(_CHAR_OF[v] for v in values)
            kept.append({"game": game, "ply": ply, "moves": moves, "value": value, "values": text})
            if len(kept) == positions:
                break
        echo(f"{board.name}: game {game}: {len(kept)} positions kept of {seen} seen")
        if len(kept) == positions:
            break
    else:
        raise CarnacError(f"{board.name}: only {len(kept)} informative positions in {max_games} games")
    return {
        "format": ENDGAME_FORMAT,
        "name": board.name,
        "version": version,
        "board": board.name,
        "rules": board.rules(),
        "made": {
            "command": command,
            "carnac_env": __version__,
            "games": f"{game + 1} games {GAME_AGENTS[0]} vs {GAME_AGENTS[1]} (seats alternating, game k seeded "
            f"by the arena's game_seed({seed}, red, white, k)) from {OPENING_PLIES}-ply random openings "
            f"(random_opening(board, {OPENING_PLIES}, {seed}, k))",
            "megaliths_left": [max(1, high - 1), high],
            "node_limit": node_limit,
            "seen": seen,
            "lost": lost,
            "no_move_loses": plain,
            "skipped_node_limit": skipped,
            "seconds": round(time.perf_counter() - started, 1),
        },
        "positions": kept,
    }


# --------------------------------------------------------------------------- error rates
@dataclass(frozen=True)
class Share:
    """A count of errors among positions, with its share and Wilson 95% interval."""

    errors: int
    positions: int

    @property
    def share(self) -> float:
        """``errors / positions`` (0 for no positions)."""
        return self.errors / self.positions if self.positions else 0.0

    @property
    def interval(self) -> tuple[float, float]:
        """The Wilson 95% interval of the share."""
        return wilson(self.share, self.positions)

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready form: errors, positions, share and the interval (rounded to 4 places)."""
        low, high = self.interval
        return {
            "errors": self.errors,
            "positions": self.positions,
            "share": round(self.share, 4),
            "interval_95": [round(low, 4), round(high, 4)],
        }


@dataclass(frozen=True)
class EndgameErrors:
    """An agent's moves on one board's endgame set, judged against the solved values.

    Attributes:
        agent: the agent's spec (or its class name for an agent object).
        board: the board's name.
        set_id: the set's id (``small-v1``).
        seed: the evaluation seed.
        moves: per position, ``(value, value of the agent's move, the move in notation)``.
        model: which model file the agent played (:func:`~carnac_env.agents.protocol.model_record`),
            or None for an agent without one.
    """

    agent: str
    board: str
    set_id: str
    seed: int
    moves: tuple[tuple[int, int, str], ...]
    model: dict[str, str] | None = None

    def _count(self, value: int | None) -> Share:
        judged = [(v, m) for v, m, _ in self.moves if value is None or v == value]
        return Share(sum(1 for v, m in judged if m < v), len(judged))

    @property
    def all(self) -> Share:
        """Errors (a move that loses value) over every position."""
        return self._count(None)

    @property
    def won(self) -> Share:
        """Won positions played to a draw or a loss."""
        return self._count(1)

    @property
    def drawn(self) -> Share:
        """Drawn positions played to a loss."""
        return self._count(0)

    @property
    def won_to_loss(self) -> int:
        """Won positions played to a loss."""
        return sum(1 for v, m, _ in self.moves if v == 1 and m == -1)

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready summary (counts, shares and intervals; not the moves)."""
        return {
            "agent": self.agent,
            "board": self.board,
            "set": self.set_id,
            "seed": self.seed,
            "all": self.all.to_dict(),
            "won": self.won.to_dict(),
            "drawn": self.drawn.to_dict(),
            "won_to_loss": self.won_to_loss,
            **({"model": self.model} if self.model else {}),
        }


def position_seed(seed: int, agent: str, set_id: str, index: int) -> int:
    """The seed of the agent asked about position ``index`` of set ``set_id`` (63 bits)."""
    digest = hashlib.sha256(f"carnac-endgames\0{seed}\0{agent}\0{set_id}\0{index}".encode()).hexdigest()
    return int(digest[:15], 16)


def endgame_errors(
    agent: str | Any,
    board: str | Board = "medium",
    seed: int = 0,
    endgames: str | Path | EndgameSet | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> EndgameErrors:
    """How often ``agent``'s move throws away a win or a draw on ``board``'s endgame set.

    Args:
        agent: an agent spec (a fresh agent per position, seeded by :func:`position_seed`), or
            an agent object (asked as it is; the caller owns its seeding).
        board: the board whose newest shipped set is played (ignored when ``endgames`` is given).
        seed: the evaluation seed; the same seed gives the same moves (for agents with a
            ``sims`` budget rather than ``seconds``).
        endgames: a set, a set id or a set file instead of the board's newest.
        progress: called as ``progress(done, total)`` after each position.

    Returns:
        An :class:`EndgameErrors`.

    Raises:
        CarnacError: a bad spec, board, seed or set, or an agent that plays an illegal move
            (naming it and the position).
    """
    seed = _checks.whole("seed", seed, 0, _checks.MAX_SEED)
    with pinned_models():  # each model file read once: every position plays the bytes recorded
        chosen = (
            endgames if isinstance(endgames, EndgameSet) else load_endgames(board if endgames is None else endgames)
        )
        if isinstance(agent, str):
            if not agent.strip():
                raise CarnacError("the agent must be a spec such as 'greedy', got an empty string")
            name = agent.strip()
            model = model_record(make(name), chosen.board)  # fails early on a bad spec
        else:
            name = type(agent).__name__
            model = model_record(make(agent), chosen.board)  # refuses what is not an agent
        moves = []
        for index, position in enumerate(chosen.positions):
            player = make(name, seed=position_seed(seed, name, chosen.id, index)) if isinstance(agent, str) else agent
            state = position.state.copy()
            action = player.act(state)
            if action not in position.actions:
                raise CarnacError(
                    f"agent {name!r} played {action!r} in position {index} of {chosen.id}, which is not a legal move"
                )
            text = action_to_text(chosen.board, int(action), position.state.to_act)
            moves.append((position.value, position.value_of(int(action)), text))
            if progress is not None:
                progress(index + 1, len(chosen.positions))
        return EndgameErrors(name, chosen.board.name, chosen.id, seed, tuple(moves), model)


def _cell(share: Share) -> str:
    if not share.positions:
        return "-"
    low, high = share.interval
    return f"{share.errors}/{share.positions} {share.share:.0%} [{low:.0%}, {high:.0%}]"


def format_endgame_table(results: Iterable[EndgameErrors]) -> str:
    """The results as a text table: per board, the errors over all positions, over the won ones
    (played to a draw or a loss) and over the drawn ones (played to a loss), each with its share
    and Wilson 95% interval."""
    from carnac_env.render.ansi import printable

    results = list(results)
    head = ["agent", "board (set)", "errors: all", "won positions", "drawn positions"]
    rows = [
        [printable(r.agent), f"{r.board} ({r.set_id})", _cell(r.all), _cell(r.won), _cell(r.drawn)] for r in results
    ]
    widths = [max(len(row[k]) for row in [head, *rows]) for k in range(len(head))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in [head, *rows]]
    seeds = sorted({r.seed for r in results})
    lines.append("")
    lines.append(
        "errors: moves that lose value against the solved values (a won position played to a draw or a loss, "
        f"a drawn one to a loss); share and Wilson 95% interval; seed {', '.join(map(str, seeds))}"
    )
    return "\n".join(lines)


# --------------------------------------------------------------------------- results file
#: The results file ``carnac evaluate --endgames --out DIR`` keeps in ``DIR``.
RESULTS_NAME = "endgames.json"
#: The largest results file read (a row is a few hundred bytes).
MAX_RESULTS_BYTES = 16 * 1024 * 1024


def _result_key(row: dict[str, Any]) -> tuple[Any, ...]:
    """What makes two result rows the same measurement: the agent, the set, the seed and the
    model file it played (the same key gives the same moves)."""
    model = row.get("model")
    return (
        row["agent"],
        row["board"],
        row["set"],
        row["seed"],
        model.get("sha256") if isinstance(model, dict) else None,
    )


def read_endgame_results(path: str | Path) -> list[dict[str, Any]]:
    """The rows of an ``endgames.json`` results file (``[]`` when there is none), each checked
    to be a result row (:meth:`EndgameErrors.to_dict`: ``agent``, ``board``, ``set`` as text,
    ``seed`` a whole number, at most one row per measurement).

    Raises:
        CarnacError: the file is not a regular file, is larger than :data:`MAX_RESULTS_BYTES`,
            not UTF-8 JSON with finite numbers, or not a list of result rows; naming the file.
    """
    from carnac_env._files import reading

    path = Path(path)
    if not os.path.lexists(path):
        return []
    keep = "it is never replaced: move it away, or use another --out"
    with reading(path, "the endgame results file") as handle:  # a FIFO or a device: refused, never waited on
        data = handle.read(MAX_RESULTS_BYTES + 1)
    if len(data) > MAX_RESULTS_BYTES:
        raise CarnacError(f"endgame results {path}: larger than {MAX_RESULTS_BYTES} bytes; {keep}")
    try:
        rows = json.loads(data.decode("utf-8"), parse_constant=_checks.json_constant)
    except (ValueError, RecursionError) as err:  # not UTF-8, not JSON, NaN, too deep
        raise CarnacError(f"endgame results {path}: not JSON results ({str(err)[:200]}); {keep}") from None
    if not isinstance(rows, list):
        raise CarnacError(f"endgame results {path}: not a list of result rows; {keep}")
    seen = set()
    for number, row in enumerate(rows, 1):
        good = (
            isinstance(row, dict)
            and all(isinstance(row.get(k), str) for k in ("agent", "board", "set"))
            and _checks.is_whole(row.get("seed"))
            and not _checks.is_flag(row.get("seed"))
        )
        if not good:
            raise CarnacError(f"endgame results {path}: row {number} is not an endgame result row; {keep}")
        if _result_key(row) in seen:
            raise CarnacError(f"endgame results {path}: row {number} repeats an earlier row's measurement; {keep}")
        seen.add(_result_key(row))
    return rows


def merge_endgame_results(earlier: list[dict[str, Any]], new: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], str]:
    """The rows of a results file after a run: every earlier row kept, except that a new row of
    the same measurement (agent, set, seed, model file) takes its place; the other new rows
    after them. Returns the rows and what was done, in words (``"2 new, 1 replaced by the
    same measurement, 3 kept"``). Nothing earlier is ever dropped."""
    fresh = {_result_key(row): row for row in new}
    replaced = 0
    rows = []
    for row in earlier:
        key = _result_key(row)
        if key in fresh:
            rows.append(fresh.pop(key))
            replaced += 1
        else:
            rows.append(row)
    rows.extend(fresh.values())
    said = f"{len(fresh)} new, {replaced} replaced by the same measurement, {len(earlier) - replaced} kept from before"
    return rows, said


def run_endgames(
    agent: str,
    boards: str | list[str] | None = None,
    seed: int = 0,
    out: str | Path | None = None,
    progress: bool = True,
    echo: Callable[[str], None] = print,
) -> list[EndgameErrors]:
    """``carnac evaluate SPEC --endgames``: ``agent``'s error rate on each board's endgame set,
    printed as a table, and with ``out`` merged into ``out/endgames.json``.

    Args:
        agent: the agent's spec.
        boards: the boards, a list or comma-separated text (None: every built-in board). An
            empty selection (``""``, ``","``) and a board named twice are refused.
        seed: the evaluation seed.
        out: a folder for ``endgames.json`` (None: print only). It is locked for the run
            (:func:`~carnac_env._files.lock_folder`), and the file already there is read and
            checked before any position is played; its rows are kept, a row of the same
            measurement replaced (:func:`merge_endgame_results`), so a run never leaves the
            file with fewer results than it had.
        progress: say on stderr which board is being played.
        echo: where the table and the file's fate go.

    Raises:
        CarnacError: a bad spec, seed or board, an empty selection, a folder in use by another
            run (:class:`~carnac_env._files.FolderBusyError`), or an ``endgames.json`` there that
            is not a results file (refused, never replaced); all before any position is played.
    """
    from contextlib import nullcontext

    from carnac_env._files import lock_folder, write_json

    if not isinstance(agent, str) or not agent.strip():
        raise CarnacError(f"the agent must be a spec such as 'greedy', got {agent!r}")
    seed = _checks.whole("seed", seed, 0, _checks.MAX_SEED)
    names = _board_list(boards)
    sets = [load_endgames(name) for name in names]  # an unknown board: refused before anything is played
    lock = nullcontext() if out is None else lock_folder(out, "evaluate --endgames")
    with lock, pinned_models():
        path = None if out is None else Path(out) / RESULTS_NAME
        earlier = [] if path is None else read_endgame_results(path)
        results = []
        for chosen in sets:
            if progress:
                print(f"{chosen.board.name}: asking {agent.strip()} ...", file=sys.stderr, flush=True)
            results.append(endgame_errors(agent, seed=seed, endgames=chosen))
        echo(format_endgame_table(results))
        if path is not None:
            rows, said = merge_endgame_results(earlier, [r.to_dict() for r in results])
            write_json(path, rows)
            echo(f"results: {path} (merged with the results there: {said})")
    return results


def _board_list(boards: str | list[str] | None) -> list[str]:
    """The boards of a selection, checked: none given is every built-in board; an empty one, or
    one that names a board twice, is refused."""
    if boards is None:
        return list(BOARDS)
    given = boards.split(",") if isinstance(boards, str) else boards
    if not isinstance(given, list | tuple) or not all(isinstance(b, str) for b in given):
        raise CarnacError(f"--board {boards!r}: expected board names, comma-separated")
    names = [b.strip() for b in given if b.strip()]
    if not names:
        raise CarnacError(
            f"--board {boards!r} names no board; expected one or more of {', '.join(BOARDS)}, comma-separated "
            "(leave --board out for every board)"
        )
    twice = sorted({b for b in names if names.count(b) > 1})
    if twice:
        raise CarnacError(f"--board {boards!r} names {', '.join(twice)} more than once")
    return names


# --------------------------------------------------------------------------- command line
def main(argv: list[str] | None = None) -> int:
    """``python -m carnac_env.evaluate.endgames --make BOARD [...]``: write a board's set."""
    from carnac_env._files import write_text

    parser = argparse.ArgumentParser(description="Make an endgame set (see carnac_env/evaluate/endgames.py).")
    parser.add_argument("--make", required=True, metavar="BOARD", help=f"the board ({', '.join(BOARDS)})")
    parser.add_argument("--positions", type=int, default=None, help="positions to keep (default: MAKE_SETTINGS)")
    parser.add_argument("--megaliths-left", type=int, default=None, help="the most megaliths left (default: ours)")
    parser.add_argument("--node-limit", type=int, default=None, help="skip a position whose solve passes it")
    parser.add_argument("--seed", type=int, default=0, help="seed of the games (default 0)")
    parser.add_argument("--version", type=int, default=1, help="the set's version (default 1)")
    parser.add_argument("--out", default=None, help="the file to write (default: the package's BOARD-vVERSION.json)")
    args = parser.parse_args(argv)
    try:
        defaults = {"positions": 100, "megaliths_left": 4, "node_limit": NODE_LIMIT, **MAKE_SETTINGS.get(args.make, {})}
        positions = defaults["positions"] if args.positions is None else args.positions
        left = defaults["megaliths_left"] if args.megaliths_left is None else args.megaliths_left
        limit = defaults["node_limit"] if args.node_limit is None else args.node_limit
        command = (
            f"python -m carnac_env.evaluate.endgames --make {shlex.quote(args.make)} --positions {positions} "
            f"--megaliths-left {left} --node-limit {limit} --seed {args.seed} --version {args.version}"
        )
        data = make_endgame_set(args.make, positions, left, args.seed, args.version, limit, command=command)
        out = Path(args.out) if args.out else ENDGAME_DIR / f"{args.make}-v{args.version}.json"
        write_text(out, _dumps(data))
    except CarnacError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(f"wrote {out} ({len(data['positions'])} positions, {data['made']['seconds']} s)")
    return 0


def _dumps(data: dict[str, Any]) -> str:
    """A set file's text: the header indented, one position a line (small diffs, small files)."""
    head = {k: v for k, v in data.items() if k != "positions"}
    text = json.dumps(head, indent=1)[:-2]
    rows = ",\n".join("  " + json.dumps(p, separators=(",", ":")) for p in data["positions"])
    return f'{text},\n "positions": [\n{rows}\n ]\n}}\n'


if __name__ == "__main__":
    sys.exit(main())
