"""The solver's speed levers (issue 52) keep it exact: each against a brute-force minimax.

The reference is a plain memoised minimax over the lexicographic (result, margin) on the core
rules (:class:`~carnac_env.core.game.GameState`: ``legal_actions``, ``apply``, ``result``), with
no pruning, no table and no symmetry. On tiny square custom boards every lever (null-window
searches, the canonical hash over the board's symmetries, the two-tier table, killer moves,
enhanced transposition cut-offs, placements ordered by the megaliths beside them, the last
megalith solved without a tree, placements ordered by a one-megalith look-ahead),
alone and together, must give the reference's result and margin, and a best move that achieves
them; so must every image of a position under the board's eight symmetries.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from _minimax import check, key, positions

from carnac_env.core.game import OVER, PLACE, GameState
from carnac_env.core.symmetry import symmetries, symmetry
from carnac_env.errors import CarnacError
from carnac_env.solve import alphabeta
from carnac_env.solve.alphabeta import clear_table, free_tables, memory_bytes, solve

pytestmark = pytest.mark.slow  # the solver's first compile takes a minute on a shared machine

OFF = {
    "null_window": False,
    "symmetry": False,
    "two_tier": False,
    "killers": False,
    "etc": False,
    "adjacent": 0,
    "last_megalith": False,
    "order": 0,
}
LEVERS = {
    "none": OFF,
    "null_window": {**OFF, "null_window": True},
    "symmetry": {**OFF, "symmetry": True},
    "two_tier": {**OFF, "two_tier": True},
    "killers": {**OFF, "killers": True},
    "etc": {**OFF, "etc": True},
    "adjacent_any": {**OFF, "adjacent": 1},
    "adjacent_most": {**OFF, "adjacent": 2},
    "last_megalith": {**OFF, "last_megalith": True},
    "order": {**OFF, "order": 2},
    "all": {
        "null_window": True,
        "symmetry": True,
        "two_tier": True,
        "killers": True,
        "etc": True,
        "adjacent": 2,
        "last_megalith": True,
        "order": 2,
    },
}


@pytest.mark.parametrize("lever", list(LEVERS))
def test_each_lever_agrees_with_brute_force(lever: str) -> None:
    memo: dict = {}
    states = positions(3, 3, 4, 4, 12, seed=52) + positions(4, 4, 4, 2, 6, seed=53)
    # a table of 1 MiB from an empty start each time, and the same table kept across positions
    wrong = []
    for keep in (False, True):
        for state in states:
            if not keep:
                clear_table()
            problem = check(state, memo, table_mb=1, **LEVERS[lever])
            if problem:
                wrong.append((state.diagram(), state.phase, state.to_act, problem))
    assert not wrong, f"{len(wrong)} of {2 * len(states)} wrong; first: {wrong[:3]}"


def test_every_image_under_the_symmetries_has_the_value_and_a_best_move() -> None:
    memo: dict = {}
    states = [s for s in positions(3, 3, 4, 4, 8, seed=54) if s.phase != OVER][:30]
    assert len(symmetries(states[0].board)) == 8
    wrong = []
    clear_table()  # the images share the table: each is answered through its canonical key
    for state in states:
        for name in symmetries(state.board):
            image = symmetry(state.board, name).state(state)
            problem = check(image, memo)
            if problem:
                wrong.append((name, state.diagram(), problem))
    assert not wrong, f"{len(wrong)} wrong; first: {wrong[:3]}"


def _busy_position() -> GameState:
    """A 4x4 position with 4 megaliths left and no symmetry of its own."""
    rng = random.Random(7)
    while True:
        state = GameState("custom", rows=4, cols=4, megaliths=6)
        while state.supply > 4 or state.phase != PLACE:
            state.apply(rng.choice(state.legal_actions()))
        images = {key(symmetry(state.board, name).state(state)) for name in symmetries(state.board)}
        if len(images) == 8:
            return state


def test_an_image_of_a_solved_position_is_answered_by_the_table() -> None:
    """After a solve, each image's children are images of the solved position's children:
    with the canonical hash the table answers them, so the image costs its root's moves only;
    without it the image is searched again."""
    state = _busy_position()
    moves = len(state.legal_actions())
    for name in symmetries(state.board)[1:]:
        image = symmetry(state.board, name).state(state)
        clear_table()
        first = solve(state, symmetry=True)
        again = solve(image, symmetry=True)
        assert again.result == first.result
        assert again.nodes <= 2 * (moves + 1) < first.nodes, name
        clear_table()
        solve(state, symmetry=False)
        assert solve(image, symmetry=False).nodes > 2 * (moves + 1), name


def test_a_crowded_table_keeps_the_answers() -> None:
    """A table far too small for the search (the two-tier buckets replace all the time), on a
    position too large for the brute force: every lever's result and margin are the plain
    search's with a roomy table, and its best move gets them (the child solved plainly)."""
    state = _busy_position()
    clear_table()
    plain = solve(state, margin=True, **OFF)
    for name, lever in LEVERS.items():
        clear_table()
        got = solve(state, margin=True, table_mb=1, **lever)
        assert (got.result, got.margin) == (plain.result, plain.margin), name
        child = state.copy()
        child.apply(got.best_action)
        clear_table()
        value = solve(child, margin=True, **OFF)
        sign = 1 if child.to_act == state.to_act else -1
        assert (sign * value.result, sign * value.margin) == (plain.result, plain.margin), name


def test_the_options_are_checked() -> None:
    state = GameState("custom", rows=3, cols=3, megaliths=3)
    for name in ("null_window", "symmetry", "two_tier", "killers", "etc", "last_megalith"):
        for bad in (1, "yes", None):
            with pytest.raises(CarnacError, match=name):
                solve(state, **{name: bad})  # type: ignore[arg-type]
    for bad in (-1, 3, 1.5, True, "2"):
        with pytest.raises(CarnacError, match="adjacent"):
            solve(state, adjacent=bad)  # type: ignore[arg-type]
    for bad in (-1, 1.5, True, "2"):
        with pytest.raises(CarnacError, match="order"):
            solve(state, order=bad)  # type: ignore[arg-type]


def test_memory_bytes_counts_what_a_solve_holds() -> None:
    """The server's ledger: the table, the keys over the symmetries and the per-ply arrays."""
    free_tables()
    state = _busy_position()
    solve(state, max_megaliths_left=4, table_mb=2)
    held = alphabeta._LOCAL.tables
    work = alphabeta._LOCAL.work[state.board]
    arrays = [
        *held.table,
        *held.identity,
        *held.symmetric,
        work.moves,
        work.frames,
        work.hashes,
        work.killers,
        *work.last,
    ]
    total = sum(a.nbytes for a in arrays if isinstance(a, np.ndarray))
    assert total <= memory_bytes(state.board, 4, 2) < total + 2**20
    free_tables()
