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

An iteration's games may be split into *shards* (:class:`Shard`, :func:`play_shard`), each
played with a generator of its own seed, so that they can run in other processes or on Ray
(:mod:`carnac_env.train.workers`); :func:`merge` joins their samples in shard order. Nothing
here needs PyTorch: the workers import this module, not the learner's.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from carnac_env.agents.az import Node, PolicyValueNet, best_action, run_search
from carnac_env.agents.greedy import action_values
from carnac_env.batch import BatchGame
from carnac_env.core.boards import Board
from carnac_env.errors import CarnacError


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


@dataclass(frozen=True)
class Shard:
    """A share of an iteration's games: what a worker needs besides the board and the network.

    ``kind`` is ``"greedy"`` (bootstrap games with ``temperature``) or ``"selfplay"`` (PUCT with
    ``sims``, ``c`` and ``temperature_moves``); ``seed`` seeds the shard's own generator.
    """

    kind: str
    games: int
    seed: int
    temperature: float = 8.0
    sims: int = 32
    c: float = 1.5
    temperature_moves: int = 8


def split_games(games: int, shards: int) -> list[int]:
    """``games`` shared by ``shards`` shards: ``games // shards`` each, the first ``games % shards``
    one more (so the split depends only on the two numbers)."""
    share, extra = divmod(games, shards)
    return [share + (i < extra) for i in range(shards)]


def play_shard(
    board: Board, shard: Shard, net: PolicyValueNet | None = None, rng: np.random.Generator | None = None
) -> tuple[Samples, dict[str, int]]:
    """Play ``shard``'s games (:func:`greedy_games` or :func:`selfplay_games`, which needs ``net``)
    with ``rng``, or by default with a new generator seeded with ``shard.seed``."""
    if rng is None:
        rng = np.random.default_rng(shard.seed)
    if shard.kind == "greedy":
        return greedy_games(board, shard.games, rng, shard.temperature)
    if shard.kind == "selfplay":
        if net is None:
            raise CarnacError("a self-play shard needs the network; got none")
        return selfplay_games(
            board, net, shard.games, shard.sims, rng, shard.c, temperature_moves=shard.temperature_moves
        )
    raise CarnacError(f"unknown kind of shard {shard.kind!r}; expected 'greedy' or 'selfplay'")


def timed_shard(board: Board, shard: Shard, net: PolicyValueNet | None = None) -> tuple[Samples, dict[str, int], float]:
    """:func:`play_shard` with its own generator, plus the CPU seconds it took in this process
    (what a worker sends back)."""
    start = time.process_time()
    samples, stats = play_shard(board, shard, net)
    return samples, stats, time.process_time() - start


def merge(results: list[tuple[Samples, dict[str, int]]]) -> tuple[Samples, dict[str, int]]:
    """The shards' samples concatenated in the order given, and their statistics summed."""
    samples = Samples(
        *(
            np.concatenate([getattr(s, name) for s, _ in results])
            for name in ("observations", "masks", "policies", "values")
        )
    )
    stats = {key: sum(st[key] for _, st in results) for key in results[0][1]}
    return samples, stats
