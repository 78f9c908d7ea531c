"""The learning curve's evaluation games: the network against ``greedy`` and ``mcts``.

Every ``eval_every`` iterations the network, with ``eval_sims`` simulations, plays
``eval_games`` games against ``greedy`` and as many against ``mcts:sims=<mcts_sims>`` on each
evaluated board, from seeded random openings of ``eval_openings`` plies, each opening once from
each seat (the same openings at every evaluation, so the points compare). The openings and the
opponents' seeds come from the run's seed: they are the run's *selection* set. Numbers to report
come from other seeds (``carnac arena --seed``), never these.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from carnac_env.agents import make
from carnac_env.agents.az import AZAgent
from carnac_env.arena.openings import random_opening
from carnac_env.core.boards import Board
from carnac_env.core.game import GameState
from carnac_env.models import PolicyValueNet, save

__all__ = ["elo", "evaluate_board", "win_rate"]


def elo(rate: float, games: int) -> float:
    """The Elo difference a win rate implies (clipped half a game from 0 and 1)."""
    clipped = min(max(rate, 0.5 / games), 1 - 0.5 / games)
    return round(400 * math.log10(clipped / (1 - clipped)), 1)


def win_rate(model: Path, board: Board, opponent: str, games: int, sims: int, openings: int, seed: int) -> float:
    """The score (draws half) of ``az:sims=<sims>`` with ``model`` against ``opponent`` over
    ``games`` games on ``board`` (seats alternating, opening ``g // 2`` of ``seed``)."""
    score = 0.0
    for game in range(games):
        state = GameState(board)
        for action in random_opening(board, openings, seed, game // 2):
            state.apply(action)
        agents = [AZAgent(sims=sims, model=str(model)), make(opponent, seed=seed * 100_003 + game)]
        az_seat = game % 2
        seats = agents if az_seat == 0 else agents[::-1]
        while not state.is_over:
            state.apply(seats[state.to_act].choose(state))
        score += (state.result().reward(az_seat) + 1) / 2
    return score / games


def evaluate_board(net: PolicyValueNet, board: Board, config: Any, folder: Path, suffix: str = "") -> dict[str, Any]:
    """``vs_greedy``, ``vs_mcts`` and their Elo on ``board`` (keys ending in ``suffix``)."""
    path = folder / "eval-model.npz"
    save(net, path)
    row: dict[str, Any] = {}
    try:
        for label, spec in (("greedy", "greedy"), ("mcts", f"mcts:sims={config.mcts_sims}")):
            rate = win_rate(path, board, spec, config.eval_games, config.eval_sims, config.eval_openings, config.seed)
            row[f"vs_{label}{suffix}"] = rate
            row[f"elo_vs_{label}{suffix}"] = elo(rate, config.eval_games)
    finally:
        path.unlink(missing_ok=True)
    return row
