"""``mcts``: Monte Carlo tree search (UCT) with random rollouts on the rules core.

Each simulation copies the root :class:`~carnac_env.core.game.GameState`, descends the tree
by UCB1 (``mean + c * sqrt(ln N / n)``, rewards 1 win, 0.5 draw, 0 loss), expands one
untried action (chosen at random), then plays the game out at random and backs the result
up the path. Every node's statistics are kept from the point of view of the player who made
the move into it. Turns in Carnac do not strictly alternate (after a tilt the tilter places
next, after a decline the placer places again), so the backup reads the mover stored at each
node rather than flipping sides at every level.

The rollout works on the core directly: it keeps a list of the empty squares, places on a
random one with a random orientation, answers a pending megalith with a uniform choice among
its legal tilts and declining (drawn by rejection, without building the legal list), applies
moves with ``GameState.apply_unchecked`` and scores the end with the core's ``result()``.

Options (spec ``mcts:sims=800:c=1.4``):

* ``sims``: simulations per move (default 2000);
* ``seconds``: a time budget per move instead (overrides ``sims``; not reproducible);
* ``c``: the UCB exploration constant (default 1.0);
* ``width``: if > 0, only the ``width`` best root actions by the greedy agent's values
  (:func:`carnac_env.agents.greedy.action_values`) are searched (default 8; 0: all legal
  actions, plain UCT);
* ``rollout``: ``random`` (default), ``own`` (random, but every placement shows the
  placer's colour on top) or ``eval`` (no playout: the greedy evaluation of the leaf,
  squashed to a win probability).

With a ``sims`` budget the agent is deterministic for a given seed.
"""

from __future__ import annotations

import math
import random
import time

import numpy as np

from carnac_env.agents.base import SearchAgent, register
from carnac_env.core.game import OVER, PLACE, GameState
from carnac_env.errors import CarnacError

#: Nodes with more children than this select with numpy; fewer, with a Python loop.
_NUMPY_FROM = 24


class _Node:
    """A tree node: the position after ``action`` was played by ``mover``."""

    __slots__ = ("actions", "children", "mover", "n", "untried", "visits", "w")

    def __init__(self, mover: int, actions: list[int]) -> None:
        self.mover = mover
        self.actions = actions
        self.children: list[_Node | None] = [None] * len(actions)
        self.untried = list(range(len(actions)))
        self.visits = 0
        # per child: visits and total reward (for the child's mover)
        if len(actions) > _NUMPY_FROM:
            self.n = np.zeros(len(actions))
            self.w = np.zeros(len(actions))
        else:
            self.n = [0.0] * len(actions)
            self.w = [0.0] * len(actions)


def rollout(state: GameState, rng: random.Random, own_on_top: bool = False) -> int | None:
    """Play ``state`` out at random (changing it) and return the winner (0, 1 or None).

    With ``own_on_top`` every placement shows the placer's own colour on top (orientation
    0 or 2), a cheap bias towards sensible play; otherwise all 4 orientations are equally likely.
    """
    orientations = 2 if own_on_top else 4
    rand = rng.random
    kinds = state.kinds
    empties = [s for s in range(state.board.squares) if not kinds[s]]
    base = state.board.squares * 4
    tilt_squares = state.board.tilt_squares
    apply = state.apply_unchecked
    while state.phase != OVER:
        if state.phase == PLACE:
            i = int(rand() * len(empties))
            square = empties[i]
            empties[i] = empties[-1]
            empties.pop()
            apply(square * 4 + (int(rand() * 4) if orientations == 4 else 2 * int(rand() * 2)))
            continue
        # a uniform choice among the legal tilts and declining, by rejection: draw one of the
        # 5 responses until it is legal (a tilt needs both squares it would cover empty)
        origin = state.pending
        while True:
            choice = int(rand() * 5)
            if choice == 4:
                apply(base + 4)
                break
            pair = tilt_squares[origin][choice]
            if pair is not None and not kinds[pair[0]] and not kinds[pair[1]]:
                apply(base + choice)
                empties.remove(pair[0])
                empties.remove(pair[1])
                empties.append(origin)
                break
    return state.result().winner


class MCTSAgent(SearchAgent):
    """UCT with random rollouts; see the module docstring for the options."""

    name = "mcts"

    def __init__(
        self,
        seed: int = 0,
        sims: int = 2000,
        seconds: float = 0.0,
        c: float = 1.0,
        width: int = 8,
        rollout: str = "random",
    ) -> None:
        super().__init__(seed)
        if sims < 1:
            raise CarnacError(f"mcts option sims={sims} must be at least 1")
        if seconds < 0:
            raise CarnacError(f"mcts option seconds={seconds} must be >= 0 (0: use sims)")
        if c < 0:
            raise CarnacError(f"mcts option c={c} must be >= 0")
        if width < 0:
            raise CarnacError(f"mcts option width={width} must be >= 0 (0: search every action)")
        if rollout not in ("random", "own", "eval"):
            raise CarnacError(f"mcts option rollout={rollout!r} must be 'random', 'own' or 'eval'")
        self.rollout = rollout
        self.sims = int(sims)
        self.seconds = float(seconds)
        self.c = float(c)
        self.width = int(width)
        #: Simulations run by the last call of :meth:`choose` (for benchmarks).
        self.last_sims = 0

    @property
    def spec(self) -> str:
        """The spec string that builds this agent again."""
        budget = f"seconds={self.seconds:g}" if self.seconds else f"sims={self.sims}"
        extra = (f":c={self.c:g}" if self.c != 1.0 else "") + (f":width={self.width}" if self.width != 8 else "")
        extra += f":rollout={self.rollout}" if self.rollout != "random" else ""
        return f"mcts:{budget}{extra}"

    def root_actions(self, state: GameState) -> list[int]:
        """The actions searched at the root: all legal ones, or the ``width`` best by greedy."""
        legal = state.legal_actions()
        if not self.width or len(legal) <= self.width:
            return legal
        from carnac_env.agents.greedy import action_values

        ranked = sorted(action_values(state), key=lambda va: (-va[0], va[1]))
        return [a for _, a in ranked[: self.width]]

    def choose(self, state: GameState) -> int:
        """The most visited root action after the search (ties: higher mean, then lower action)."""
        root = _Node(-1, self.root_actions(state))
        if len(root.actions) == 1:
            self.last_sims = 0
            return root.actions[0]
        rng = self.rng
        rand = rng.random
        c = self.c
        sqrt, log = math.sqrt, math.log
        deadline = time.perf_counter() + self.seconds if self.seconds else None
        sims = 0
        use_eval = self.rollout == "eval"
        own_on_top = self.rollout == "own"
        if use_eval:
            from carnac_env.agents.greedy import evaluate
        while True:
            if deadline is None:
                if sims >= self.sims:
                    break
            elif sims & 15 == 0 and sims and time.perf_counter() >= deadline:
                break
            sims += 1
            game = state.copy()
            node = root
            steps = []  # (parent, child index) along the path
            # selection and expansion
            while True:
                untried = node.untried
                if untried:
                    i = int(rand() * len(untried))
                    index = untried[i]
                    untried[i] = untried[-1]
                    untried.pop()
                    mover = game.to_act
                    game.apply_unchecked(node.actions[index])
                    node.children[index] = _Node(mover, game.legal_actions())
                    steps.append((node, index))
                    break
                if not node.actions:  # a finished game
                    break
                ns, ws = node.n, node.w
                scale = c * c * log(node.visits)
                if isinstance(ns, np.ndarray):
                    index = int(np.argmax(ws / ns + np.sqrt(scale / ns)))
                else:
                    best = -1.0
                    index = 0
                    for j in range(len(ns)):
                        value = ws[j] / ns[j] + sqrt(scale / ns[j])
                        if value > best:
                            best = value
                            index = j
                game.apply_unchecked(node.actions[index])
                steps.append((node, index))
                node = node.children[index]
            node.visits += 1
            if use_eval:
                # value for Red in [0, 1] from the static evaluation
                red = 1.0 / (1.0 + math.exp(-evaluate(game, 0) / 100.0))
                for parent, index in steps:
                    parent.visits += 1
                    parent.n[index] += 1
                    parent.w[index] += red if parent.children[index].mover == 0 else 1.0 - red
                continue
            winner = rollout(game, rng, own_on_top) if game.phase != OVER else game.result().winner
            # backup: each child's statistics score the result for the player who moved into it
            for parent, index in steps:
                parent.visits += 1
                parent.n[index] += 1
                if winner is None:
                    parent.w[index] += 0.5
                elif winner == parent.children[index].mover:
                    parent.w[index] += 1.0
        self.last_sims = sims
        counts = [float(x) for x in root.n]
        means = [float(w) / n if n else 0.0 for w, n in zip(root.w, root.n)]
        best = max(range(len(counts)), key=lambda j: (counts[j], means[j], -root.actions[j]))
        return root.actions[best]


register(
    "mcts",
    MCTSAgent,
    {
        "sims": (int, 2000, "simulations per move"),
        "seconds": (float, 0.0, "seconds per move instead of sims"),
        "c": (float, 1.0, "UCB exploration constant"),
        "width": (int, 8, "search only the N best root actions by greedy's values; 0 all"),
        "rollout": (str, "random", "random playouts; 'own': own colour on top; 'eval': greedy evaluation of the leaf"),
    },
    "UCT with random rollouts on the rules core",
)
