"""Making an endgame set: positions from seeded games, solved exactly.

A set's positions come from games between ``greedy`` and ``mcts:sims=100`` (:data:`GAME_AGENTS`,
seats alternating) after seeded random openings (the arena's), played at fixed seeds; a position
is taken when the supply holds at most ``megaliths_left`` megaliths (and at least
``megaliths_left - 1``), in either phase (a placement, or the answer to one), and kept when it is
informative (:mod:`~carnac_env.evaluate.endgames.sets`). ``carnac endgames --make BOARD`` runs
:func:`make_endgame_set` with the board's :data:`MAKE_SETTINGS`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any

from carnac_env import _checks
from carnac_env._version import __version__
from carnac_env.arena.openings import random_opening
from carnac_env.arena.schedule import game_seed
from carnac_env.core.boards import Board, make_board
from carnac_env.core.game import GameState
from carnac_env.core.notation import action_to_text
from carnac_env.errors import CarnacError, SolveLimitError
from carnac_env.evaluate.endgames.sets import ENDGAME_FORMAT, MAX_POSITIONS, VALUE_CHARS

__all__ = ["GAME_AGENTS", "MAKE_SETTINGS", "NODE_LIMIT", "OPENING_PLIES", "make_endgame_set", "solved_values"]

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
