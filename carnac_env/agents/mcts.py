"""``mcts``: Monte Carlo tree search on the rules core, in three parts (OpenSpiel's shape).

* :class:`Node`: one position in the tree. A node that has been *expanded* knows the
  player to act there (``player``), its actions and, per action (per *edge*), the visit
  count ``n`` and the total value ``w``, both from the view of ``player``, who chooses
  that action. Children are created when first visited.
* A **tree policy** picks the edge to follow at an expanded node: :class:`UCT` (UCB1; the
  untried actions first, in a random order) or :class:`PUCT` (AlphaZero's rule, led by
  the evaluator's priors). Any object with ``select(node, rng) -> index`` and a
  ``uses_priors`` attribute plugs in.
* An **evaluator** values the position at a new leaf: :class:`RandomRollout` (one random
  playout in Python), :class:`CompiledRollout` (one random playout in the batched engine's
  compiled kernel, :func:`carnac_env.batch.random_playout`), :class:`GreedyValue` (the
  greedy agent's static evaluation, squashed), or a network.

The evaluator interface
-----------------------
An evaluator is any object with::

    def evaluate(self, state: GameState, rng: random.Random) -> Evaluation: ...

``state`` is a position that is not over, and it is the simulation's own copy: the
evaluator may change it (a rollout plays it to the end). ``rng`` is the agent's seeded
generator; draw every random number from it (or seed from it) so that a ``sims`` budget
stays deterministic. It returns ``Evaluation(value, priors)``:

* ``value``: the expected result in ``[-1, 1]`` (1 win, 0 draw, -1 loss) **for
  ``state.to_act``, the player to act in the given state** (read ``to_act`` before changing
  the state);
* ``priors``: ``None``, or a sequence indexed by action number (length
  ``board.num_actions``, e.g. a masked softmax of a policy head); only the entries of the
  legal actions are read, and they are renormalised over them. :class:`PUCT` uses them when
  the leaf is expanded; :class:`UCT` ignores them.

A policy-value network plugs in as ``MCTSAgent(evaluator=MyNet(), policy=PUCT(c=1.5),
width=0)``, or through :class:`Search` directly.

Turn order
----------
Turns in Carnac do not alternate strictly: after a tilt the tilter places next, and after a
decline the placer places again, so the same player may act twice in a row. The search
never assumes alternation. Every value is relative to a named player (the leaf's
``to_act``), and :func:`backup` adds it to each edge on the path with the sign of the
player who chose that edge (``node.player``). That is the only place where sides are
taken.

Tree reuse
----------
After a move the agent keeps its tree and the position it searched. At its next turn it
looks for the new position among the expanded nodes below the old root (the moves played
in between: its own move, then the opponent's tilt, decline or placements), comparing game
states, and continues from that subtree with its visit counts. A position that is not
found (another game, a reset, a move the tree never tried) starts a fresh tree. The
search is deterministic per seed either way: the tree depends only on the seed and the
moves of the game. ``sims`` counts only the new simulations of a move.

Options (spec ``mcts:sims=800:c=1.4``), each a value or an object, mapped to objects in
:data:`ROLLOUTS` and :meth:`MCTSAgent.__init__` only:

* ``sims``: new simulations per move (default 5000);
* ``seconds``: a time budget per move instead (overrides ``sims``; not reproducible);
* ``c``: the UCT exploration constant, on the scale of scores 1 win, 0.5 draw, 0 loss
  (default 1.0);
* ``width``: if > 0, only the ``width`` best root actions by the greedy agent's values
  (:func:`carnac_env.agents.greedy.action_values`) are searched (default 8; 0: all legal
  actions, plain UCT);
* ``rollout``: the leaf evaluator: ``random`` (default: :class:`CompiledRollout`, or
  :class:`RandomRollout` where the compiled kernel is missing), ``python``
  (:class:`RandomRollout`), ``own`` (random, but every placement shows the placer's colour
  on top) or ``eval`` (:class:`GreedyValue`);
* ``reuse``: keep the tree between moves (default true).

With a ``sims`` budget the agent is deterministic for a given seed.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, Protocol

import numpy as np

from carnac_env.agents.base import SearchAgent, register
from carnac_env.core.actions import PLACE as PLACE_MOVE
from carnac_env.core.actions import decline_action, decode, place_number, tilt_action
from carnac_env.core.game import OVER, PLACE, STANDING, GameState
from carnac_env.errors import CarnacError

#: Nodes with more actions than this keep their edge statistics in numpy arrays.
_NUMPY_FROM = 24


# --------------------------------------------------------------------------- the tree
class Node:
    """A position in the search tree.

    ``actions`` is ``None`` until the node is expanded; then ``state`` is its position (kept
    so that simulations descend without replaying moves), ``player`` the player to act there,
    and ``n[i]``, ``w[i]`` are the visits and total value (in [-1, 1] per visit, from
    ``player``'s view) of the edge ``actions[i]``, whose child is ``children[i]`` (``None``
    until visited). A child is expanded on its second visit. ``visits`` counts the
    simulations through this node. ``untried`` holds the indices of edges never followed;
    ``priors`` the evaluator's priors (by action number) when it gave any, ``edge_priors``
    those of the node's actions. ``winner`` caches the result of a finished game (0, 1, or
    -1 for a draw).
    """

    __slots__ = (
        "actions",
        "children",
        "edge_priors",
        "n",
        "player",
        "priors",
        "state",
        "untried",
        "visits",
        "w",
        "winner",
    )

    def __init__(self) -> None:
        self.actions: list[int] | None = None
        self.state: GameState | None = None
        self.player = -1
        self.children: list[Node | None] = []
        self.n: Any = []
        self.w: Any = []
        self.untried: list[int] = []
        self.visits = 0
        self.priors: Sequence[float] | None = None
        self.edge_priors: list[float] | None = None
        self.winner: int | None = None

    @property
    def expanded(self) -> bool:
        """Whether the node's actions and edges exist."""
        return self.actions is not None

    def expand(self, state: GameState, actions: list[int]) -> None:
        """Create the edges of position ``state`` (kept by the node; not to be changed):
        ``actions``, chosen by ``state.to_act``, none visited yet."""
        self.state = state
        self.player = state.to_act
        self.actions = actions
        self.children = [None] * len(actions)
        self.untried = list(range(len(actions)))
        self.n, self.w = _edge_arrays(len(actions))
        if self.priors is not None:
            self.edge_priors = _normalised([float(self.priors[a]) for a in actions])

    def restrict(self, actions: list[int]) -> None:
        """Keep only the edges of ``actions`` (in that order), with their statistics; an
        action the node did not have gets a fresh edge. Used at a reused root."""
        old = {a: i for i, a in enumerate(self.actions or [])}
        children, n, w = self.children, self.n, self.w
        self.actions = actions
        self.children = [children[old[a]] if a in old else None for a in actions]
        self.n, self.w = _edge_arrays(len(actions))
        for i, a in enumerate(actions):
            if a in old:
                self.n[i], self.w[i] = n[old[a]], w[old[a]]
        self.untried = [i for i, child in enumerate(self.children) if child is None]
        self.visits = int(sum(self.n))
        if self.priors is not None:
            self.edge_priors = _normalised([float(self.priors[a]) for a in actions])

    def best_index(self) -> int:
        """The most visited edge; ties go to the higher mean value, then the lower action."""
        n, w, actions = self.n, self.w, self.actions or []
        return max(
            range(len(actions)),
            key=lambda i: (float(n[i]), float(w[i]) / float(n[i]) if n[i] else 0.0, -actions[i]),
        )


def _edge_arrays(size: int) -> tuple[Any, Any]:
    if size > _NUMPY_FROM:
        return np.zeros(size), np.zeros(size)
    return [0.0] * size, [0.0] * size


def _normalised(values: list[float]) -> list[float]:
    total = sum(v for v in values if v > 0)
    if not total > 0 or not math.isfinite(total):
        return [1.0 / len(values)] * len(values) if values else []
    return [max(v, 0.0) / total for v in values]


def backup(path: list[tuple[Node, int]], player: int, value: float) -> None:
    """Add a leaf's ``value`` (for ``player``) to every edge on ``path``.

    Each edge ``(node, index)`` scores it for ``node.player``, the player who chose that
    edge: ``+value`` if that is ``player``, ``-value`` otherwise. Because the sign is read
    per node, a player acting twice in a row (after a tilt or a decline) is handled like
    any other turn: this is the search's only knowledge of the turn order.
    """
    for node, index in path:
        node.visits += 1
        node.n[index] += 1
        node.w[index] += value if node.player == player else -value


# --------------------------------------------------------------------------- tree policies
class TreePolicy(Protocol):
    """Selection at an expanded node: the index of the edge to follow."""

    uses_priors: bool

    def select(self, node: Node, rng: random.Random) -> int:
        """The index into ``node.actions`` of the edge to follow."""
        ...


class UCT:
    """UCB1: every untried edge first, in a random order, then the highest
    ``score + c * sqrt(ln N / n)``, where the score is the mean result mapped to 1 win,
    0.5 draw, 0 loss (so ``c`` keeps the meaning of the classic UCT constant)."""

    uses_priors = False

    def __init__(self, c: float = 1.0) -> None:
        self.c = _finite("c", c, low=0.0)

    def select(self, node: Node, rng: random.Random) -> int:
        """An untried edge at random, else the UCB1 maximum."""
        untried = node.untried
        if untried:
            i = int(rng.random() * len(untried))
            index = untried[i]
            untried[i] = untried[-1]
            untried.pop()
            return index
        # score = (1 + w/n) / 2; ranking by w/n + 2c sqrt(ln N / n) is the same order
        ns, ws = node.n, node.w
        scale = 4.0 * self.c * self.c * math.log(node.visits)
        if isinstance(ns, np.ndarray):
            bonus = scale / ns
            np.sqrt(bonus, out=bonus)
            bonus += ws / ns
            return int(bonus.argmax())
        best, index = -math.inf, 0
        sqrt = math.sqrt
        for j in range(len(ns)):
            value = ws[j] / ns[j] + sqrt(scale / ns[j])
            if value > best:
                best, index = value, j
        return index

    def __repr__(self) -> str:
        return f"UCT(c={self.c:g})"


class PUCT:
    """AlphaZero's rule: the highest ``q + c * p * sqrt(N) / (1 + n)``, with ``q`` the mean
    value in [-1, 1] (``fpu`` for an unvisited edge) and ``p`` the evaluator's prior
    (uniform when it gives none)."""

    uses_priors = True

    def __init__(self, c: float = 1.5, fpu: float = 0.0) -> None:
        self.c = _finite("c", c, low=0.0)
        self.fpu = _finite("fpu", fpu, low=-1.0, high=1.0)

    def select(self, node: Node, rng: random.Random) -> int:
        """The PUCT maximum (ties: the lower index)."""
        ns, ws = node.n, node.w
        size = len(ns)
        priors = node.edge_priors or [1.0 / size] * size
        explore = self.c * math.sqrt(max(node.visits, 1))
        fpu = self.fpu
        best, index = -math.inf, 0
        for j in range(size):
            n = ns[j]
            value = (ws[j] / n if n else fpu) + explore * priors[j] / (1.0 + n)
            if value > best:
                best, index = value, j
        return index

    def __repr__(self) -> str:
        return f"PUCT(c={self.c:g}, fpu={self.fpu:g})"


# --------------------------------------------------------------------------- evaluators
class Evaluation(NamedTuple):
    """What an evaluator returns: ``value`` in [-1, 1] for the player to act in the state it
    was given, and optional ``priors`` indexed by action number."""

    value: float
    priors: Sequence[float] | None = None


class Evaluator(Protocol):
    """Values a leaf; see the module docstring for the contract."""

    def evaluate(self, state: GameState, rng: random.Random) -> Evaluation:
        """The leaf's value for ``state.to_act`` (and optional priors); may change ``state``."""
        ...


def _value_for(player: int, winner: int | None) -> float:
    if winner is None or winner < 0:
        return 0.0
    return 1.0 if winner == player else -1.0


def rollout(state: GameState, rng: random.Random, own_on_top: bool = False) -> int | None:
    """Play ``state`` out at random (changing it) and return the winner (0, 1 or None).

    Keeps a list of the empty squares and places on a random one; with ``own_on_top`` every
    placement shows the placer's own colour on top (orientation 0 or 2), otherwise all 4
    orientations are equally likely. A pending megalith is answered by a uniform choice
    among its legal tilts (the core's :meth:`~GameState.tilt_targets`) and declining.
    """
    board = state.board
    rand = rng.random
    empties = [s for s in range(board.squares) if not state.kinds[s]]
    decline = decline_action(board)
    apply = state.apply_unchecked
    while state.phase != OVER:
        if state.phase == PLACE:
            i = int(rand() * len(empties))
            square = empties[i]
            empties[i] = empties[-1]
            empties.pop()
            orientation = 2 * int(rand() * 2) if own_on_top else int(rand() * 4)
            apply(place_number(square, orientation))
            continue
        origin = state.pending
        targets = state.tilt_targets()
        choice = int(rand() * (len(targets) + 1))
        if choice == len(targets):
            apply(decline)
            continue
        direction = list(targets)[choice]
        first, second, _ = targets[direction]
        apply(tilt_action(board, direction))
        empties.remove(first)
        empties.remove(second)
        empties.append(origin)
    return state.result().winner


class RandomRollout:
    """One random playout in Python (:func:`rollout`); the value is its result."""

    def __init__(self, own_on_top: bool = False) -> None:
        self.own_on_top = bool(own_on_top)

    def evaluate(self, state: GameState, rng: random.Random) -> Evaluation:
        """Play ``state`` out; +1/0/-1 for the player to act in it."""
        player = state.to_act
        return Evaluation(_value_for(player, rollout(state, rng, self.own_on_top)))

    def __repr__(self) -> str:
        return f"RandomRollout(own_on_top={self.own_on_top})"


class CompiledRollout:
    """One random playout in the batched engine's compiled kernel
    (:func:`carnac_env.batch.random_playout`, the kernel's own rules), seeded from ``rng``.
    The state is left unchanged."""

    def __init__(self) -> None:
        self.playout = compiled_playout()
        if self.playout is None:
            raise CarnacError("the compiled rollout needs carnac_env.batch.random_playout (numba)")

    def evaluate(self, state: GameState, rng: random.Random) -> Evaluation:
        """One compiled playout; +1/0/-1 for the player to act."""
        return Evaluation(_value_for(state.to_act, self.playout(state, rng.getrandbits(62))))

    def __getstate__(self) -> dict:
        return {"compiled": True}  # the kernel is looked up again on unpickling

    def __setstate__(self, data: dict) -> None:
        self.__init__()

    def __repr__(self) -> str:
        return "CompiledRollout()"


def compiled_playout() -> Callable[[GameState, int], int] | None:
    """``carnac_env.batch.random_playout`` when it is installed and compiles, else ``None``."""
    try:
        from carnac_env.batch import random_playout
    except ImportError:
        return None
    return random_playout


class GreedyValue:
    """No playout: the greedy agent's static evaluation of the leaf for the player to act,
    squashed to [-1, 1] by ``tanh(evaluation / scale)``."""

    def __init__(self, scale: float = 200.0) -> None:
        self.scale = _finite("scale", scale, low=1e-9)

    def evaluate(self, state: GameState, rng: random.Random) -> Evaluation:
        """``tanh(evaluate(state, to_act) / scale)``."""
        from carnac_env.agents.greedy import evaluate

        return Evaluation(math.tanh(evaluate(state, state.to_act) / self.scale))

    def __repr__(self) -> str:
        return f"GreedyValue(scale={self.scale:g})"


def default_rollout() -> Evaluator:
    """The ``random`` rollout: compiled where the kernel is available, Python otherwise."""
    return CompiledRollout() if compiled_playout() is not None else RandomRollout()


#: The ``rollout`` option's spec words and the evaluator each builds (the one mapping).
ROLLOUTS: dict[str, Callable[[], Evaluator]] = {
    "random": default_rollout,
    "python": RandomRollout,
    "own": lambda: RandomRollout(own_on_top=True),
    "eval": GreedyValue,
}


# --------------------------------------------------------------------------- the search
class Search:
    """Simulations over a tree with a tree policy and an evaluator, from one seeded ``rng``."""

    def __init__(self, policy: TreePolicy, evaluator: Evaluator, rng: random.Random) -> None:
        self.policy = policy
        self.evaluator = evaluator
        self.rng = rng

    def new_root(self, state: GameState, actions: list[int] | None = None) -> Node:
        """An expanded root for ``state`` over ``actions`` (default: all legal ones), with the
        evaluator's priors when the tree policy uses them."""
        root = Node()
        if self.policy.uses_priors:
            root.priors = self.evaluator.evaluate(state.copy(), self.rng).priors
        root.expand(state.copy(), state.legal_actions() if actions is None else actions)
        return root

    def run(self, root: Node, sims: int = 0, deadline: float | None = None) -> int:
        """``sims`` simulations from the expanded ``root``, or as many as fit before
        ``deadline`` (a ``time.perf_counter()`` value) when it is given; the count."""
        done = 0
        while True:
            if deadline is None:
                if done >= sims:
                    return done
            elif done & 15 == 0 and done and time.perf_counter() >= deadline:
                return done
            self.simulate(root)
            done += 1

    def simulate(self, root: Node) -> None:
        """One simulation: select down to a new leaf, evaluate it, back the value up."""
        path, leaf, game = self.select(root)
        player, value = self.leaf_value(leaf, game)
        leaf.visits += 1  # a node's visits equal its parent edge's count
        backup(path, player, value)

    def select(self, root: Node) -> tuple[list[tuple[Node, int]], Node, GameState | None]:
        """Follow the tree policy from ``root`` until it leaves the expanded tree: at a new
        child (created here), at a finished game, or at a child met for the second time,
        which is expanded and the descent goes on. Returns the path, the leaf and the leaf's
        position (a copy the evaluator may change; ``None`` for a finished game seen before)."""
        path: list[tuple[Node, int]] = []
        node = root
        policy, rng = self.policy, self.rng
        while True:
            index = policy.select(node, rng)
            path.append((node, index))
            child = node.children[index]
            if child is None:
                node.children[index] = child = Node()
                return path, child, _after(node, index)
            if child.actions is None:
                if child.winner is not None:
                    return path, child, None
                game = _after(node, index)
                if game.phase == OVER:
                    return path, child, game
                child.expand(game, game.legal_actions())
            node = child

    def leaf_value(self, leaf: Node, game: GameState | None) -> tuple[int, float]:
        """``(player, value)`` at a leaf: a finished game's result, or the evaluator's value
        for the player to act (its priors are kept on the leaf for its expansion)."""
        if game is None or game.phase == OVER:
            if leaf.winner is None:
                winner = game.result().winner
                leaf.winner = -1 if winner is None else winner
            return 0, _value_for(0, leaf.winner)
        player = game.to_act
        evaluation = self.evaluator.evaluate(game, self.rng)
        if self.policy.uses_priors:
            leaf.priors = evaluation.priors
        return player, float(evaluation.value)


def _after(node: Node, index: int) -> GameState:
    """A new copy of ``node``'s position after its edge ``index``."""
    game = node.state.copy()
    game.apply_unchecked(node.actions[index])
    return game


def find_subtree(root: Node, target: GameState, max_depth: int = 8) -> Node | None:
    """The expanded node at or below ``root`` whose position equals ``target``, or ``None``.
    Walks the expanded children depth first, pruning moves that ``target`` cannot follow
    from (a smaller supply, other lying megaliths, another colour on a placed square); a
    match is always an exact state comparison."""
    if root.state is None or root.state.board != target.board:
        return None
    stack = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        if node.state == target:
            return node
        if depth >= max_depth:
            continue
        for action, child in zip(node.actions, node.children):
            if child is not None and child.state is not None and _can_lead_to(child.state, target, action):
                stack.append((child, depth + 1))
    return None


def _can_lead_to(state: GameState, target: GameState, action: int) -> bool:
    """A quick necessary condition for ``target`` to follow ``state`` (reached by ``action``)."""
    if state.supply < target.supply or state.lying != target.lying[: len(state.lying)]:
        return False
    move = decode(state.board, action)
    if move.kind == PLACE_MOVE:  # a placement: it stands in target, or was tilted away
        square = move.square
        if target.kinds[square] == STANDING:
            return target.cells[square] == state.cells[square]
        return len(target.lying) > len(state.lying)
    return True


# --------------------------------------------------------------------------- the agent
class MCTSAgent(SearchAgent):
    """Monte Carlo tree search; see the module docstring for the parts and the options.

    ``evaluator`` and ``policy`` take objects (an :class:`Evaluator`, a :class:`TreePolicy`)
    and override ``rollout`` and ``c``; specs reach only the named options.
    """

    name = "mcts"

    def __init__(
        self,
        seed: int = 0,
        sims: int = 5000,
        seconds: float = 0.0,
        c: float = 1.0,
        width: int = 8,
        rollout: str = "random",
        reuse: bool = True,
        evaluator: Evaluator | None = None,
        policy: TreePolicy | None = None,
    ) -> None:
        super().__init__(seed)
        self.sims = _whole("sims", sims, low=1)
        self.seconds = _finite("seconds", seconds, low=0.0)
        self.c = _finite("c", c, low=0.0)
        self.width = _whole("width", width, low=0)
        if rollout not in ROLLOUTS:
            raise CarnacError(f"mcts option rollout={rollout!r} must be one of {', '.join(map(repr, ROLLOUTS))}")
        self.rollout = rollout
        self.reuse = bool(reuse)
        self.evaluator = evaluator if evaluator is not None else ROLLOUTS[rollout]()
        self.policy = policy if policy is not None else UCT(self.c)
        #: Simulations run by the last call of :meth:`choose` (for benchmarks).
        self.last_sims = 0
        #: The root of the last search (kept for tree reuse, and for inspection).
        self.root: Node | None = None

    def reset(self, seed: int | None = None) -> None:
        """Re-seed and forget the tree."""
        super().reset(seed)
        self.root = None

    def __getstate__(self) -> dict:
        data = dict(self.__dict__)
        data["root"] = None
        return data

    @property
    def spec(self) -> str:
        """The spec string that builds this agent again (built-in options only)."""
        budget = f"seconds={self.seconds:g}" if self.seconds else f"sims={self.sims}"
        extra = (f":c={self.c:g}" if self.c != 1.0 else "") + (f":width={self.width}" if self.width != 8 else "")
        extra += f":rollout={self.rollout}" if self.rollout != "random" else ""
        extra += ":reuse=false" if not self.reuse else ""
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
        if state.is_over:
            raise CarnacError("the game is over; there is no action to choose")
        search = Search(self.policy, self.evaluator, self.rng)
        root = self._root_for(state, search)
        if len(root.actions) == 1:
            self.last_sims = 0
        else:
            deadline = time.perf_counter() + self.seconds if self.seconds else None
            self.last_sims = search.run(root, self.sims, deadline)
        self.root = root
        return root.actions[root.best_index()]

    def _root_for(self, state: GameState, search: Search) -> Node:
        """The reused subtree for ``state`` when there is one (restricted to the root
        actions), else a new root."""
        actions = self.root_actions(state)
        node = self._reused(state)
        if node is None:
            return search.new_root(state, actions)
        node.restrict(actions)
        return node

    def _reused(self, state: GameState) -> Node | None:
        if not self.reuse or self.root is None:
            return None
        return find_subtree(self.root, state)


def _finite(name: str, value: Any, low: float | None = None, high: float | None = None) -> float:
    """``value`` as a finite float within ``[low, high]``, or a CarnacError naming it."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise CarnacError(f"mcts option {name}={value!r} must be a number") from None
    if not math.isfinite(number) or (low is not None and number < low) or (high is not None and number > high):
        bounds = f">= {low:g}" if high is None else f"in [{low:g}, {high:g}]"
        raise CarnacError(f"mcts option {name}={value!r} must be a finite number {bounds}")
    return number


def _whole(name: str, value: Any, low: int) -> int:
    """``value`` as an int >= ``low``, or a CarnacError naming it."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < low:
        raise CarnacError(f"mcts option {name}={value!r} must be an integer >= {low}")
    return int(value)


register(
    "mcts",
    MCTSAgent,
    {
        "sims": (int, 5000, "new simulations per move"),
        "seconds": (float, 0.0, "seconds per move instead of sims"),
        "c": (float, 1.0, "UCT exploration constant"),
        "width": (int, 8, "search only the N best root actions by greedy's values; 0 all"),
        "rollout": (str, "random", f"leaf evaluator: {', '.join(ROLLOUTS)}"),
        "reuse": (bool, True, "keep the tree between moves"),
    },
    "Monte Carlo tree search (UCT) with random playouts on the rules core",
)
