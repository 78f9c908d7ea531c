"""The compiled simulation loop: descend, evaluate, expand, back up, for many trees at once.

One *round* runs up to ``lanes`` simulations in every active tree (:func:`select_round`): for
each, the root's game is copied into the lane's scratch slot (``tree * lanes + lane``), the
selection (:func:`~carnac_env.search.selection.select_edge`) walks down the expanded tree,
playing each edge's action with the batched rules (:mod:`carnac_env.batch.rules`), until it
reaches a new node, a finished game or (with compiled playouts alone) a node seen once before,
which is then expanded and the walk goes on. With several lanes, each walk leaves a virtual
loss on its path (:mod:`carnac_env.search.tree`) so that the next walks of the same tree go
elsewhere; a walk that reaches a leaf already waiting in this round is taken back and ends the
tree's round. What happens at the leaf depends on the evaluator's
:class:`~carnac_env.search.evaluators.EvaluatorParameters`:

* ``playouts`` > 0: compiled random playouts value it at once
  (:func:`~carnac_env.search.playouts.playout_value`; with ``greedy``, playouts of greedy's
  moves, :func:`~carnac_env.search.lookahead.greedy_playout_value`, whose lookahead plays in
  ``work``'s slots after the trees' own);
* not ``batched`` (:class:`~carnac_env.search.Playouts`): that value is backed up at once, and
  the scratch slot is played unobserved (its views are never read);
* ``batched`` (any evaluator with ``evaluate``): the leaf waits; its observation and legal mask
  are written to the round's batch, the search calls the evaluator's ``evaluate`` between
  rounds, and :func:`expand_round` expands the leaf with the logits and backs the value up
  (mixed with the playouts' as ``(1 - weight) * evaluated + weight * playouts`` when both).

A finished game is scored by the rules and backed up at once, without an evaluation. With the
search's ``solver`` option (MCTS-Solver, :mod:`carnac_env.search.tree`), a node proven won,
lost or drawn is scored the same way (the walk stops there and backs up its proven result),
and after such a backup :func:`~carnac_env.search.tree.propagate` proves what it can up the path.

Between rounds nothing is kept but the tree: the scratch slots still hold the waiting
leaves' games, so the expansion reads their legal actions there.
"""

from __future__ import annotations

from typing import Any

from numba import njit, types
from numba.experimental import structref

from carnac_env.batch import rules as _rules
from carnac_env.batch import views as _views
from carnac_env.batch.rules import NOT_OVER
from carnac_env.search import lookahead as _lookahead
from carnac_env.search import playouts as _playouts
from carnac_env.search.selection import select_edge
from carnac_env.search.tree import (
    PENDING,
    UNPROVEN,
    add_edges,
    add_node,
    add_virtual_loss,
    backup,
    propagate,
    revert,
    set_priors_from_logits,
)

_JIT = {"cache": True, "nogil": True}

#: What a simulation reports: backed up, waiting for the evaluator, or taken back (a collision).
BACKED_UP, WAITING, COLLIDED = 0, 1, 2


# ----------------------------------------------------------------------------- the kernels' arguments
# structrefs, not named tuples: numba types a structref argument at once, while a named tuple
# holding structrefs is typed field by field in Python at every call (2.4 times slower rounds)
class _BundleType(types.StructRef):
    def preprocess_fields(self, fields: Any) -> tuple:
        return tuple((name, types.unliteral(kind)) for name, kind in fields)


@structref.register
class GamesType(_BundleType):
    """The numba type of :class:`Games`."""


@structref.register
class SettingsType(_BundleType):
    """The numba type of :class:`Settings`."""


@structref.register
class BatchType(_BundleType):
    """The numba type of :class:`Batch`."""


@structref.register
class BudgetType(_BundleType):
    """The numba type of :class:`Budget`."""


class Games(structref.StructRefProxy):
    """The engine states a search plays in, all on its board (KernelStates, :mod:`carnac_env.batch`):
    ``roots`` (tree ``t``'s root game in slot ``slots[t]``), ``slots`` ``(T,)`` int64,
    ``scratch`` (a slot per lane, ``t * lanes + lane``: the walks' games and the leaves waiting
    for the evaluator), ``work`` (the compiled playouts' slots: one per tree, greedy's lookahead
    two more per tree after them) and ``actions`` (int32 room for one position's legal actions)."""

    def __new__(cls, roots: Any, slots: Any, scratch: Any, work: Any, actions: Any) -> Games:
        return _make_games(roots, slots, scratch, work, actions)


class Settings(structref.StructRefProxy):
    """What the loop is told to do: ``root`` and ``below``, the
    :class:`~carnac_env.search.base.SelectionParameters` at the root and under it,
    ``evaluator``, the :class:`~carnac_env.search.base.EvaluatorParameters`, and ``solver``
    (MCTS-Solver)."""

    def __new__(cls, root: Any, below: Any, evaluator: Any, solver: bool) -> Settings:
        return _make_settings(root, below, evaluator, solver)


class Batch(structref.StructRefProxy):
    """A round's leaves for the evaluator: ``obs`` ``(L, squares * planes)`` int8, ``masks``
    ``(L, actions)`` bool, and ``waiting`` ``(L, 2)`` int32 (each leaf's tree and lane)."""

    def __new__(cls, obs: Any, masks: Any, waiting: Any) -> Batch:
        return _make_batch(obs, masks, waiting)


class Budget(structref.StructRefProxy):
    """Which trees run how many simulations: ``active`` ``(T,)`` bool; ``done`` ``(T,)`` int64
    counts each tree's simulations so far, up to ``sims``; tree ``t``'s next one uses the visit
    level ``plans[t, done[t]]`` (``plans`` ``(T, sims)`` int32, the root selection's plan)."""

    def __new__(cls, active: Any, plans: Any, done: Any, sims: int) -> Budget:
        return _make_budget(active, plans, done, sims)


for _proxy, _type, _fields in (
    (Games, GamesType, ["roots", "slots", "scratch", "work", "actions"]),
    (Settings, SettingsType, ["root", "below", "evaluator", "solver"]),
    (Batch, BatchType, ["obs", "masks", "waiting"]),
    (Budget, BudgetType, ["active", "plans", "done", "sims"]),
):
    structref.define_constructor(_proxy, _type, _fields)
    structref.define_boxing(_type, _proxy)


@njit(**_JIT)
def _make_games(roots, slots, scratch, work, actions):  # pragma: no cover - compiled
    return Games(roots, slots, scratch, work, actions)


@njit(**_JIT)
def _make_settings(root, below, evaluator, solver):  # pragma: no cover - compiled
    return Settings(root, below, evaluator, solver)


@njit(**_JIT)
def _make_batch(obs, masks, waiting):  # pragma: no cover - compiled
    return Batch(obs, masks, waiting)


@njit(**_JIT)
def _make_budget(active, plans, done, sims):  # pragma: no cover - compiled
    return Budget(active, plans, done, sims)


@njit(**_JIT)
def descend(tree, games, settings, t, lane, visit_level, virtual):  # pragma: no cover - compiled
    """Walk tree ``t`` from its root (game ``games.slots[t]`` of ``games.roots``) to a leaf,
    replaying the moves in scratch slot ``t * lanes + lane`` (the path goes to ``lane``; with
    ``virtual`` each edge on it gets a virtual loss), choosing the edges by ``settings.root``
    at the root (with ``visit_level``) and ``settings.below`` under it.

    The walk stops at a new node (made here for the edge just followed), at a finished game, or
    at an unexpanded node; with compiled playouts alone (an evaluator not ``batched``) an
    unexpanded node that was visited before is expanded here (uniform priors) and the walk goes
    on, and the scratch slot is played unobserved. Returns the leaf.
    """
    roots, scratch, actions = games.roots, games.scratch, games.actions
    slot = games.slots[t]
    expand_seen = not settings.evaluator.batched
    where = t * tree.leaf.shape[1] + lane
    if expand_seen:  # playouts alone: the scratch slot's views are never read
        _rules.copy_rules_state(roots, slot, scratch, where)
    else:
        _rules.copy_game(roots, slot, scratch, where)
    node = tree.root[t]
    depth = 0
    solver = settings.solver
    while tree.winner[t, node] == NOT_OVER:
        if solver and tree.proven[t, node] != UNPROVEN:
            break  # MCTS-Solver: a proven node is scored like a finished game
        if tree.count[t, node] < 0:
            if not (expand_seen and tree.count[t, node] != PENDING and tree.visits[t, node] > 0):
                break
            add_edges(tree, t, node, actions, _rules.legal_actions(scratch, where, actions))
        if depth == 0:
            e = select_edge(tree, t, node, settings.root, True, visit_level, solver)
        else:
            e = select_edge(tree, t, node, settings.below, False, visit_level, solver)
        tree.path_node[t, lane, depth] = node
        tree.path_edge[t, lane, depth] = e
        depth += 1
        if virtual:
            add_virtual_loss(tree, t, node, e)
        if expand_seen:
            ended = _rules.play_unobserved(scratch, where, tree.action[t, e])
        else:
            ended = _rules.play(scratch, where, tree.action[t, e])
        child = tree.child[t, e]
        if child < 0:
            if ended:
                child = add_node(tree, t, -1, _rules.winner_of(scratch, where))
            else:
                child = add_node(tree, t, scratch.to_act[where], NOT_OVER)
            tree.child[t, e] = child
            node = child
            break
        node = child
    tree.depth[t, lane] = depth
    tree.leaf[t, lane] = node
    return node


@njit(**_JIT)
def has_room(tree, t, edges):  # pragma: no cover - compiled
    """Whether tree ``t`` has room for one more simulation: a node, and ``edges`` edges."""
    return tree.size[t] + 1 <= tree.player.shape[1] and tree.used[t] + edges <= tree.action.shape[1]


@njit(**_JIT)
def simulate(tree, games, settings, t, lane, visit_level, virtual):  # pragma: no cover - compiled
    """One simulation in ``lane`` of tree ``t`` (:func:`descend`, then the leaf): BACKED_UP (a
    finished game, or compiled playouts alone), WAITING (a leaf for the evaluator, left in its
    scratch slot; with playouts too their value is in ``tree.value`` until the evaluator's
    arrives), or COLLIDED (the walk reached a leaf already waiting; taken back)."""
    evaluator = settings.evaluator
    scratch, work = games.scratch, games.work
    batched = evaluator.batched
    leaf = descend(tree, games, settings, t, lane, visit_level, virtual)
    winner = tree.winner[t, leaf]
    if winner != NOT_OVER:
        backup(tree, t, lane, _rules.value_for(winner, 0), 0, virtual)
        if settings.solver:
            propagate(tree, t, lane)
        return BACKED_UP
    if settings.solver and tree.proven[t, leaf] != UNPROVEN:
        backup(tree, t, lane, float(tree.proven[t, leaf]), 0, virtual)
        propagate(tree, t, lane)
        return BACKED_UP
    if tree.count[t, leaf] == PENDING:
        revert(tree, t, lane)
        return COLLIDED
    where = t * tree.leaf.shape[1] + lane
    if evaluator.playouts > 0:
        if evaluator.greedy:  # the lookahead's scratch: work slots trees + 2t and trees + 2t + 1
            trees = tree.root.shape[0]
            value, x = _lookahead.greedy_playout_value(
                scratch,
                where,
                _lookahead.lookahead_room(work, trees + 2 * t),
                t,
                evaluator.playouts,
                evaluator.epsilon,
                tree.rng[t],
            )
        else:
            value, x = _playouts.playout_value(scratch, where, work, t, evaluator.playouts, tree.rng[t])
        tree.rng[t] = x
        tree.value[t, leaf] = value
        if not batched:
            backup(tree, t, lane, value, scratch.to_act[where], virtual)
            return BACKED_UP
    tree.count[t, leaf] = PENDING
    return WAITING


@njit(**_JIT)
def run_playouts(tree, games, settings, t, sims, room):  # pragma: no cover - compiled
    """Up to ``sims`` simulations of an evaluator that is not batched (compiled playouts alone)
    in tree ``t``, one after the other; stops early only when the tree has no room for another
    (fewer than ``room`` free edges). Returns how many ran."""
    for done in range(sims):
        if not has_room(tree, t, room):
            return done
        simulate(tree, games, settings, t, 0, 0, False)
    return sims


@njit(**_JIT)
def select_round(tree, games, settings, budget, batch):  # pragma: no cover - compiled
    """Up to ``lanes`` simulations in every active tree of ``budget`` that has run fewer than
    its ``sims``. The leaves waiting for the evaluator go to ``batch`` in tree and lane order.
    Returns the number of waiting leaves."""
    active, plans, done, sims = budget.active, budget.plans, budget.done, budget.sims
    scratch = games.scratch
    obs, masks, waiting = batch.obs, batch.masks, batch.waiting
    lanes = tree.leaf.shape[1]
    virtual = lanes > 1
    count = 0
    for t in range(active.shape[0]):
        if not active[t]:
            continue
        for lane in range(lanes):
            if done[t] >= sims:
                break
            status = simulate(tree, games, settings, t, lane, plans[t, done[t]], virtual)
            if status == COLLIDED:
                break
            done[t] += 1
            if status == WAITING:
                where = t * lanes + lane
                _views.write_observation(scratch, where, scratch.to_act[where], obs[count])
                _views.write_mask(scratch, where, masks[count])
                waiting[count, 0] = t
                waiting[count, 1] = lane
                count += 1
    return count


@njit(**_JIT)
def expand_round(tree, games, settings, batch, count, logits, values):  # pragma: no cover - compiled
    """Expand the ``count`` leaves waiting in ``batch`` with the evaluator's ``logits`` (``(count,
    actions)``) and ``values`` (for the player to act; a
    :class:`~carnac_env.search.base.Evaluation`), mix in the playout values (when the evaluator
    has playouts too), and back up."""
    scratch, actions, waiting = games.scratch, games.actions, batch.waiting
    evaluator = settings.evaluator
    lanes = tree.leaf.shape[1]
    virtual = lanes > 1
    for k in range(count):
        t = waiting[k, 0]
        lane = waiting[k, 1]
        where = t * lanes + lane
        leaf = tree.leaf[t, lane]
        add_edges(tree, t, leaf, actions, _rules.legal_actions(scratch, where, actions))
        set_priors_from_logits(tree, t, leaf, logits[k])
        value = values[k]
        if evaluator.playouts > 0:
            weight = evaluator.weight
            value = (1.0 - weight) * value + weight * tree.value[t, leaf]
        tree.value[t, leaf] = value
        backup(tree, t, lane, value, scratch.to_act[where], virtual)


@njit(**_JIT)
def write_roots(tree, games, batch, active):  # pragma: no cover - compiled
    """The unexpanded roots of the ``active`` trees, for the network: their games copied to the
    trees' first scratch slots, observations and masks written to ``batch`` as in
    :func:`select_round` (its ``waiting`` gets the trees, lane 0). Returns how many."""
    roots, slots, scratch = games.roots, games.slots, games.scratch
    obs, masks, waiting = batch.obs, batch.masks, batch.waiting
    lanes = tree.leaf.shape[1]
    count = 0
    for t in range(active.shape[0]):
        if active[t] and tree.count[t, tree.root[t]] < 0:
            where = t * lanes
            _rules.copy_game(roots, slots[t], scratch, where)
            _views.write_observation(scratch, where, scratch.to_act[where], obs[count])
            _views.write_mask(scratch, where, masks[count])
            waiting[count, 0] = t
            waiting[count, 1] = 0
            count += 1
    return count


@njit(**_JIT)
def expand_root(tree, t, actions, count, logits, value, with_logits):  # pragma: no cover - compiled
    """Expand tree ``t``'s root over ``actions[:count]``, with priors from ``logits`` (indexed
    by action number) when ``with_logits``, else uniform, and the root's ``value``. No visit."""
    root = tree.root[t]
    add_edges(tree, t, root, actions, count)
    if with_logits:
        set_priors_from_logits(tree, t, root, logits)
    tree.value[t, root] = value


@njit(**_JIT)
def start_tree(tree, games, t):  # pragma: no cover - compiled
    """Empty tree ``t`` and give it a root for its game (``games.slots[t]`` of ``games.roots``; not expanded)."""
    roots, slot = games.roots, games.slots[t]
    tree.size[t] = 0
    tree.used[t] = 0
    for lane in range(tree.leaf.shape[1]):
        tree.depth[t, lane] = 0
        tree.leaf[t, lane] = -1
    tree.root[t] = add_node(tree, t, roots.to_act[slot], _rules.winner_of(roots, slot))


@njit(**_JIT)
def find_position(tree, games, t, target, target_slot, max_depth):  # pragma: no cover - compiled
    """The node of tree ``t`` within ``max_depth`` moves of its root whose game is game
    ``target_slot`` of ``target`` (the root's game being ``games.slots[t]`` of ``games.roots``),
    or -1. Only expanded nodes and their visited children are looked at (depth first)."""
    roots, slot, scratch = games.roots, games.slots[t], games.scratch
    root = tree.root[t]
    if root < 0:
        return -1
    where = t * tree.leaf.shape[1]
    _rules.copy_rules_state(roots, slot, scratch, where)  # replays compared, never observed
    if _rules.same_game(scratch, where, target, target_slot):
        return root
    # an explicit stack of (node, next edge offset) in lane 0's path; the game at the top is rebuilt by replay
    stack_node = tree.path_node[t, 0]
    stack_next = tree.path_edge[t, 0]
    stack_node[0] = root
    stack_next[0] = 0
    top = 1
    while top:
        node = stack_node[top - 1]
        k = stack_next[top - 1]
        count = tree.count[t, node]
        if count < 0 or k >= count or top > max_depth:
            top -= 1
            continue
        stack_next[top - 1] = k + 1
        child = tree.child[t, tree.first[t, node] + k]
        if child < 0:
            continue
        _rules.copy_rules_state(roots, slot, scratch, where)
        for level in range(top):
            parent = stack_node[level]
            edge = tree.first[t, parent] + (stack_next[level] - 1)
            _rules.play_unobserved(scratch, where, tree.action[t, edge])
        if _rules.same_game(scratch, where, target, target_slot):
            return child
        if tree.winner[t, child] == NOT_OVER:
            stack_node[top] = child
            stack_next[top] = 0
            top += 1
    return -1
