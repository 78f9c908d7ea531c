"""Game generation for training: greedy bootstrap games and PUCT self-play, on the batched engine.

Both play ``G`` games at once in a :class:`~carnac_env.batch.BatchGame` until each has
finished once (a finished game's slot is frozen with ``active``). Each move, every unfinished
game's position is read from the engine (``get_state``), a policy target is computed for it,
an action is drawn, and all the actions are played in one ``step``. The observations stored
for training are the engine's own (the player to act's planes).

* :func:`greedy_games` (bootstrap): the target is a softmax of the ``greedy`` agent's action
  values (:func:`carnac_env.agents.greedy.action_values`) divided by a temperature; moves are
  drawn from it. A network distilled from it starts near greedy's play instead of at random.
* :func:`selfplay_games`: PUCT search with the current network (numpy inference, all games'
  leaves evaluated in one batch per simulation, :func:`carnac_env.agents.az.run_search`),
  Dirichlet noise at the root; the target is the root's visit distribution; moves are drawn
  from it for the first ``temperature_moves`` moves of a game, then the most visited is played.

Every sample's value target is the final result for the player who was to act (+1, 0, -1).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from carnac_env.agents.az import Node, PolicyValueNet, best_action, run_search
from carnac_env.agents.greedy import action_values
from carnac_env.batch import BatchGame
from carnac_env.core.boards import Board


@dataclass
class Samples:
    """Training positions: observations, legal masks, policy targets and value targets."""

    observations: np.ndarray  # (K, rows, cols, 9) int8
    masks: np.ndarray  # (K, A) bool
    policies: np.ndarray  # (K, A) float32, sums to 1 over legal actions
    values: np.ndarray  # (K,) float32, the result for the player to act

    def __len__(self) -> int:
        return len(self.values)


def _play(board: Board, games: int, choose, rng: np.random.Generator) -> tuple[Samples, dict[str, int]]:
    """Play ``games`` games to the end, ``choose(states, move_numbers, rng) -> (targets, actions)``."""
    engine = BatchGame(board, num_envs=games, seed=int(rng.integers(2**31)))
    step = engine.reset()
    active = np.ones(games, dtype=bool)
    moves = np.zeros(games, dtype=np.int64)
    records: list[list[tuple[np.ndarray, np.ndarray, np.ndarray, int]]] = [[] for _ in range(games)]
    results = np.zeros((games, 2), dtype=np.float32)
    num_actions = board.num_actions
    while active.any():
        envs = np.flatnonzero(active)
        states = [engine.get_state(int(i)) for i in envs]
        targets, chosen = choose(states, moves[envs], rng)
        actions = np.zeros(games, dtype=np.int64)
        for i, state, target, action in zip(envs, states, targets, chosen):
            policy = np.zeros(num_actions, dtype=np.float32)
            policy[state.legal_actions()] = target
            records[i].append((step.observation[i], step.action_mask[i], policy, state.to_act))
            actions[i] = action
        moves[envs] += 1
        step = engine.step(actions, active=active)
        for i in np.flatnonzero(step.terminated):
            results[i] = step.rewards[i]
            active[i] = False
    rows = [(o, m, p, results[i, player]) for i in range(games) for o, m, p, player in records[i]]
    samples = Samples(
        np.stack([r[0] for r in rows]),
        np.stack([r[1] for r in rows]).astype(bool),
        np.stack([r[2] for r in rows]),
        np.asarray([r[3] for r in rows], dtype=np.float32),
    )
    stats = {
        "games": games,
        "positions": len(rows),
        "red_wins": int((results[:, 0] > 0).sum()),
        "white_wins": int((results[:, 1] > 0).sum()),
    }
    return samples, stats


def greedy_games(
    board: Board, games: int, rng: np.random.Generator, temperature: float = 8.0
) -> tuple[Samples, dict[str, int]]:
    """Bootstrap games: moves and targets from a softmax of greedy's values (see the module docstring)."""

    def choose(states, move_numbers, rng):
        targets, actions = [], []
        for state in states:
            values = dict((a, v) for v, a in action_values(state))
            legal = state.legal_actions()
            v = np.asarray([values[a] for a in legal], dtype=np.float64) / temperature
            p = np.exp(v - v.max())
            p /= p.sum()
            targets.append(p)
            actions.append(legal[int(rng.choice(len(legal), p=p))])
        return targets, actions

    return _play(board, games, choose, rng)


def selfplay_games(
    board: Board,
    net: PolicyValueNet,
    games: int,
    sims: int,
    rng: np.random.Generator,
    c: float = 1.5,
    dirichlet: float = 0.3,
    noise_fraction: float = 0.25,
    temperature_moves: int = 8,
) -> tuple[Samples, dict[str, int]]:
    """Self-play games with PUCT over ``net`` (see the module docstring)."""

    def noise(root: Node) -> None:
        if len(root.actions) > 1:
            eta = rng.dirichlet([dirichlet] * len(root.actions))
            root.prior = (1 - noise_fraction) * root.prior + noise_fraction * eta

    def choose(states, move_numbers, rng):
        roots = [Node(state) for state in states]
        run_search(roots, net.evaluate, sims, c, noise=noise)
        targets, actions = [], []
        for root, move in zip(roots, move_numbers):
            visits = root.n if root.n.sum() > 0 else root.prior
            target = visits / visits.sum()
            targets.append(target)
            if move < temperature_moves:
                actions.append(root.actions[int(rng.choice(len(root.actions), p=target))])
            else:
                actions.append(best_action(root))
        return targets, actions

    return _play(board, games, choose, rng)
