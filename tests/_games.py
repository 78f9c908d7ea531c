"""Games the tests play: random legal games as records."""

from __future__ import annotations

import numpy as np

from carnac_env.core.game import GameState
from carnac_env.core.record import GameRecord


def random_game(board: str = "petit_menec", seed: int = 1) -> GameRecord:
    """A random legal game on ``board`` (uniform over the legal moves, seeded), both seats ``random``."""
    rng = np.random.default_rng(seed)
    state = GameState(board)
    actions = []
    while not state.is_over:
        legal = state.legal_actions()
        actions.append(int(legal[rng.integers(len(legal))]))
        state.apply(actions[-1])
    return GameRecord.from_actions(state.board, actions, meta={"agents": ["random", "random"]})
