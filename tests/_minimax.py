"""A brute-force minimax on the core rules: the reference the exact solver's tests check against.

A plain memoised minimax over the lexicographic (result, margin) on
:class:`~carnac_env.core.game.GameState` (``legal_actions``, ``apply``, ``result``): no pruning,
no table, no symmetry, nothing shared with the solver but the core rules.
"""

from __future__ import annotations

import random

from carnac_env.core.game import OVER, GameState
from carnac_env.solve import solve


def key(state: GameState) -> tuple:
    """Everything that decides the rest of the game from ``state``."""
    return (bytes(state.cells), bytes(state.kinds), state.supply, state.phase, state.to_act, state.pending,
            state.pending_colour)  # fmt: skip


def brute(state: GameState, memo: dict) -> tuple[int, int]:
    """``(result, margin)`` of ``state`` for its player to act, by trying every move; every
    position reached is kept in ``memo`` as ``key -> (value, state)``."""
    found = key(state)
    if found not in memo:
        if state.phase == OVER:
            dolmens = state.result().dolmens
            value = (state.result().reward(state.to_act), len(dolmens[state.to_act]) - len(dolmens[1 - state.to_act]))
        else:
            value = (-2, 0)
            for action in state.legal_actions():
                value = max(value, after(state, action, memo))
        memo[found] = (value, state)
    return memo[found][0]


def after(state: GameState, action: int, memo: dict) -> tuple[int, int]:
    """The value of ``action`` in ``state`` for ``state``'s player to act."""
    child = state.copy()
    child.apply(action)
    value = brute(child, memo)
    return value if child.to_act == state.to_act else (-value[0], -value[1])


def check(state: GameState, memo: dict, **options: object) -> str | None:
    """What is wrong with ``solve``'s answers on ``state`` (result, then margin), or None."""
    expected = brute(state, memo)
    for margin in (False, True):
        solution = solve(state, margin=margin, **options)  # type: ignore[arg-type]
        got = (solution.result, solution.margin) if margin else solution.result
        want = expected if margin else expected[0]
        if got != want:
            return f"margin={margin}: got {got}, expected {want}"
        if state.phase != OVER:
            achieved = after(state, solution.best_action, memo)
            if (achieved if margin else achieved[0]) != want:
                return f"margin={margin}: best move {solution.best_action} gets {achieved}, not {want}"
    return None


def positions(
    rows: int, cols: int, megaliths: int, left: int, count: int, seed: int, **rules: object
) -> list[GameState]:
    """Positions of random games on a custom board: every position from ``left`` megaliths
    left on, of ``count`` games (``rules``: more options of the custom board)."""
    rng = random.Random(seed)
    found = []
    for _ in range(count):
        state = GameState("custom", rows=rows, cols=cols, megaliths=megaliths, **rules)  # type: ignore[arg-type]
        while not state.is_over:
            if state.supply <= left:
                found.append(state.copy())
            state.apply(rng.choice(state.legal_actions()))
        found.append(state.copy())
    return found
