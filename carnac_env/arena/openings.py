"""Seeded random openings: the first plies of a game played uniformly at random.

Two deterministic agents replay the same game from every seed; engine testers therefore
start each pair of games from an *opening*, a few random plies, and play it once from each
seat. Here opening ``k`` of a set seeded ``seed`` is the same list of actions on every machine
(numpy's PCG64 from ``(seed, k)``), so an arena, an evaluation or a training run that says
which openings it used can be repeated exactly.
"""

from __future__ import annotations

import numpy as np

from carnac_env import _checks
from carnac_env.core.boards import Board
from carnac_env.core.game import GameState

__all__ = ["MAX_OPENING_PLIES", "opening_state", "random_opening"]

#: The longest opening accepted (a game of the smallest official board lasts about 30 plies).
MAX_OPENING_PLIES = 16


def random_opening(board: Board, plies: int, seed: int, index: int) -> list[int]:
    """Opening ``index`` of the set seeded ``seed``: ``plies`` uniformly random legal actions
    from the start of a game on ``board`` (fewer if the game would end first).

    Raises:
        CarnacError: ``plies`` outside ``0..MAX_OPENING_PLIES``, or a bad seed or index.
    """
    plies = _checks.whole("opening plies", plies, 0, MAX_OPENING_PLIES)
    rng = np.random.default_rng([_checks.seed(seed), _checks.whole("opening index", index, 0)])
    state = GameState(board)
    actions: list[int] = []
    for _ in range(plies):
        legal = state.legal_actions()
        after = state.copy()
        action = legal[int(rng.integers(len(legal)))]
        after.apply_unchecked(action)
        if after.is_over:
            break
        state = after
        actions.append(action)
    return actions


def opening_state(board: Board, plies: int, seed: int, index: int) -> GameState:
    """The position after :func:`random_opening` ``index``."""
    state = GameState(board)
    for action in random_opening(board, plies, seed, index):
        state.apply(action)
    return state
