"""The compiled simulation loop: descend, evaluate, expand, back up, for many trees at once.

One *round* runs up to ``lanes`` simulations in every active tree (:func:`select_round`): for
each, the root's game is copied into the lane's scratch slot (``tree * lanes + lane``), the
selection rule walks down the expanded tree, playing each edge's action with the kernel's
rules, until it reaches a new node, a finished game or (with playout evaluators) a node seen
once before, which is then expanded and the walk goes on. With several lanes, each walk leaves
a virtual loss on its path (:mod:`carnac_env.search.tree`) so that the next walks of the same
tree go elsewhere; a walk that reaches a leaf already waiting in this round is taken back and
ends the tree's round. What happens at the leaf depends on the evaluator's *mode*:

* ``PLAYOUTS``: compiled random playouts value it at once, and the value is backed up;
* ``NETWORK``: its observation and legal mask are written to the round's batch, and the
  network's logits and value come back in :func:`expand_round`, which expands it and backs
  the value up;
* ``MIXED``: both; the backed-up value is ``(1 - weight) * network + weight * playouts``.

A finished game is scored by the rules and backed up at once, without an evaluation.

Between rounds nothing is kept but the tree: the scratch slots still hold the waiting
leaves' games, so the expansion reads their legal actions there.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from carnac_env.batch import playouts as _playouts
from carnac_env.batch import rules as _rules
from carnac_env.batch import views as _views
from carnac_env.batch.rules import NOT_OVER
from carnac_env.search.rules import select_edge
from carnac_env.search.tree import (
    WAITING as PENDING,
)
from carnac_env.search.tree import (
    add_edges,
    add_node,
    add_virtual_loss,
    backup,
    revert,
    set_priors_from_logits,
    swap_edges,
)

_JIT = {"cache": True, "nogil": True}

#: Evaluator modes.
NETWORK, PLAYOUTS, MIXED = 0, 1, 2

#: What a simulation reports: backed up, waiting for the network, or taken back (a collision).
DONE, WAITING, COLLIDED = 0, 1, 2


@njit(**_JIT)
def descend(tree, t, lane, roots, slot, scratch, rules, visit_level, expand_seen, virtual, actions):  # pragma: no cover
    """Walk tree ``t`` from its root to a leaf, replaying the moves in scratch slot
    ``t * lanes + lane`` (the path goes to ``lane``; with ``virtual`` each edge on it gets a
    virtual loss).

    ``rules`` is ``(root code, root c, root fpu, code, c, fpu, value_scale, maxvisit_init)``
    (:func:`~carnac_env.search.rules.rule_parameters` of the root's rule and the other's). The
    walk stops at a new node (made here for the edge just followed), at a finished game, or at
    an unexpanded node; with ``expand_seen`` (playout evaluators) an unexpanded node that was
    visited before is expanded here (uniform priors) and the walk goes on. Returns the leaf.
    """
    root_code, root_c, root_fpu, code, c, fpu, value_scale, maxvisit_init = rules
    where = t * tree.leaf.shape[1] + lane
    if expand_seen:  # playouts: the scratch slot's observation planes are never read
        _rules.copy_rules_state(roots, slot, scratch, where)
    else:
        _rules.copy_game(roots, slot, scratch, where)
    node = tree.root[t]
    depth = 0
    while tree.winner[t, node] == NOT_OVER:
        if tree.count[t, node] < 0:
            if not (expand_seen and tree.count[t, node] != PENDING and tree.visits[t, node] > 0):
                break
            add_edges(tree, t, node, actions, _rules.legal_actions(scratch, where, actions))
        if depth == 0:
            e = select_edge(tree, t, node, root_code, root_c, root_fpu, value_scale, maxvisit_init, True, visit_level)
        else:
            e = select_edge(tree, t, node, code, c, fpu, value_scale, maxvisit_init, False, visit_level)
        tree.path_node[t, lane, depth] = node
        tree.path_edge[t, lane, depth] = e
        depth += 1
        if virtual:
            add_virtual_loss(tree, t, node, e)
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
def simulate(
    tree, t, lane, roots, slot, scratch, work, rules, visit_level, mode, playouts, virtual, actions
):  # pragma: no cover - compiled
    """One simulation in ``lane`` of tree ``t``: DONE (backed up: a finished game, or playouts),
    WAITING (a leaf for the network, left in its scratch slot; with MIXED its playout value is in
    ``tree.value`` until the network's arrives), or COLLIDED (the walk reached a leaf already
    waiting; taken back)."""
    leaf = descend(tree, t, lane, roots, slot, scratch, rules, visit_level, mode == PLAYOUTS, virtual, actions)
    winner = tree.winner[t, leaf]
    if winner != NOT_OVER:
        backup(tree, t, lane, _rules.value_for(winner, 0), 0, virtual)
        return DONE
    if tree.count[t, leaf] == PENDING:
        revert(tree, t, lane)
        return COLLIDED
    where = t * tree.leaf.shape[1] + lane
    if mode != NETWORK:
        value, x = _playouts.playout_value(scratch, where, work, t, playouts, tree.rng[t])
        tree.rng[t] = x
        tree.value[t, leaf] = value
        if mode == PLAYOUTS:
            backup(tree, t, lane, value, scratch.to_act[where], virtual)
            return DONE
    tree.count[t, leaf] = PENDING
    return WAITING


@njit(**_JIT)
def run_playouts(tree, t, roots, slot, scratch, work, sims, rules, playouts, room, actions):  # pragma: no cover
    """Up to ``sims`` simulations valued by playouts in tree ``t``; stops early only when the
    tree has no room for another (fewer than ``room`` free edges). Returns how many ran."""
    for done in range(sims):
        if not has_room(tree, t, room):
            return done
        simulate(tree, t, 0, roots, slot, scratch, work, rules, 0, PLAYOUTS, playouts, False, actions)
    return sims


@njit(**_JIT)
def select_round(
    tree, active, roots, slots, scratch, work, rules, plans, done, sims, mode, playouts, obs, masks, waiting, actions
):  # pragma: no cover - compiled
    """Up to ``lanes`` simulations in every active tree that has run fewer than ``sims``
    (``done[t]`` counts them; tree ``t``'s next one uses visit level ``plans[t, done[t]]``).
    The leaves waiting for the network go to ``obs`` and ``masks``, their (tree, lane) to
    ``waiting``, in tree and lane order. Returns the number of waiting leaves."""
    lanes = tree.leaf.shape[1]
    virtual = lanes > 1
    count = 0
    for t in range(active.shape[0]):
        if not active[t]:
            continue
        for lane in range(lanes):
            if done[t] >= sims:
                break
            status = simulate(
                tree,
                t,
                lane,
                roots,
                slots[t],
                scratch,
                work,
                rules,
                plans[t, done[t]],
                mode,
                playouts,
                virtual,
                actions,
            )
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
def expand_round(tree, scratch, count, waiting, logits, values, mode, weight, actions):  # pragma: no cover
    """Expand the waiting leaves with the network's ``logits`` (``(count, actions)``) and
    ``values`` (for the player to act), mix in the playout values (MIXED), and back up."""
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
        if mode == MIXED:
            value = (1.0 - weight) * value + weight * tree.value[t, leaf]
        tree.value[t, leaf] = value
        backup(tree, t, lane, value, scratch.to_act[where], virtual)


@njit(**_JIT)
def write_roots(tree, active, roots, slots, scratch, obs, masks, waiting):  # pragma: no cover - compiled
    """The unexpanded roots of the active trees, for the network: their games copied to the
    trees' first scratch slots, observations and masks written as in :func:`select_round`
    (``waiting`` gets the trees). Returns how many."""
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
def start_tree(tree, t, roots, slot):  # pragma: no cover - compiled
    """Empty tree ``t`` and give it a root for game ``slot`` of ``roots`` (not expanded)."""
    tree.size[t] = 0
    tree.used[t] = 0
    for lane in range(tree.leaf.shape[1]):
        tree.depth[t, lane] = 0
        tree.leaf[t, lane] = -1
    tree.root[t] = add_node(tree, t, roots.to_act[slot], _rules.winner_of(roots, slot))


@njit(**_JIT)
def find_position(tree, t, roots, slot, scratch, target, target_slot, max_depth):  # pragma: no cover
    """The node of tree ``t`` within ``max_depth`` moves of its root whose game is game
    ``target_slot`` of ``target`` (the root's game being game ``slot`` of ``roots``), or -1.
    Only expanded nodes and their visited children are looked at (depth first)."""
    root = tree.root[t]
    if root < 0:
        return -1
    where = t * tree.leaf.shape[1]
    _rules.copy_game(roots, slot, scratch, where)
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
        _rules.copy_game(roots, slot, scratch, where)
        for level in range(top):
            parent = stack_node[level]
            edge = tree.first[t, parent] + (stack_next[level] - 1)
            _rules.play(scratch, where, tree.action[t, edge])
        if _rules.same_game(scratch, where, target, target_slot):
            return child
        if tree.winner[t, child] == NOT_OVER:
            stack_node[top] = child
            stack_next[top] = 0
            top += 1
    return -1


@njit(**_JIT)
def restrict_root(tree, t, wanted, count, num_actions):  # pragma: no cover - compiled
    """Keep only the root edges of tree ``t`` whose actions are in ``wanted[:count]`` (the
    visited ones first, for UCT's untried order), renormalising their priors; the others' subtrees
    become unreachable. Returns how many edges were kept."""
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
