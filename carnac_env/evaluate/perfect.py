"""An agent against perfect play over whole games: every move it makes from the point the exact
solver reaches, judged by the solved values.

The endgame sets (:mod:`carnac_env.evaluate.endgames`) ask an agent about stored positions
from other agents' games. Here the agent plays whole games against itself (both seats, each
seeded as the arena seeds them, after a short seeded random opening so that a deterministic
agent plays different games), and every one of its moves made with at most ``megaliths_left``
megaliths in the supply is checked: the position's value for the player to act (win 1, draw 0,
loss -1, by :func:`carnac_env.solve.solve`) against the value of the position the move leads to.
A move that lowers it throws the position away: a won position played to a draw or a loss, a
drawn one to a loss. A lost position has nothing to throw away and is not counted.

This is issue 52's measure "over whole games", cut where the solver can follow: the whole game
of ``petit_menec`` is not solved (docs/solver.md), so the moves before the cut are not judged.
From 8 megaliths left (of 14 on petit_menec: the middle of the game) a solve takes about 1.5 s
at the median on one core, and each game's later positions come from the same transposition
table. ``carnac evaluate SPEC --perfect`` runs it from the command line.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from carnac_env import _checks
from carnac_env.agents import make, model_record
from carnac_env.arena.openings import random_opening
from carnac_env.core.boards import Board, make_board
from carnac_env.core.game import GameState
from carnac_env.core.notation import action_to_text
from carnac_env.errors import CarnacError
from carnac_env.evaluate.endgames.score import JudgedMoves
from carnac_env.models import pinned_models

__all__ = [
    "MAX_GAMES",
    "NODE_LIMIT",
    "OPENING_PLIES",
    "PERFECT_BOARD",
    "PERFECT_LEFT",
    "PerfectPlayErrors",
    "perfect_game_seed",
    "perfect_play_errors",
]

#: The board whose games are judged by default: the smallest standard board, the one the
#: solver follows furthest (issue 52's candidate for the whole game solved).
PERFECT_BOARD = "petit_menec"
#: The default cut: moves with at most this many megaliths left are judged (on petit_menec a
#: solve from 8 left takes about 1.5 s at the median, 12 s at most on the fixed set).
PERFECT_LEFT = 8
#: Seeded random plies opening every game (the arena's openings), so that a deterministic agent
#: plays a different game each time; they are not the agent's moves and are not judged.
OPENING_PLIES = 4
#: The most games one measurement plays.
MAX_GAMES = 10_000
#: The default node limit of one solve: a position whose solve passes it is left unjudged, and so
#: is the move that led to it (about 15 s on one core; node counts are deterministic, so which
#: positions are left out is too). Most positions of petit_menec from 8 left solve within a few
#: million nodes, a few need billions.
NODE_LIMIT = 50_000_000


@dataclass(frozen=True)
class PerfectPlayErrors(JudgedMoves):
    """An agent's moves over whole games against itself, judged by the solved values.

    Attributes:
        agent: the agent's spec.
        board: the board's name.
        seed: the measurement's seed (the openings' and the agents').
        games: the games played.
        megaliths_left: the cut: moves made with at most this many megaliths left are judged.
        moves: per judged move, ``(value, value of the move, the move in notation)``, the values
            for the player who made it; lost positions included (they count in no share).
        unjudged: the moves past the cut left unjudged, because the solve of the position before
            or after them passed the node limit.
        node_limit: that limit.
        seconds: the CPU seconds of the whole measurement (games and solves), to a tenth.
        model: which model file the agent played, or None for an agent without one.
    """

    agent: str
    board: str
    seed: int
    games: int
    megaliths_left: int
    moves: tuple[tuple[int, int, str], ...]
    unjudged: int = 0
    node_limit: int = NODE_LIMIT
    seconds: float = 0.0
    model: dict[str, str] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready summary (counts, shares and intervals; not the moves)."""
        return {
            "agent": self.agent,
            "board": self.board,
            "seed": self.seed,
            "games": self.games,
            "megaliths_left": self.megaliths_left,
            "judged": len(self.moves),
            "unjudged": self.unjudged,
            "node_limit": self.node_limit,
            **self.shares(),
            "seconds": self.seconds,
            **({"model": self.model} if self.model else {}),
        }


def perfect_game_seed(seed: int, agent: str, game: int) -> int:
    """The seed of game ``game`` of ``agent``'s measurement seeded ``seed`` (63 bits)."""
    digest = hashlib.sha256(f"carnac-perfect\0{seed}\0{agent}\0{game}".encode()).hexdigest()
    return int(digest[:15], 16)


def perfect_play_errors(
    agent: str,
    board: str | Board = PERFECT_BOARD,
    games: int = 20,
    seed: int = 0,
    megaliths_left: int | None = None,
    node_limit: int = NODE_LIMIT,
    table_mb: int = 256,
    progress: Callable[[int, int], None] | None = None,
) -> PerfectPlayErrors:
    """How often ``agent``'s moves throw away a win or a draw over ``games`` whole games.

    Args:
        agent: an agent spec (``greedy``, ``az:sims=0``...); both seats play it.
        board: a board name or :class:`~carnac_env.core.boards.Board` (custom boards too).
        games: games to play, 1 to :data:`MAX_GAMES`.
        seed: the measurement's seed; the same seed gives the same games and the same result
            (for agents with a ``sims`` budget rather than ``seconds``).
        megaliths_left: judge the moves made with at most this many megaliths in the supply, 1
            to the board's megaliths (None: :data:`PERFECT_LEFT`, or all of a board with fewer).
            The solver's time grows about 7-15x a megalith: on petit_menec a game's solves from 8
            left take seconds, from 10 left minutes (docs/solver.md).
        node_limit: the most nodes of one solve (0: no limit); a position whose solve passes it
            leaves the moves before and after it unjudged (counted in ``unjudged``).
        table_mb: the solver's transposition table, in MiB (kept from one solve to the next).
        progress: called as ``progress(done, total)`` after each game.

    Returns:
        A :class:`PerfectPlayErrors`.

    Raises:
        CarnacError: a bad spec, board or number (before any game is played), or an agent that
            plays an illegal move (naming it and the position).
    """
    from carnac_env.arena.runner import play_game
    from carnac_env.errors import SolveLimitError
    from carnac_env.solve import MAX_TABLE_MB, clear_table, solve
    from carnac_env.solve.alphabeta import MAX_NODE_LIMIT

    board = board if isinstance(board, Board) else make_board(board)
    games = _checks.whole("games", games, 1, MAX_GAMES)
    seed = _checks.whole("seed", seed, 0, _checks.MAX_SEED)
    left = min(PERFECT_LEFT, board.megaliths) if megaliths_left is None else megaliths_left
    left = _checks.whole("megaliths_left", left, 1, board.megaliths)
    node_limit = _checks.whole("node_limit", node_limit, 0, MAX_NODE_LIMIT)
    table_mb = _checks.whole("table_mb", table_mb, 1, MAX_TABLE_MB)
    if not isinstance(agent, str) or not agent.strip():
        raise CarnacError(f"the agent must be a spec such as 'greedy', got {agent!r}")
    name = agent.strip()

    def value(state: GameState) -> int | None:
        try:
            return solve(state, max_megaliths_left=left, node_limit=node_limit, table_mb=table_mb).result
        except SolveLimitError:
            return None

    started = time.process_time()
    # The solver keeps its table from call to call; a node count, and so which solves pass the
    # limit, depends on what it holds: start from an empty one, so that the result does not
    # depend on what this thread solved before.
    clear_table()
    with pinned_models():  # each model file read once: every game plays the bytes recorded
        model = model_record(make(name), board)  # fails early on a bad spec
        moves: list[tuple[int, int, str]] = []
        unjudged = 0
        for game in range(games):
            opening = tuple(random_opening(board, OPENING_PLIES, seed, game))
            record = play_game(board, name, name, perfect_game_seed(seed, name, game), opening=opening)
            actions = record.actions()
            states = [GameState(board)]
            for action in actions:
                states.append(states[-1].copy())
                states[-1].apply(action)
            first = next(
                (ply for ply in range(len(opening), len(actions)) if states[ply].supply <= left),
                len(actions),
            )
            values = [value(state) for state in states[first:]]
            for ply in range(first, len(actions)):
                before, after = states[ply], states[ply + 1]
                known, reached = values[ply - first], values[ply + 1 - first]
                if known is None or reached is None:
                    unjudged += 1
                    continue
                played = reached if after.to_act == before.to_act else -reached
                moves.append((known, played, action_to_text(board, actions[ply], before.to_act)))
            if progress is not None:
                progress(game + 1, games)
    seconds = round(time.process_time() - started, 1)
    return PerfectPlayErrors(name, board.name, seed, games, left, tuple(moves), unjudged, node_limit, seconds, model)
