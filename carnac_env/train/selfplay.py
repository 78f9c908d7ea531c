"""Game generation for training: greedy bootstrap games and self-play, on the batched engine.

Both play ``G`` games at once in a :class:`~carnac_env.batch.BatchGame` until each has
finished once (a finished game's slot is frozen with ``active``). Each game opens with a
seeded number of uniformly random moves (0 to ``openings``, drawn per game, not recorded), so
that the games of an iteration, and of a run, differ. Then every move, a policy target is
computed for each unfinished game, an action is chosen, and all games move in one ``step``.
The observations stored for training are the engine's own (the player to act's planes).

* :func:`greedy_games` (bootstrap): the target is a softmax of the ``greedy`` agent's action
  values (:func:`carnac_env.agents.greedy.engine_action_values`, compiled, on the engine's
  slots) divided by a temperature; moves are drawn from it. A network distilled from it starts
  near greedy's play instead of at random.
* :func:`selfplay_games`: one :class:`~carnac_env.search.Search` over all the games (one tree
  per game; all trees' leaves evaluated in one network batch per simulation), straight from
  the engine's slots: no ``GameState`` is built.

  - ``rule="gumbel"``: Gumbel MuZero. Sequential halving over the ``considered`` best root
    actions by ``gumbel noise + logit``; the target is the improved policy
    ``softmax(logit + sigma(completed q))`` over every legal action (so actions the search
    never visited still get a sensible target); for the first ``temperature_moves`` moves the
    game plays the action sequential halving ends on (noise included: a sample without
    replacement), then the best of the improved policy.
  - ``rule="puct"``: AlphaZero. PUCT with Dirichlet noise (0.3, a quarter of the prior) at the
    root; the target is the visit distribution; moves drawn from it for the first
    ``temperature_moves`` moves, then the most visited.

Every sample carries three value targets for the player to act: the game's result ``z`` (+1, 0,
-1), the search's value of the position ``q`` (for bootstrap games: ``z``), and, with
``playouts`` > 0, the mean result of that many compiled random playouts from it (else 0); the
ownership target: what each square shows at the end of the game (0 the player's colour, 1
the opponent's, 2 empty); and the dolmen target: how many dolmens the player and the opponent
have at the end. The trainer mixes the value targets.

A shard may carry a board of its own (:attr:`Shard.board`, for a run on a mix of boards,
:mod:`carnac_env.train.mix`); then it is played there instead of on the board it is given.

An iteration's games may be split into *shards* (:class:`Shard`, :func:`play_shard`), each
played with a generator of its own seed, so that they can run in other processes or on Ray
(:mod:`carnac_env.train.workers`); :func:`merge` joins their samples in shard order. Nothing
here needs PyTorch: the workers import this module, not the learner's.
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass, fields

import numpy as np

from carnac_env import _checks
from carnac_env.agents.greedy import engine_action_values
from carnac_env.batch import BatchGame
from carnac_env.batch.rng import seed_state
from carnac_env.batch.state import new_state
from carnac_env.core.boards import Board, make_board
from carnac_env.core.observation import OPPONENT, OWN
from carnac_env.core.scoring import dolmen_sizes
from carnac_env.errors import CarnacError
from carnac_env.models import PolicyValueNet
from carnac_env.search import PUCT, Gumbel, Network, Search
from carnac_env.search.playouts import playout_value
from carnac_env.train.config import SELFPLAY_BACKENDS

#: Ownership target values.
OWNED, OPPOSED, UNCOVERED = 0, 1, 2


@dataclass
class Samples:
    """Training positions (one row per position) and their targets."""

    observations: np.ndarray  # (K, rows, cols, 9) int8
    masks: np.ndarray  # (K, A) bool
    policies: np.ndarray  # (K, A) float32, sums to 1 over legal actions
    values: np.ndarray  # (K,) float32, the game's result for the player to act
    search_values: np.ndarray  # (K,) float32, the search's value of the position (bootstrap: the result)
    playout_values: np.ndarray  # (K,) float32, mean result of random playouts (0 without)
    ownership: np.ndarray  # (K, squares) int8, OWNED / OPPOSED / UNCOVERED at the end
    dolmens: np.ndarray  # (K, 2) int16, the player's and the opponent's dolmens at the end

    def __len__(self) -> int:
        return len(self.values)

    def rows(self, index: np.ndarray | slice) -> Samples:
        """The samples at ``index`` (a copy)."""
        return Samples(*(np.array(getattr(self, f.name)[index]) for f in fields(self)))

    @classmethod
    def concatenate(cls, parts: list[Samples]) -> Samples:
        """The rows of ``parts``, in order."""
        return cls(*(np.concatenate([getattr(p, f.name) for p in parts]) for f in fields(cls)))


@dataclass(frozen=True)
class Shard:
    """A share of an iteration's games: what a worker needs besides the board and the network.

    ``kind`` is ``"greedy"`` (bootstrap games with ``temperature``) or ``"selfplay"`` (search
    with the other settings); ``seed`` seeds the shard's own generator.
    """

    kind: str
    games: int
    seed: int
    #: The board's rules (:meth:`~carnac_env.core.boards.Board.rules`, with ``name``) when the
    #: shard is played on a board of its own; None: on the board it is given.
    board: tuple[tuple[str, object], ...] | None = None
    temperature: float = 8.0
    sims: int = 32
    c: float = 1.5
    temperature_moves: int = 8
    rule: str = "gumbel"
    considered: int = 16
    openings: int = 0
    playouts: int = 0
    #: :data:`~carnac_env.train.config.SELFPLAY_BACKENDS`: how the search evaluates the network.
    backend: str = "numpy"


class _Game:
    """One game's rows while it is played."""

    __slots__ = ("opening", "rows")

    def __init__(self, opening: int) -> None:
        self.opening = opening
        self.rows: list[tuple[np.ndarray, np.ndarray, np.ndarray, int, float, float]] = []


def _play(board: Board, games: int, choose, rng: np.random.Generator, shard: Shard) -> tuple[Samples, dict[str, int]]:
    """Play ``games`` games to the end; ``choose(engine, envs, moves) -> (targets, actions,
    values)`` gives, for the games in ``envs`` past their openings, a dense policy target,
    the action and the search's value."""
    engine = BatchGame(board, num_envs=games, seed=int(rng.integers(2**31)))
    step = engine.reset()
    active = np.ones(games, dtype=bool)
    moves = np.zeros(games, dtype=np.int64)
    record = [_Game(int(rng.integers(shard.openings + 1))) for _ in range(games)]
    results = np.zeros((games, 2), dtype=np.float32)
    finals = np.zeros((games, board.squares), dtype=np.int8)
    playouts = _Playouts(board, games, int(rng.integers(2**63)), shard.playouts)
    while active.any():
        envs = np.flatnonzero(active)
        opening = np.asarray([moves[i] < record[i].opening for i in envs], dtype=bool)
        actions = np.zeros(games, dtype=np.int64)
        if opening.any():
            actions[envs[opening]] = engine.sample_actions()[envs[opening]]
        searched = envs[~opening]
        if len(searched):
            targets, chosen, values = choose(engine, searched, moves[searched])
            mean_playouts = playouts.values(engine, searched)
            for k, i in enumerate(searched):
                record[i].rows.append(
                    (
                        step.observation[i],
                        step.action_mask[i],
                        targets[k],
                        int(step.current_player[i]),
                        float(values[k]),
                        float(mean_playouts[k]),
                    )
                )
                actions[i] = chosen[k]
        moves[envs] += 1
        step = engine.step(actions, active=active, final_observer=0)
        for i in np.flatnonzero(step.terminated):
            results[i] = step.rewards[i]
            seen = step.final_observation[i].reshape(board.squares, -1)
            finals[i] = np.where(seen[:, OWN] == 1, 0, np.where(seen[:, OPPONENT] == 1, 1, 2))
            active[i] = False
    counts = np.zeros((games, 2), dtype=np.int16)  # red's and white's dolmens
    for i in range(games):
        cells = np.where(finals[i] == 0, 1, np.where(finals[i] == 1, 2, 0)).tolist()
        counts[i] = (len(dolmen_sizes(board, cells, 1)), len(dolmen_sizes(board, cells, 2)))
    samples = _samples(board, record, results, finals, counts)
    stats = {
        "games": games,
        "positions": len(samples),
        "red_wins": int((results[:, 0] > 0).sum()),
        "white_wins": int((results[:, 1] > 0).sum()),
    }
    return samples, stats


def _samples(board: Board, record: list[_Game], results: np.ndarray, finals: np.ndarray, counts: np.ndarray) -> Samples:
    rows = [(i, row) for i, game in enumerate(record) for row in game.rows]
    if not rows:
        a = board.num_actions
        empty = np.zeros(0, np.float32)
        return Samples(
            np.zeros((0, board.rows, board.cols, 9), np.int8),
            np.zeros((0, a), bool),
            np.zeros((0, a), np.float32),
            empty,
            empty,
            empty,
            np.zeros((0, board.squares), np.int8),
            np.zeros((0, 2), np.int16),
        )
    players = np.asarray([row[3] for _, row in rows])
    games = np.asarray([i for i, _ in rows])
    red_view = finals[games]  # 0 red, 1 white, 2 empty
    own = np.where(red_view == 2, UNCOVERED, np.where(red_view == players[:, None], OWNED, OPPOSED))
    return Samples(
        observations=np.stack([row[0] for _, row in rows]),
        masks=np.stack([row[1] for _, row in rows]).astype(bool),
        policies=np.stack([row[2] for _, row in rows]).astype(np.float32),
        values=results[games, players].astype(np.float32),
        search_values=np.asarray([row[4] for _, row in rows], dtype=np.float32),
        playout_values=np.asarray([row[5] for _, row in rows], dtype=np.float32),
        ownership=own.astype(np.int8),
        dolmens=np.where(players[:, None] == 0, counts[games], counts[games][:, ::-1]).astype(np.int16),
    )


class _Playouts:
    """The playout value target: the mean of ``count`` compiled random playouts from a game."""

    def __init__(self, board: Board, games: int, seed: int, count: int) -> None:
        self.count = count
        self.work, _ = new_state(board, 1)
        self.state = seed_state(seed)

    def values(self, engine: BatchGame, envs: np.ndarray) -> np.ndarray:
        out = np.zeros(len(envs), dtype=np.float32)
        if self.count:
            for k, i in enumerate(envs):
                out[k], state = playout_value(engine.kernel, int(i), self.work, 0, self.count, self.state)
                self.state = np.uint64(state)
        return out


def greedy_games(board: Board, shard: Shard, rng: np.random.Generator) -> tuple[Samples, dict[str, int]]:
    """Bootstrap games: moves and targets from a softmax of greedy's values (see the module docstring)."""
    num_actions = board.num_actions

    def choose(engine: BatchGame, envs: np.ndarray, moves: np.ndarray):
        targets, actions = [], []
        for i in envs:
            legal_values = sorted((a, v) for v, a in engine_action_values(engine, int(i)))
            legal = np.asarray([a for a, _ in legal_values])
            v = np.asarray([v for _, v in legal_values], dtype=np.float64) / shard.temperature
            p = np.exp(v - v.max())
            p /= p.sum()
            target = np.zeros(num_actions, dtype=np.float32)
            target[legal] = p
            targets.append(target)
            actions.append(int(legal[int(rng.choice(len(legal), p=p))]))
        return targets, actions, np.full(len(envs), np.nan)

    samples, stats = _play(board, shard.games, choose, rng, shard)
    samples.search_values[:] = samples.values  # no search: the result stands in
    return samples, stats


def selfplay_network(net: PolicyValueNet, backend: str = "numpy") -> PolicyValueNet:
    """``net`` computing with Winograd convolutions (a copy; ``net`` is left as it is), or with
    ``backend="onnx-int8"`` its onnxruntime int8 twin (:class:`~carnac_env.models.onnx_runtime.OnnxNet`).

    Self-play spends 95% of its time in the network. Winograd F(2x2, 3x3) makes it about 1.5
    times as fast from batch 8 up, as accurate in float32 but rounded differently from the
    definition (up to about 3e-7 of each output), which no training target notices; the agents
    keep the default convolution, equal to the definition (see :mod:`carnac_env.models.network`).
    The int8 graph is about 1.6x as fast again but not equal to the network (logits off by up
    to about 1; docs/training.md, "Faster CPU inference").

    Raises:
        CarnacError: an unknown backend, or onnx-int8 without onnx and onnxruntime installed.
    """
    if _checks.choice("self-play backend", backend, SELFPLAY_BACKENDS) == "onnx-int8":
        from carnac_env.models.onnx_runtime import OnnxNet

        return OnnxNet(selfplay_network(net), "int8")  # type: ignore[return-value]
    if net.convolution == "winograd":
        return net
    fast = copy.copy(net)
    fast.convolution = "winograd"
    return fast


def selfplay_games(
    board: Board, net: PolicyValueNet, shard: Shard, rng: np.random.Generator
) -> tuple[Samples, dict[str, int]]:
    """Self-play games with one search over all of them (see the module docstring)."""
    num_actions = board.num_actions
    if shard.rule == "gumbel":
        rule, dirichlet = Gumbel(shard.considered, noise=True), None
    elif shard.rule == "puct":
        rule, dirichlet = PUCT(shard.c), (0.3, 0.25)
    else:
        raise CarnacError(f"unknown self-play rule {shard.rule!r}; expected 'gumbel' or 'puct'")
    search = Search(
        board,
        Network(selfplay_network(net, shard.backend)),
        rule,
        trees=shard.games,
        seed=int(rng.integers(2**63)),
        dirichlet=dirichlet,
    )

    def choose(engine: BatchGame, envs: np.ndarray, moves: np.ndarray):
        search.set_roots(engine.kernel, envs)
        search.run(shard.sims)
        targets = np.zeros((len(envs), num_actions), dtype=np.float32)
        actions = np.zeros(len(envs), dtype=np.int64)
        values = np.zeros(len(envs), dtype=np.float64)
        for t, move in enumerate(moves):
            legal, policy = search.policy(t)
            targets[t, legal] = policy
            values[t] = search.root_value(t)
            if shard.rule == "gumbel":
                actions[t] = (
                    search.gumbel_action(t) if move < shard.temperature_moves else legal[int(np.argmax(policy))]
                )
            elif move < shard.temperature_moves:
                actions[t] = legal[int(rng.choice(len(legal), p=policy / policy.sum()))]
            else:
                actions[t] = search.best_action(t)
        return targets, actions, values

    return _play(board, shard.games, choose, rng, shard)


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
    board = shard_board(shard, board)
    if shard.kind == "greedy":
        return greedy_games(board, shard, rng)
    if shard.kind == "selfplay":
        if net is None:
            raise CarnacError("a self-play shard needs the network; got none")
        return selfplay_games(board, net, shard, rng)
    raise CarnacError(f"unknown kind of shard {shard.kind!r}; expected 'greedy' or 'selfplay'")


def board_rules(board: Board) -> tuple[tuple[str, object], ...]:
    """``board`` as a :attr:`Shard.board` value (its name and rules)."""
    return (("name", board.name), *board.rules().items())


def shard_board(shard: Shard, board: Board) -> Board:
    """The board ``shard`` is played on: its own (:attr:`Shard.board`), else ``board``."""
    if shard.board is None:
        return board
    rules = dict(shard.board)
    name = rules.pop("name")
    return make_board(name, **rules)


def timed_shard(board: Board, shard: Shard, net: PolicyValueNet | None = None) -> tuple[Samples, dict[str, int], float]:
    """:func:`play_shard` with its own generator, plus the CPU seconds it took in this process
    (what a worker sends back)."""
    start = time.process_time()
    samples, stats = play_shard(board, shard, net)
    return samples, stats, time.process_time() - start


def merge(results: list[tuple[Samples, dict[str, int]]]) -> tuple[Samples, dict[str, int]]:
    """The shards' samples concatenated in the order given, and their statistics summed."""
    samples = Samples.concatenate([s for s, _ in results])
    stats = {key: sum(st[key] for _, st in results) for key in results[0][1]}
    return samples, stats
