"""A batch of search trees as arrays (mctx's shape), its fields declared once, and the one backup rule.

A :class:`Tree` holds ``T`` trees side by side; tree ``t`` uses row ``t`` of every array.
:data:`FIELDS` declares every field once (name, shape kind, type, fresh value, meaning); the
structref, the :class:`TreeArrays` view that Python reads, the allocation (:func:`new_tree`,
:func:`grown`), the reset of a new node or edge (:func:`add_node`, :func:`add_edges`), the
exchange of two edges (:func:`swap_edges`) and the compaction (:func:`compact`) are all made
from it, so a field is added in one place. The kinds:

* **node** ``(T, nodes)``: one entry per position in the tree;
* **edge** ``(T, edges)``: one per legal action of an expanded node, a node's edges together;
* **tree** ``(T,)``, **lane** ``(T, lanes)`` and **path** ``(T, lanes, max_depth)``: per tree,
  and per *lane* (a simulation in flight; several when a search evaluates several leaves of one
  tree per batch).

A node whose leaf evaluation is pending has ``count == PENDING`` (-2). While lanes are in
flight, each edge on their paths holds a *virtual loss*: one visit and a loss (``-VIRTUAL_LOSS``
for its chooser) that steer the other lanes elsewhere, and that :func:`backup` replaces by the
real value.

No position is stored: a node's game is its root's game with the path's actions replayed
(:mod:`carnac_env.search.simulation`).

**Edge order.** A node's edges ``first .. first + tried`` are those followed so far. UCT draws
its next untried edge at random and swaps it to position ``tried`` (:func:`swap_edges`, all
fields at once), and :func:`restrict_root_edges` keeps that order (the visited edges first);
ties between equal scores go to the earlier edge.

**Turn order.** In Carnac the same player may act twice in a row (the tilter places next;
after a decline the placer places again). :func:`backup` is the only code that takes sides:
a value for some player is added to each edge on the path as ``+value`` if the edge's
chooser is that player and ``-value`` otherwise. Nothing assumes that turns alternate.

**MCTS-Solver** (Winands et al., 2008; OpenSpiel's ``solve=True``), with the search's
``solver`` option: a finished game is proven (its ``winner``); a node where the player to act
has a child proven a win for them is a proven win; a node whose children are all proven is
proven with the best of them for its player (a loss only if every child is a loss, a draw if
the best is a draw). :func:`propagate` applies these rules up a lane's path after a proven
leaf's backup, taking sides by each node's ``player`` as :func:`backup` does (never by
alternation). ``proven`` holds the result for player 0, so a node's result for its own player
is ``proven`` or ``-proven``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numba import literal_unroll, njit, types
from numba.experimental import structref

from carnac_env.batch.rules import NOT_OVER

__all__ = [
    "FIELDS",
    "PENDING",
    "UNPROVEN",
    "VIRTUAL_LOSS",
    "Tree",
    "TreeArrays",
    "TreeField",
    "grown",
    "new_tree",
    "tree_bytes",
]

_JIT = {"cache": True, "nogil": True}


class TreeField(NamedTuple):
    """One field of :class:`Tree`.

    Attributes:
        name: the field's name (the same in the structref and in :class:`TreeArrays`).
        kind: its shape: ``"node"``, ``"edge"``, ``"tree"``, ``"lane"`` or ``"path"`` (see the
            module docstring).
        dtype: its numpy type.
        fresh: the value of a new node's or edge's entry (:func:`add_node`, :func:`add_edges`:
            those they are given overwrite it), and of a new tree's per-tree, per-lane and path
            arrays.
        doc: what it holds.
    """

    name: str
    kind: str
    dtype: type
    fresh: Any
    doc: str


#: The fields of a :class:`Tree`, in order.
FIELDS: tuple[TreeField, ...] = (
    TreeField("player", "node", np.int8, 0, "the player to act (-1 once the game is over)"),
    TreeField("winner", "node", np.int8, NOT_OVER, "the winner once the game is over, else ``NOT_OVER``"),
    TreeField("value", "node", np.float32, 0.0, "the evaluator's value for ``player``"),
    TreeField("visits", "node", np.int32, 0, "simulations through the node"),
    TreeField("first", "node", np.int64, 0, "its first edge"),
    TreeField("count", "node", np.int32, -1, "its number of edges; -1 until expanded, ``PENDING`` while evaluated"),
    TreeField("tried", "node", np.int32, 0, "edges ``first .. first + tried`` have been followed"),
    TreeField(
        "proven",
        "node",
        np.int8,
        2,
        "MCTS-Solver: the proven result for player 0 (+1, 0 a draw, -1), else ``UNPROVEN``; finished games "
        "are read from ``winner``",
    ),
    TreeField("action", "edge", np.int32, 0, "the action number"),
    TreeField("prior", "edge", np.float32, 0.0, "the prior (possibly with root noise)"),
    TreeField("logit", "edge", np.float32, 0.0, "the evaluator's logit"),
    TreeField("noise", "edge", np.float32, 0.0, "a root noise term (Gumbel)"),
    TreeField("n", "edge", np.int32, 0, "the visit count"),
    TreeField("w", "edge", np.float64, 0.0, "the total value for the player who chooses the edge (its node's player)"),
    TreeField("child", "edge", np.int32, -1, "the child node, -1 until visited"),
    TreeField("root", "tree", np.int32, -1, "the root node (-1: none)"),
    TreeField("size", "tree", np.int32, 0, "nodes in use"),
    TreeField("used", "tree", np.int64, 0, "edges in use"),
    TreeField("rng", "tree", np.uint64, 0, "a SplitMix64 state (:mod:`carnac_env.batch.rng`): UCT's untried order"),
    TreeField("path_node", "path", np.int32, 0, "each lane's path: the node at each depth"),
    TreeField("path_edge", "path", np.int64, 0, "each lane's path: the edge at each depth"),
    TreeField("depth", "lane", np.int32, 0, "each lane's path length"),
    TreeField("leaf", "lane", np.int32, -1, "the node each lane's simulation stopped at (-1: none)"),
)
FIELD_NAMES = tuple(f.name for f in FIELDS)
NODE_FIELDS = tuple(f for f in FIELDS if f.kind == "node")
EDGE_FIELDS = tuple(f for f in FIELDS if f.kind == "edge")

#: The numpy arrays behind a :class:`Tree`, for Python code: the same memory, one attribute per
#: field of :data:`FIELDS`.
TreeArrays = NamedTuple("TreeArrays", [(f.name, np.ndarray) for f in FIELDS])  # type: ignore[misc]
TreeArrays.__doc__ = "The numpy arrays behind a :class:`Tree` (the same memory).\n\nAttributes:\n" + "".join(
    f"    {f.name}: ({f.kind}, {np.dtype(f.dtype).name}) {f.doc}.\n" for f in FIELDS
)


@structref.register
class TreeType(types.StructRef):
    """The numba type of :class:`Tree`."""

    def preprocess_fields(self, fields: Any) -> tuple:
        return tuple((name, types.unliteral(kind)) for name, kind in fields)


class Tree(structref.StructRefProxy):
    """``T`` search trees in arrays: the one object the compiled search functions take.

    Its fields are those of :data:`FIELDS`, plus ``nodes`` and ``edges``: the node and edge
    fields again, as tuples of ``(array, fresh value)`` for the loops over every field. Build
    one with :func:`new_tree`, which also returns the :class:`TreeArrays` view.
    """

    def __new__(cls, *fields: object) -> Tree:
        return _make_tree(*fields)


structref.define_constructor(Tree, TreeType, [*FIELD_NAMES, "nodes", "edges"])
structref.define_boxing(TreeType, Tree)


@njit(**_JIT)
def _make_tree(*fields):  # pragma: no cover - compiled (cached, unlike define_proxy's constructor)
    return Tree(*fields)


#: ``count`` of a node whose evaluation is pending (unexpanded is -1).
PENDING = -2
#: The loss an edge holds for each lane in flight through it.
VIRTUAL_LOSS = 1.0
#: ``proven`` of a node whose result is not proven (the proven ones hold +1, 0 or -1 for player 0).
UNPROVEN = 2


def _shape(kind: str, trees: int, nodes: int, edges: int, max_depth: int, lanes: int) -> tuple[int, ...]:
    return {
        "node": (trees, nodes),
        "edge": (trees, edges),
        "tree": (trees,),
        "lane": (trees, lanes),
        "path": (trees, lanes, max_depth),
    }[kind]


def _tree_of(arrays: TreeArrays) -> Tree:
    """The :class:`Tree` over ``arrays`` (no copy)."""
    by_name = arrays._asdict()

    def pairs(fields: tuple[TreeField, ...]) -> tuple:
        return tuple((by_name[f.name], np.dtype(f.dtype).type(f.fresh)) for f in fields)

    return Tree(*arrays, pairs(NODE_FIELDS), pairs(EDGE_FIELDS))


def new_tree(trees: int, nodes: int, edges: int, max_depth: int, lanes: int = 1) -> tuple[Tree, TreeArrays]:
    """Empty room for ``trees`` trees of up to ``nodes`` nodes and ``edges`` edges each, paths of
    up to ``max_depth`` moves (a whole game: twice the megaliths, plus one) and ``lanes``
    simulations in flight per tree."""
    t = int(trees)
    arrays = TreeArrays(*(_allocate(f, _shape(f.kind, t, nodes, edges, max_depth, lanes)) for f in FIELDS))
    return _tree_of(arrays), arrays


def tree_bytes(trees: int, nodes: int, edges: int, max_depth: int, lanes: int = 1) -> int:
    """The bytes :func:`new_tree` allocates for these sizes, from :data:`FIELDS` (nothing allocated)."""
    total = 0
    for f in FIELDS:
        count = 1
        for n in _shape(f.kind, int(trees), int(nodes), int(edges), int(max_depth), int(lanes)):
            count *= n
        total += count * np.dtype(f.dtype).itemsize
    return total


def _allocate(field: TreeField, shape: tuple[int, ...]) -> np.ndarray:
    """A new tree's array for ``field``: zeros for the node and edge arrays (the operating system
    hands out zeroed memory untouched, so room costs nothing until it is used, and
    :func:`add_node` and :func:`add_edges` write the fresh values), the fresh value elsewhere."""
    if field.kind in ("node", "edge"):
        return np.zeros(shape, dtype=field.dtype)
    return np.full(shape, field.fresh, dtype=field.dtype)


def grown(arrays: TreeArrays, nodes: int, edges: int) -> tuple[Tree, TreeArrays]:
    """New trees with room for ``nodes`` nodes and ``edges`` edges each (at least as many as
    ``arrays`` have), holding the same trees: the node and edge arrays copied into the front of
    the larger ones, the others as they are."""
    trees, lanes, max_depth = arrays.path_node.shape
    tree, bigger = new_tree(trees, nodes, edges, max_depth, lanes)
    for f in FIELDS:
        old, new = getattr(arrays, f.name), getattr(bigger, f.name)
        if f.kind in ("node", "edge"):
            new[:, : old.shape[1]] = old
        else:
            new[...] = old
    return tree, bigger


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
    ``winner`` once the game is over), every other field fresh; its index. The caller made room."""
    node = tree.size[t]
    tree.size[t] = node + 1
    for pair in literal_unroll(tree.nodes):
        array = pair[0]
        array[t, node] = pair[1]
    tree.player[t, node] = player
    tree.winner[t, node] = winner
    return node


@njit(**_JIT)
def add_edges(tree, t, node, actions, count):  # pragma: no cover - compiled
    """Expand ``node``: one edge per action of ``actions[:count]``, uniform priors, every other
    field fresh (nothing visited). Returns the index of the first edge."""
    first = tree.used[t]
    tree.used[t] = first + count
    tree.first[t, node] = first
    tree.count[t, node] = count
    tree.tried[t, node] = 0
    for pair in literal_unroll(tree.edges):
        array = pair[0]
        fresh = pair[1]
        for k in range(count):
            array[t, first + k] = fresh
    uniform = 1.0 / count
    for k in range(count):
        e = first + k
        tree.action[t, e] = actions[k]
        tree.prior[t, e] = uniform
    return first


@njit(**_JIT)
def set_priors_from_logits(tree, t, node, logits):  # pragma: no cover - compiled
    """Give ``node``'s edges the evaluator's logits (``logits`` indexed by action number) and
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
    """Exchange edges ``a`` and ``b`` of tree ``t`` (every edge field)."""
    if a == b:
        return
    for pair in literal_unroll(tree.edges):
        array = pair[0]
        array[t, a], array[t, b] = array[t, b], array[t, a]


@njit(**_JIT)
def restrict_root_edges(tree, t, wanted, count, num_actions):  # pragma: no cover - compiled
    """Keep only the root edges of tree ``t`` whose actions are in ``wanted[:count]`` (the
    visited ones first, keeping the tried-first order of the module docstring), renormalising
    their priors; the others' subtrees become unreachable. Returns how many edges were kept."""
    root = tree.root[t]
    first = tree.first[t, root]
    total = tree.count[t, root]
    mark = np.zeros(num_actions, np.bool_)
    for k in range(count):
        mark[wanted[k]] = True
    kept = 0
    tried = 0
    for visited in (True, False):
        for k in range(kept, total):
            e = first + k
            if mark[tree.action[t, e]] and (tree.n[t, e] > 0) == visited:
                swap_edges(tree, t, first + kept, e)
                kept += 1
        if visited:
            tried = kept
    visits = 0
    mass = 0.0
    for k in range(kept):
        visits += tree.n[t, first + k]
        mass += tree.prior[t, first + k]
    for k in range(kept):
        tree.prior[t, first + k] = tree.prior[t, first + k] / mass if mass > 0 else 1.0 / kept
    tree.count[t, root] = kept
    tree.tried[t, root] = tried
    tree.visits[t, root] = visits
    return kept


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


# ----------------------------------------------------------------------------- MCTS-Solver
@njit(**_JIT)
def node_proof(tree, t, node):  # pragma: no cover - compiled
    """The proven result of ``node`` for player 0 (+1, 0, -1: a finished game's from its
    ``winner``), or ``UNPROVEN`` (also for ``node`` -1, an edge not yet followed)."""
    if node < 0:
        return UNPROVEN
    winner = tree.winner[t, node]
    if winner != NOT_OVER:
        if winner < 0:
            return 0
        return 1 if winner == 0 else -1
    return int(tree.proven[t, node])


@njit(**_JIT)
def edge_proof(tree, t, e, player):  # pragma: no cover - compiled
    """The proven result of edge ``e``'s child for ``player`` (+1, 0, -1), or ``UNPROVEN``."""
    proof = node_proof(tree, t, tree.child[t, e])
    if proof == UNPROVEN or player == 0:
        return proof
    return -proof


@njit(inline="always", **_JIT)
def proven_lost(tree, t, e, player):  # pragma: no cover - compiled
    """Whether edge ``e``'s child is a proven loss for ``player`` (MCTS-Solver: the selections
    never follow such an edge while another is left)."""
    proof = edge_proof(tree, t, e, player)
    return proof != UNPROVEN and proof < 0


@njit(**_JIT)
def prove(tree, t, node):  # pragma: no cover - compiled
    """Prove ``node`` from its children if the MCTS-Solver rules allow (module docstring);
    returns whether it is proven. An unexpanded or pending node is not."""
    if tree.winner[t, node] != NOT_OVER or tree.proven[t, node] != UNPROVEN:
        return True
    count = tree.count[t, node]
    if count <= 0:
        return False
    player = tree.player[t, node]
    first = tree.first[t, node]
    best = -2
    known = True
    for k in range(count):
        proof = edge_proof(tree, t, first + k, player)
        if proof == UNPROVEN:
            known = False
        elif proof == 1:
            best = 1
            known = True
            break
        elif proof > best:
            best = proof
    if not known:
        return False
    tree.proven[t, node] = best if player == 0 else -best
    return True


@njit(**_JIT)
def propagate(tree, t, lane):  # pragma: no cover - compiled
    """After a backup of a proven leaf: prove the nodes of ``lane``'s path from the bottom up,
    stopping at the first that cannot be proven. Returns how many were newly proven."""
    proven = 0
    for k in range(tree.depth[t, lane] - 1, -1, -1):
        node = tree.path_node[t, lane, k]
        if tree.proven[t, node] != UNPROVEN:
            continue  # proven meanwhile (another lane)
        if not prove(tree, t, node):
            break
        proven += 1
    return proven


@njit(**_JIT)
def reprove_root(tree, t):  # pragma: no cover - compiled
    """Forget tree ``t``'s root proof and prove it again from its edges (after
    :func:`restrict_root_edges` dropped some). Returns whether it is proven."""
    root = tree.root[t]
    if tree.winner[t, root] != NOT_OVER:
        return True
    tree.proven[t, root] = UNPROVEN
    return prove(tree, t, root)


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
def _gather(fields, t, order, count):  # pragma: no cover - compiled
    """Row ``t`` of every array of ``fields`` (``(array, fresh)`` pairs): entries
    ``order[:count]`` moved to the front, in that order."""
    for pair in literal_unroll(fields):
        array = pair[0]
        moved = np.empty(count, array.dtype)
        for k in range(count):
            moved[k] = array[t, order[k]]
        for k in range(count):
            array[t, k] = moved[k]


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
    # the kept nodes' edges, node by node in the new order, and each node's new first edge
    edges = 0
    for j in range(kept):
        edges += max(tree.count[t, old_of[j]], 0)
    edge_of = np.empty(edges, np.int64)  # new edge index -> old edge index
    first_ = np.empty(kept, np.int64)
    e_new = 0
    for j in range(kept):
        old = old_of[j]
        first_[j] = e_new
        f = tree.first[t, old]
        for k in range(max(tree.count[t, old], 0)):
            edge_of[e_new] = f + k
            e_new += 1
    _gather(tree.nodes, t, old_of, kept)
    _gather(tree.edges, t, edge_of, edges)
    for j in range(kept):
        tree.first[t, j] = first_[j]
    for e in range(edges):
        old_child = tree.child[t, e]
        tree.child[t, e] = new_of[old_child] if old_child >= 0 else -1
    tree.root[t] = 0
    tree.size[t] = kept
    tree.used[t] = edges
    for lane in range(tree.leaf.shape[1]):
        tree.leaf[t, lane] = -1
        tree.depth[t, lane] = 0
    return kept
