"""A batch of search trees as arrays (mctx's shape), and the one backup rule.

A :class:`Tree` holds ``T`` trees side by side; tree ``t`` uses row ``t`` of every array.

* **Nodes** ``(T, nodes)``: the player to act (``player``; -1 once the game is over), the
  game's winner once it is over (``winner``; :data:`~carnac_env.search.games.NOT_OVER`
  before), the evaluator's value for ``player`` (``value``), how many simulations passed
  through (``visits``), and where its edges are: ``first`` and ``count`` (-1 until the node
  is *expanded*), ``tried`` (edges ``first .. first+tried`` have been followed; UCT's
  untried-first order).
* **Edges** ``(T, edges)``, one per legal action of an expanded node, allocated together:
  the ``action`` number, the ``prior`` (possibly with root noise), the network's ``logit``,
  a root ``noise`` term (Gumbel), the visit count ``n``, the total value ``w`` **for the
  player who chooses the edge** (its node's ``player``), and the ``child`` node (-1 until
  visited).
* Per tree: the ``root`` node, the numbers of nodes and edges in use, a SplitMix64 state
  ``rng``, and per *lane* (a simulation in flight; several when a search evaluates several
  leaves of one tree per network batch) its ``path`` (node and edge at each depth) and ``leaf``.

A node whose leaf evaluation is pending has ``count == WAITING`` (-2). While lanes are in
flight, each edge on their paths holds a *virtual loss*: one visit and a loss (``-VIRTUAL_LOSS``
for its chooser) that steer the other lanes elsewhere, and that :func:`backup` replaces by the
real value.

No position is stored: a node's game is its root's game with the path's actions replayed
(:mod:`carnac_env.search.games`).

**Turn order.** In Carnac the same player may act twice in a row (the tilter places next;
after a decline the placer places again). :func:`backup` is the only code that takes sides:
a value for some player is added to each edge on the path as ``+value`` if the edge's
chooser is that player and ``-value`` otherwise. Nothing assumes that turns alternate.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, types
from numba.experimental import structref

from carnac_env.batch.rules import NOT_OVER

_JIT = {"cache": True, "nogil": True}

#: The fields of a :class:`Tree`, in order (see the module docstring).
FIELDS = (
    "player",
    "winner",
    "value",
    "visits",
    "first",
    "count",
    "tried",
    "action",
    "prior",
    "logit",
    "noise",
    "n",
    "w",
    "child",
    "root",
    "size",
    "used",
    "rng",
    "path_node",
    "path_edge",
    "depth",
    "leaf",
)


class TreeArrays(NamedTuple):
    """The numpy arrays behind a :class:`Tree` (the same memory), for Python code."""

    player: np.ndarray  # (T, nodes) int8
    winner: np.ndarray  # (T, nodes) int8
    value: np.ndarray  # (T, nodes) float32
    visits: np.ndarray  # (T, nodes) int32
    first: np.ndarray  # (T, nodes) int64
    count: np.ndarray  # (T, nodes) int32, -1 unexpanded
    tried: np.ndarray  # (T, nodes) int32
    action: np.ndarray  # (T, edges) int32
    prior: np.ndarray  # (T, edges) float32
    logit: np.ndarray  # (T, edges) float32
    noise: np.ndarray  # (T, edges) float32
    n: np.ndarray  # (T, edges) int32
    w: np.ndarray  # (T, edges) float64
    child: np.ndarray  # (T, edges) int32
    root: np.ndarray  # (T,) int32
    size: np.ndarray  # (T,) int32, nodes in use
    used: np.ndarray  # (T,) int64, edges in use
    rng: np.ndarray  # (T,) uint64
    path_node: np.ndarray  # (T, lanes, depth) int32
    path_edge: np.ndarray  # (T, lanes, depth) int64
    depth: np.ndarray  # (T, lanes) int32
    leaf: np.ndarray  # (T, lanes) int32, the node each lane's simulation stopped at (-1: none)


@structref.register
class TreeType(types.StructRef):
    """The numba type of :class:`Tree`."""

    def preprocess_fields(self, fields):
        return tuple((name, types.unliteral(kind)) for name, kind in fields)


class Tree(structref.StructRefProxy):
    """``T`` search trees in arrays: the one object the compiled search functions take.

    Build one with :func:`new_tree`, which also returns the :class:`TreeArrays` view.
    """

    def __new__(cls, *fields: object) -> Tree:
        return _make_tree(*fields)


structref.define_constructor(Tree, TreeType, list(FIELDS))
structref.define_boxing(TreeType, Tree)


@njit(**_JIT)
def _make_tree(*fields):  # pragma: no cover - compiled (cached, unlike define_proxy's constructor)
    return Tree(*fields)


#: ``count`` of a node whose evaluation is pending (unexpanded is -1).
WAITING = -2
#: The loss an edge holds for each lane in flight through it.
VIRTUAL_LOSS = 1.0


def new_tree(trees: int, nodes: int, edges: int, max_depth: int, lanes: int = 1) -> tuple[Tree, TreeArrays]:
    """Empty room for ``trees`` trees of up to ``nodes`` nodes and ``edges`` edges each, paths of
    up to ``max_depth`` moves (a whole game: twice the megaliths, plus one) and ``lanes``
    simulations in flight per tree."""
    t = int(trees)
    arrays = TreeArrays(
        player=np.zeros((t, nodes), np.int8),
        winner=np.zeros((t, nodes), np.int8),
        value=np.zeros((t, nodes), np.float32),
        visits=np.zeros((t, nodes), np.int32),
        first=np.zeros((t, nodes), np.int64),
        count=np.zeros((t, nodes), np.int32),
        tried=np.zeros((t, nodes), np.int32),
        action=np.zeros((t, edges), np.int32),
        prior=np.zeros((t, edges), np.float32),
        logit=np.zeros((t, edges), np.float32),
        noise=np.zeros((t, edges), np.float32),
        n=np.zeros((t, edges), np.int32),
        w=np.zeros((t, edges), np.float64),
        child=np.zeros((t, edges), np.int32),
        root=np.full(t, -1, np.int32),
        size=np.zeros(t, np.int32),
        used=np.zeros(t, np.int64),
        rng=np.zeros(t, np.uint64),
        path_node=np.zeros((t, lanes, max_depth), np.int32),
        path_edge=np.zeros((t, lanes, max_depth), np.int64),
        depth=np.zeros((t, lanes), np.int32),
        leaf=np.full((t, lanes), -1, np.int32),
    )
    return Tree(*arrays), arrays


# ----------------------------------------------------------------------------- nodes, edges
@njit(**_JIT)
def clear(tree, t):  # pragma: no cover - compiled
    """Empty tree ``t`` (no root)."""
    tree.size[t] = 0
    tree.used[t] = 0
    tree.root[t] = -1
    for lane in range(tree.leaf.shape[1]):
        tree.depth[t, lane] = 0
        tree.leaf[t, lane] = -1


@njit(**_JIT)
def add_node(tree, t, player, winner):  # pragma: no cover - compiled
    """A new unexpanded node in tree ``t`` for a position where ``player`` acts (-1 and its
    ``winner`` once the game is over); its index. The caller made room (:func:`room`)."""
    node = tree.size[t]
    tree.size[t] = node + 1
    tree.player[t, node] = player
    tree.winner[t, node] = winner
    tree.value[t, node] = 0.0
    tree.visits[t, node] = 0
    tree.first[t, node] = 0
    tree.count[t, node] = -1
    tree.tried[t, node] = 0
    return node


@njit(**_JIT)
def add_edges(tree, t, node, actions, count):  # pragma: no cover - compiled
    """Expand ``node``: one edge per action of ``actions[:count]``, uniform priors, nothing
    visited. Returns the index of the first edge."""
    first = tree.used[t]
    tree.used[t] = first + count
    tree.first[t, node] = first
    tree.count[t, node] = count
    tree.tried[t, node] = 0
    uniform = 1.0 / count
    for k in range(count):
        e = first + k
        tree.action[t, e] = actions[k]
        tree.prior[t, e] = uniform
        tree.logit[t, e] = 0.0
        tree.noise[t, e] = 0.0
        tree.n[t, e] = 0
        tree.w[t, e] = 0.0
        tree.child[t, e] = -1
    return first


@njit(**_JIT)
def set_priors_from_logits(tree, t, node, logits):  # pragma: no cover - compiled
    """Give ``node``'s edges the network's logits (``logits`` indexed by action number) and
    their softmax over the node's actions as priors."""
    first = tree.first[t, node]
    count = tree.count[t, node]
    top = -np.inf
    for k in range(count):
        logit = logits[tree.action[t, first + k]]
        tree.logit[t, first + k] = logit
        if logit > top:
            top = logit
    total = 0.0
    for k in range(count):
        p = np.exp(tree.logit[t, first + k] - top)
        tree.prior[t, first + k] = p
        total += p
    for k in range(count):
        tree.prior[t, first + k] = tree.prior[t, first + k] / total


@njit(**_JIT)
def swap_edges(tree, t, a, b):  # pragma: no cover - compiled
    """Exchange edges ``a`` and ``b`` of tree ``t`` (all their fields)."""
    if a == b:
        return
    tree.action[t, a], tree.action[t, b] = tree.action[t, b], tree.action[t, a]
    tree.prior[t, a], tree.prior[t, b] = tree.prior[t, b], tree.prior[t, a]
    tree.logit[t, a], tree.logit[t, b] = tree.logit[t, b], tree.logit[t, a]
    tree.noise[t, a], tree.noise[t, b] = tree.noise[t, b], tree.noise[t, a]
    tree.n[t, a], tree.n[t, b] = tree.n[t, b], tree.n[t, a]
    tree.w[t, a], tree.w[t, b] = tree.w[t, b], tree.w[t, a]
    tree.child[t, a], tree.child[t, b] = tree.child[t, b], tree.child[t, a]


# ----------------------------------------------------------------------------- the backup
@njit(**_JIT)
def backup(tree, t, lane, value, player, virtual):  # pragma: no cover - compiled
    """Add a simulation's ``value`` (for ``player``) to every edge on tree ``t``'s path in ``lane``.

    An edge scores it for the player who chose it (its node's ``player``): ``+value`` if that
    is ``player``, ``-value`` otherwise. This is the search's only knowledge of the turn
    order, so a player acting twice in a row needs nothing special. Every node on the path
    and the leaf count one more visit; with ``virtual`` the path's visits were counted on the
    way down and its virtual loss is taken back here.
    """
    depth = tree.depth[t, lane]
    for k in range(depth):
        node = tree.path_node[t, lane, k]
        edge = tree.path_edge[t, lane, k]
        if virtual:
            tree.w[t, edge] += VIRTUAL_LOSS
        else:
            tree.visits[t, node] += 1
            tree.n[t, edge] += 1
        if tree.player[t, node] == player:
            tree.w[t, edge] += value
        else:
            tree.w[t, edge] -= value
    tree.visits[t, tree.leaf[t, lane]] += 1
    tree.leaf[t, lane] = -1


@njit(**_JIT)
def add_virtual_loss(tree, t, node, edge):  # pragma: no cover - compiled
    """Count a lane's way through ``edge`` of ``node`` (a visit and a virtual loss)."""
    tree.visits[t, node] += 1
    tree.n[t, edge] += 1
    tree.w[t, edge] -= VIRTUAL_LOSS


@njit(**_JIT)
def revert(tree, t, lane):  # pragma: no cover - compiled
    """Take back the virtual visits and losses of ``lane``'s path (a lane that collided with
    a leaf already waiting), leaving the tree as it was before its descent."""
    for k in range(tree.depth[t, lane]):
        node = tree.path_node[t, lane, k]
        edge = tree.path_edge[t, lane, k]
        tree.visits[t, node] -= 1
        tree.n[t, edge] -= 1
        tree.w[t, edge] += VIRTUAL_LOSS
    tree.leaf[t, lane] = -1


# ----------------------------------------------------------------------------- reading
@njit(**_JIT)
def edge_q(tree, t, e, default):  # pragma: no cover - compiled
    """The mean value of edge ``e`` for its chooser, or ``default`` when never visited."""
    n = tree.n[t, e]
    return tree.w[t, e] / n if n > 0 else default


@njit(**_JIT)
def root_table(tree, t, actions, visits, values, priors, logits):  # pragma: no cover - compiled
    """Tree ``t``'s root edges into the given arrays (in edge order); returns their number.
    ``values`` is each edge's mean value for the root's player (0 if never visited)."""
    root = tree.root[t]
    first = tree.first[t, root]
    count = tree.count[t, root]
    for k in range(count):
        e = first + k
        actions[k] = tree.action[t, e]
        visits[k] = tree.n[t, e]
        values[k] = edge_q(tree, t, e, 0.0)
        priors[k] = tree.prior[t, e]
        logits[k] = tree.logit[t, e]
    return count


# ----------------------------------------------------------------------------- reuse
@njit(**_JIT)
def compact(tree, t):  # pragma: no cover - compiled
    """Move tree ``t``'s root and every node below it to the front of its arrays (breadth
    first, edges of a node kept together), dropping what is no longer reachable; the
    statistics are unchanged. Returns the number of nodes kept."""
    root = tree.root[t]
    if root < 0:
        clear(tree, t)
        return 0
    size = tree.size[t]
    old_of = np.empty(size, np.int32)  # new index -> old index, in breadth-first order
    new_of = np.full(size, -1, np.int32)
    old_of[0] = root
    new_of[root] = 0
    kept = 1
    head = 0
    while head < kept:
        node = old_of[head]
        head += 1
        count = tree.count[t, node]
        first = tree.first[t, node]
        for k in range(max(count, 0)):
            child = tree.child[t, first + k]
            if child >= 0 and new_of[child] < 0:
                new_of[child] = kept
                old_of[kept] = child
                kept += 1
    # copy the kept nodes and their edges into fresh arrays, then back
    player = np.empty(kept, np.int8)
    winner = np.empty(kept, np.int8)
    value = np.empty(kept, np.float32)
    visits = np.empty(kept, np.int32)
    count_ = np.empty(kept, np.int32)
    tried = np.empty(kept, np.int32)
    first_ = np.empty(kept, np.int64)
    edges = 0
    for j in range(kept):
        c = tree.count[t, old_of[j]]
        if c > 0:
            edges += c
    action = np.empty(edges, np.int32)
    prior = np.empty(edges, np.float32)
    logit = np.empty(edges, np.float32)
    noise = np.empty(edges, np.float32)
    n = np.empty(edges, np.int32)
    w = np.empty(edges, np.float64)
    child_ = np.empty(edges, np.int32)
    e_new = 0
    for j in range(kept):
        old = old_of[j]
        player[j] = tree.player[t, old]
        winner[j] = tree.winner[t, old]
        value[j] = tree.value[t, old]
        visits[j] = tree.visits[t, old]
        count_[j] = tree.count[t, old]
        tried[j] = tree.tried[t, old]
        first_[j] = e_new
        c = tree.count[t, old]
        f = tree.first[t, old]
        for k in range(max(c, 0)):
            e = f + k
            action[e_new] = tree.action[t, e]
            prior[e_new] = tree.prior[t, e]
            logit[e_new] = tree.logit[t, e]
            noise[e_new] = tree.noise[t, e]
            n[e_new] = tree.n[t, e]
            w[e_new] = tree.w[t, e]
            old_child = tree.child[t, e]
            child_[e_new] = new_of[old_child] if old_child >= 0 else -1
            e_new += 1
    for j in range(kept):
        tree.player[t, j] = player[j]
        tree.winner[t, j] = winner[j]
        tree.value[t, j] = value[j]
        tree.visits[t, j] = visits[j]
        tree.count[t, j] = count_[j]
        tree.tried[t, j] = tried[j]
        tree.first[t, j] = first_[j]
    for e in range(edges):
        tree.action[t, e] = action[e]
        tree.prior[t, e] = prior[e]
        tree.logit[t, e] = logit[e]
        tree.noise[t, e] = noise[e]
        tree.n[t, e] = n[e]
        tree.w[t, e] = w[e]
        tree.child[t, e] = child_[e]
    tree.root[t] = 0
    tree.size[t] = kept
    tree.used[t] = edges
    for lane in range(tree.leaf.shape[1]):
        tree.leaf[t, lane] = -1
        tree.depth[t, lane] = 0
    return kept


@njit(**_JIT)
def is_terminal(tree, t, node):  # pragma: no cover - compiled
    """Whether ``node`` is a finished game."""
    return tree.winner[t, node] != NOT_OVER
