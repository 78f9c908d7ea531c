"""How well a model's value head predicts: ``carnac diagnose MODEL`` (:func:`diagnose`).

Plays ``--games`` games (seeded random openings of ``--openings`` plies, then ``--player`` for
both seats: by default the ``az`` agent over the model with ``--sims`` simulations; give another
agent, e.g. ``mcts:sims=1000``, to compare models on the same positions), asks the network for
its value at every position after the opening, and compares it with the game's final result
for the player to act:

* the squared error of the value, against the 1.0 (or so: the mean of ``z**2``) of always
  predicting 0, and against the mean result (the best constant);
* the correlation of the value with the result, over the whole game and over its first and
  second halves;
* the same correlation for the mean of ``--playouts`` random playouts from each position (the
  reference a value head should beat: it costs nothing to learn).

Nothing here needs PyTorch; a model's card (docs/training.md) quotes these numbers.
"""

from __future__ import annotations

import numpy as np

from carnac_env.agents import make
from carnac_env.agents.az import AZAgent
from carnac_env.arena.openings import random_opening
from carnac_env.batch import BatchGame
from carnac_env.batch.rng import seed_state
from carnac_env.batch.state import new_state
from carnac_env.core.boards import make_board
from carnac_env.core.game import GameState
from carnac_env.core.observation import observation_planes
from carnac_env.models import cached, model_path
from carnac_env.search.playouts import playout_value


def diagnose(
    model: str,
    board: str = "small",
    games: int = 40,
    sims: int = 64,
    openings: int = 4,
    playouts: int = 32,
    seed: int = 0,
    player: str = "",
) -> dict[str, float]:
    """The value head's statistics (see the module docstring) as a dict."""
    b = make_board(board)
    net = cached(model_path(model))
    agent = make(player, seed=seed) if player else AZAgent(sims=sims, model=model)
    values, results, phases, playout_means = [], [], [], []
    engine = BatchGame(b, num_envs=1)
    work, _ = new_state(b, 1)
    x = seed_state(seed)
    for game in range(games):
        state = GameState(b)
        for action in random_opening(b, openings, seed, game):
            state.apply(action)
        positions = []
        while not state.is_over:
            obs = observation_planes(state, state.to_act)[None]
            _, value = net.forward(obs, supply_scale=b.megaliths)
            engine.set_state(0, state)
            mean, x = playout_value(engine.kernel, 0, work, 0, playouts, x)
            x = np.uint64(x)
            positions.append((float(value[0]), state.to_act, state.placed / b.megaliths, float(mean)))
            state.apply(agent.choose(state))
        result = state.result()
        for value, player, phase, mean in positions:
            values.append(value)
            results.append(result.reward(player))
            phases.append(phase)
            playout_means.append(mean)
    v, z, p, m = (np.asarray(a, dtype=np.float64) for a in (values, results, phases, playout_means))

    def corr(a: np.ndarray, b: np.ndarray) -> float:
        return float(np.corrcoef(a, b)[0, 1]) if a.std() > 0 and b.std() > 0 else 0.0

    early, late = p < 0.5, p >= 0.5
    return {
        "positions": len(v),
        "value_mse": float(((v - z) ** 2).mean()),
        "zero_mse": float((z**2).mean()),
        "constant_mse": float(((z - z.mean()) ** 2).mean()),
        "value_corr": corr(v, z),
        "value_corr_early": corr(v[early], z[early]),
        "value_corr_late": corr(v[late], z[late]),
        "playout_corr": corr(m, z),
        "playout_corr_early": corr(m[early], z[early]),
        "playout_corr_late": corr(m[late], z[late]),
    }
