"""MCTS-Solver in the search (``Search(solver=True)``): proven results passed up the tree.

The reference is a plain minimax on the core rules (``GameState.legal_actions``, ``apply``,
``result``), with the turn order read from the state (the responder is the other player; after
a decline the placer places again). On tiny endgames a search with the solver must prove its
root with the minimax's value, and play a move that achieves it; off, the option changes
nothing (tests/golden_search keeps the trees, and a search that proves nothing is the same bit
for bit with it on).
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from carnac_env.core.game import OVER, PLACE, RESPOND, GameState
from carnac_env.errors import CarnacError
from carnac_env.search import PUCT, UCT, Evaluator, Gumbel, Playouts, Search
from carnac_env.search.tree import UNPROVEN


def minimax(state: GameState, memo: dict) -> int:
    """The value of ``state`` for its player to act (+1, 0, -1), trying every move."""
    key = (bytes(state.cells), bytes(state.kinds), state.supply, state.phase, state.to_act, state.pending,
           state.pending_colour)  # fmt: skip
    if key not in memo:
        if state.phase == OVER:
            memo[key] = state.result().reward(state.to_act)
        else:
            best = -2
            for action in state.legal_actions():
                child = state.copy()
                child.apply(action)
                value = minimax(child, memo)
                best = max(best, value if child.to_act == state.to_act else -value)
            memo[key] = best
    return memo[key]


def value_after(state: GameState, action: int, memo: dict) -> int:
    """The minimax value of ``action`` for the player to act in ``state``."""
    child = state.copy()
    child.apply(action)
    value = minimax(child, memo)
    return value if child.to_act == state.to_act else -value


def endgames(count: int, seed: int) -> list[GameState]:
    """Random positions of a 3x4 board with 5 megaliths, 1 or 2 left, placing or responding."""
    rng = random.Random(seed)
    found: list[GameState] = []
    while len(found) < count:
        state = GameState("custom", rows=3, cols=4, megaliths=5)
        left = 1 + len(found) % 2
        while not state.is_over and (state.supply > left or (state.phase == RESPOND) != (len(found) % 4 < 2)):
            state.apply(rng.choice(state.legal_actions()))
        if not state.is_over:
            found.append(state)
    return found


class Uniform(Evaluator):
    """A batched evaluator: uniform logits and a value of 0 (for the network's code path)."""

    def evaluate(self, leaves):
        return np.zeros((len(leaves), leaves.board.num_actions), np.float32), np.zeros(len(leaves), np.float32)


SEARCHES = {
    "uct-playouts": lambda board, seed: Search(board, Playouts(), UCT(1.0), seed=seed, solver=True),
    "puct-playouts": lambda board, seed: Search(board, Playouts(), PUCT(1.5), seed=seed, solver=True),
    "puct-batched-lanes": lambda board, seed: Search(board, Uniform(), PUCT(1.5), seed=seed, lanes=4, solver=True),
    "gumbel": lambda board, seed: Search(board, Uniform(), Gumbel(noise=False), seed=seed, solver=True),
}


#: Simulations per position, and how many of the 12 positions each search must prove. A draw
#: is proven only once every move is (PUCT keeps to the drawing move and rarely proves the
#: losing ones of a wide draw, nor does Gumbel, whose root halving drops the moves that look
#: bad); UCT's exploration proves all of them.
BUDGETS = {
    "uct-playouts": (30_000, 12),
    "puct-playouts": (6000, 11),
    "puct-batched-lanes": (6000, 11),
    "gumbel": (6000, 9),
}


@pytest.mark.parametrize("kind", list(SEARCHES))
def test_the_root_is_proven_with_the_minimax_value(kind: str) -> None:
    memo: dict = {}
    sims, wanted = BUDGETS[kind]
    phases, results = set(), set()
    count = 0
    for k, state in enumerate(endgames(12, seed=34)):
        truth = minimax(state, memo)
        search = SEARCHES[kind](state.board, k)
        search.set_games([state])
        search.run(sims)
        edges = search.root(0)
        for action, proof in zip(edges.actions, search.root_proofs(0), strict=True):
            assert proof == UNPROVEN or proof == value_after(state, int(action), memo), f"{kind}: move {action}"
        proven = search.proven(0)
        if proven is None:
            continue
        count += 1
        assert proven == truth, f"{kind}: {state.diagram()} phase {state.phase}: proven {proven}, truly {truth}"
        action = search.gumbel_action(0) if kind == "gumbel" else search.best_action(0)
        assert value_after(state, action, memo) == truth, f"{kind}: the move {action} does not achieve {truth}"
        phases.add(state.phase)
        results.add(truth)
    assert phases == {PLACE, RESPOND}, "proven: placing and responding"
    assert results >= ({-1, 1} if kind == "gumbel" else {-1, 0, 1}), f"{kind}: proven results {results}"
    assert count >= wanted, f"{kind}: {count} of 12 roots proven in {sims} simulations"


def test_a_proven_root_stops_searching_and_a_proven_win_is_played() -> None:
    state = endgames(1, seed=5)[0]
    search = Search(state.board, Playouts(), UCT(1.0), seed=0, solver=True)
    search.set_games([state])
    search.run(6000)
    assert search.proven(0) is not None
    edges = search.root(0)
    visits = edges.visits.sum()
    search.run(500)  # every simulation stops at the proven root
    assert search.root(0).visits.sum() == visits
    proofs = search.root_proofs(0)
    if (proofs == 1).any():
        assert proofs[list(edges.actions).index(search.best_action(0))] == 1


def test_without_proofs_the_solver_changes_nothing() -> None:
    """Far from the end nothing is proven, and the trees are the same bit for bit."""
    trees = []
    for solver in (False, True):
        search = Search("small", Playouts(), UCT(1.0), seed=3, solver=solver)
        search.set_games([GameState("small")])
        search.run(400)
        assert search.proven(0) is None
        a = search.arrays
        trees.append([getattr(a, name)[0, : a.size[0]].copy() for name in ("visits", "player", "count")])
        trees[-1] += [getattr(a, name)[0, : a.used[0]].copy() for name in ("action", "n", "w", "child")]
        assert (a.proven[0, : a.size[0]] == UNPROVEN).all()
    for off, on in zip(*trees, strict=True):
        assert np.array_equal(off, on)


def test_the_root_restricted_to_losing_moves_is_proven_again() -> None:
    memo: dict = {}
    for state in endgames(12, seed=7):
        winners = [a for a in state.legal_actions() if value_after(state, a, memo) == 1]
        others = [a for a in state.legal_actions() if a not in winners]
        if winners and others:
            break
    else:
        pytest.fail("no position with a winning and a non-winning move")
    search = Search(state.board, Playouts(), UCT(1.0), seed=0, solver=True)
    search.set_games([state])
    search.run(6000)
    assert search.proven(0) == 1
    search.set_games([state], reuse=True)  # the same position: the tree is kept
    search.restrict_root(0, others)
    assert search.proven(0) != 1
    search.run(6000)
    assert search.proven(0) == max(value_after(state, a, memo) for a in others)


def test_refusals() -> None:
    with pytest.raises(CarnacError, match="solver"):
        Search("small", Playouts(), UCT(1.0), solver="yes")  # type: ignore[arg-type]
