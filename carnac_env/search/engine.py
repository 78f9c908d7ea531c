"""The compiled simulation loop: descend, evaluate, expand, back up, for many trees at once.

One *round* runs one simulation in every active tree (:func:`select_round`): the root's game
is copied into the tree's scratch slot, the selection rule walks down the expanded tree,
playing each edge's action with the kernel's rules, until it reaches a new node, a finished
game or (with playout evaluators) a node seen once before, which is then expanded and the
walk goes on. What happens at the leaf depends on the evaluator's *mode*:

* ``PLAYOUTS``: compiled random playouts value it at once, and the value is backed up;
* ``NETWORK``: its observation and legal mask are written to the round's batch, and the
  network's logits and value come back in :func:`expand_round`, which expands it and backs
  the value up;
* ``MIXED``: both; the backed-up value is ``(1 - weight) * network + weight * playouts``.

A finished game is scored by the rules and backed up at once, without an evaluation.

Between rounds nothing is kept but the tree: the scratch slot still holds each waiting
leaf's game, so the expansion reads its legal actions there.
"""

from __future__ import annotations

from numba import njit

from carnac_env.batch import rules as _rules
from carnac_env.batch import views as _views
from carnac_env.search import games
from carnac_env.search.games import NOT_OVER
from carnac_env.search.rules import select_edge
from carnac_env.search.tree import add_edges, add_node, backup, set_priors_from_logits

_JIT = {"cache": True, "nogil": True}

#: Evaluator modes.
NETWORK, PLAYOUTS, MIXED = 0, 1, 2

#: What :func:`select_round` reports for a tree.
DONE, WAITING, FULL = 0, 1, 2


@njit(**_JIT)
def descend(tree, t, roots, slot, scratch, rules, visit_level, expand_seen, actions):  # pragma: no cover
    """Walk tree ``t`` from its root to a leaf, replaying the moves in ``scratch`` slot ``t``.

    ``rules`` is ``(root code, root c, root fpu, code, c, fpu, value_scale, maxvisit_init)``
    (:func:`~carnac_env.search.rules.rule_parameters` of the root's rule and the other's). The walk stops at a
    new node (made here for the edge just followed), at a finished game, or at an unexpanded
    node; with ``expand_seen`` (playout evaluators) an unexpanded node that was visited before
    is expanded here (uniform priors) and the walk goes on. The path is left in the tree for
    :func:`~carnac_env.search.tree.backup`; returns the leaf.
    """
    root_code, root_c, root_fpu, code, c, fpu, value_scale, maxvisit_init = rules
    games.copy_game(roots, slot, scratch, t)
    node = tree.root[t]
    depth = 0
    while tree.winner[t, node] == NOT_OVER:
        if tree.count[t, node] < 0:
            if not (expand_seen and tree.visits[t, node] > 0):
                break
            add_edges(tree, t, node, actions, games.legal_actions(scratch, t, actions))
        if depth == 0:
            e = select_edge(tree, t, node, root_code, root_c, root_fpu, value_scale, maxvisit_init, True, visit_level)
        else:
            e = select_edge(tree, t, node, code, c, fpu, value_scale, maxvisit_init, False, visit_level)
        tree.path_node[t, depth] = node
        tree.path_edge[t, depth] = e
        depth += 1
        ended = _rules.play(scratch, t, tree.action[t, e])
        child = tree.child[t, e]
        if child < 0:
            if ended:
                child = add_node(tree, t, -1, games.winner_of(scratch, t))
            else:
                child = add_node(tree, t, scratch.to_act[t], NOT_OVER)
            tree.child[t, e] = child
            node = child
            break
        node = child
    tree.depth[t] = depth
    tree.leaf[t] = node
    return node


@njit(**_JIT)
def has_room(tree, t, edges):  # pragma: no cover - compiled
    """Whether tree ``t`` has room for one more simulation: a node, and ``edges`` edges."""
    return tree.size[t] + 1 <= tree.player.shape[1] and tree.used[t] + edges <= tree.action.shape[1]


@njit(**_JIT)
def simulate(tree, t, roots, slot, scratch, work, rules, visit_level, mode, playouts, actions):  # pragma: no cover
    """One simulation in tree ``t``: DONE (backed up: a finished game, or playouts), or WAITING
    (a leaf for the network, left in scratch slot ``t``; with MIXED its playout value is in
    ``tree.value`` until the network's arrives)."""
    leaf = descend(tree, t, roots, slot, scratch, rules, visit_level, mode == PLAYOUTS, actions)
    winner = tree.winner[t, leaf]
    if winner != NOT_OVER:
        backup(tree, t, games.value_for(winner, 0), 0)
        return DONE
    if mode != NETWORK:
        value, x = games.playout_value(scratch, t, work, t, playouts, tree.rng[t])
        tree.rng[t] = x
        tree.value[t, leaf] = value
        if mode == PLAYOUTS:
            backup(tree, t, value, scratch.to_act[t])
            return DONE
    return WAITING


@njit(**_JIT)
def run_playouts(tree, t, roots, slot, scratch, work, sims, rules, playouts, room, actions):  # pragma: no cover
    """Up to ``sims`` simulations valued by playouts in tree ``t``; stops early only when the
    tree has no room for another (fewer than ``room`` free edges). Returns how many ran."""
    for done in range(sims):
        if not has_room(tree, t, room):
            return done
        simulate(tree, t, roots, slot, scratch, work, rules, 0, PLAYOUTS, playouts, actions)
    return sims


@njit(**_JIT)
def select_round(
    tree, active, roots, slots, scratch, work, rules, levels, mode, playouts, room, obs, masks, waiting, full, actions
):  # pragma: no cover - compiled
    """One simulation in every active tree; the leaves waiting for the network go to ``obs``
    and ``masks`` (their trees to ``waiting``), in tree order. A tree without room for the
    simulation is marked in ``full`` and skipped. Returns the number of waiting leaves."""
    count = 0
    for t in range(active.shape[0]):
        if not active[t]:
            continue
        if not has_room(tree, t, room[t]):
            full[t] = True
            continue
        status = simulate(tree, t, roots, slots[t], scratch, work, rules, levels[t], mode, playouts, actions)
        if status == WAITING:
            player = scratch.to_act[t]
            _views.write_observation(scratch, t, player, obs[count])
            _views.write_mask(scratch, t, masks[count])
            waiting[count] = t
            count += 1
    return count


@njit(**_JIT)
def expand_round(tree, scratch, count, waiting, logits, values, mode, weight, actions):  # pragma: no cover
    """Expand the waiting leaves with the network's ``logits`` (``(count, actions)``) and
    ``values`` (for the player to act), mix in the playout values (MIXED), and back up."""
    for k in range(count):
        t = waiting[k]
        leaf = tree.leaf[t]
        add_edges(tree, t, leaf, actions, games.legal_actions(scratch, t, actions))
        set_priors_from_logits(tree, t, leaf, logits[k])
        value = values[k]
        if mode == MIXED:
            value = (1.0 - weight) * value + weight * tree.value[t, leaf]
        tree.value[t, leaf] = value
        backup(tree, t, value, scratch.to_act[t])


@njit(**_JIT)
def write_roots(tree, active, roots, slots, scratch, obs, masks, waiting):  # pragma: no cover - compiled
    """The unexpanded roots of the active trees, for the network: their games copied to the
    scratch slots, observations and masks written as in :func:`select_round`. Returns how many."""
    count = 0
    for t in range(active.shape[0]):
        if active[t] and tree.count[t, tree.root[t]] < 0:
            games.copy_game(roots, slots[t], scratch, t)
            _views.write_observation(scratch, t, scratch.to_act[t], obs[count])
            _views.write_mask(scratch, t, masks[count])
            waiting[count] = t
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
    tree.depth[t] = 0
    tree.leaf[t] = -1
    tree.root[t] = add_node(tree, t, roots.to_act[slot], games.winner_of(roots, slot))


@njit(**_JIT)
def find_position(tree, t, roots, slot, scratch, target, target_slot, max_depth):  # pragma: no cover
    """The node of tree ``t`` within ``max_depth`` moves of its root whose game is game
    ``target_slot`` of ``target`` (the root's game being game ``slot`` of ``roots``), or -1.
    Only expanded nodes and their visited children are looked at (depth first)."""
    root = tree.root[t]
    if root < 0:
        return -1
    games.copy_game(roots, slot, scratch, t)
    if games.same_game(scratch, t, target, target_slot):
        return root
    # an explicit stack of (node, next edge offset); the game at the top is rebuilt by replay
    stack_node = tree.path_node[t]
    stack_next = tree.path_edge[t]
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
        games.copy_game(roots, slot, scratch, t)
        for level in range(top):
            parent = stack_node[level]
            edge = tree.first[t, parent] + (stack_next[level] - 1)
            _rules.play(scratch, t, tree.action[t, edge])
        if games.same_game(scratch, t, target, target_slot):
            return child
        if tree.winner[t, child] == NOT_OVER:
            stack_node[top] = child
            stack_next[top] = 0
            top += 1
    return -1
