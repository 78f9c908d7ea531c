"""The last megalith solved without a tree (``solve(last_megalith=True)``) is the plain search.

:mod:`carnac_env.solve.last_megalith` scores each final board from the groups the new squares
touch instead of playing the moves. Checked three ways: against the brute-force minimax of
tests/_minimax.py on tiny boards of every rules variant that changes the last megalith
(``last_tilt`` off, dolmens of 1, 2 and 5 squares, where merging groups lowers a count);
against the plain search on random endgames of the built-in boards; and on hand-built
positions where the edge or the pieces block the tilts.
"""

from __future__ import annotations

import random

import pytest
from _minimax import check, positions

from carnac_env.core.boards import make_board
from carnac_env.core.game import OVER, PLACE, GameState
from carnac_env.solve import clear_table, solve

pytestmark = pytest.mark.slow  # the solver's first compile takes a minute on a shared machine

VARIANTS = {
    "plain": {},
    "no_last_tilt": {"last_tilt": False},
    "dolmens_of_1": {"min_dolmen": 1},
    "dolmens_of_2": {"min_dolmen": 2},
}


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_it_agrees_with_brute_force(variant: str) -> None:
    memo: dict = {}
    rules = VARIANTS[variant]
    states = positions(3, 3, 4, 3, 12, seed=71, **rules) + positions(3, 4, 5, 2, 8, seed=72, **rules)
    states = [s for s in states if s.phase != OVER]
    assert sum(s.supply == 1 and s.phase == PLACE for s in states) >= 10  # the layer it replaces
    wrong = []
    for state in states:
        clear_table()
        problem = check(state, memo, table_mb=1, last_megalith=True)
        if problem:
            wrong.append((state.diagram(), state.phase, state.to_act, problem))
    assert not wrong, f"{len(wrong)} of {len(states)} wrong; first: {wrong[:3]}"


def _endgame(board: object, left: int, seed: int) -> GameState | None:
    rng = random.Random(seed)
    state = GameState(board)  # type: ignore[arg-type]
    while not state.is_over and not (state.phase == PLACE and state.supply == left):
        state.apply(rng.choice(state.legal_actions()))
    return None if state.is_over else state


@pytest.mark.parametrize(
    "board",
    [
        make_board("small"),
        make_board("petit_menec", last_tilt=False),
        make_board("kerlescan"),
        make_board("custom", rows=4, cols=5, megaliths=9, min_dolmen=2),
    ],
    ids=["small", "petit_menec_no_last_tilt", "kerlescan", "custom_dolmens_of_2"],
)
def test_it_agrees_with_the_plain_search_on_random_endgames(board: object) -> None:
    """Result, margin and a best move that keeps both (the child solved plainly), from the
    last megalith to three left."""
    checked = 0
    for left in (1, 2, 3):
        for seed in range(8):
            state = _endgame(board, left, seed)
            if state is None:
                continue
            clear_table()
            plain = solve(state, margin=True, last_megalith=False, order=0)
            clear_table()
            fast = solve(state, margin=True, last_megalith=True, order=0)
            assert (fast.result, fast.margin) == (plain.result, plain.margin), (left, seed)
            child = state.copy()
            child.apply(fast.best_action)
            clear_table()
            value = solve(child, margin=True, last_megalith=False, order=0)
            sign = 1 if child.to_act == state.to_act else -1
            assert (sign * value.result, sign * value.margin) == (plain.result, plain.margin), (left, seed)
            checked += 1
    assert checked >= 20


def _custom(rows: list[str], **options: object) -> GameState:
    board_options = {"rows": len(rows), "cols": len(rows[0]), **options}
    supply = board_options.pop("supply", 1)
    to_act = board_options.pop("to_act", 0)
    return GameState.from_diagram("custom", rows, supply=supply, to_act=to_act, **board_options)


@pytest.mark.parametrize(
    "rows",
    [
        ["RR.", "WW."],  # the only empty squares sit on the edge: no tilt fits, no answer
        ["RR..", "WW.W"],  # a tilt east from square 2 is blocked by the edge, south by a piece
        ["R...", "W..W", "R..R"],  # tilts of two squares fit in some directions only
        ["RW.", "...", "WR."],
        ["R.R.", "....", "W.W."],  # one megalith can merge two groups, or split nothing
    ],
)
@pytest.mark.parametrize("last_tilt", [True, False])
def test_hand_built_last_megaliths(rows: list[str], last_tilt: bool) -> None:
    """Positions where the board's edge and its pieces decide which answers exist: the
    last-megalith layer gives the brute force's result, margin and a move that gets them, for
    either player to act."""
    memo: dict = {}
    for to_act in (0, 1):
        state = _custom(rows, last_tilt=last_tilt, to_act=to_act)
        clear_table()
        assert check(state, memo, last_megalith=True) is None, (rows, to_act)


def test_it_searches_fewer_positions_than_the_tree() -> None:
    """The layer scores final boards instead of entering answer nodes: fewer nodes counted."""
    state = _endgame(make_board("petit_menec"), 3, 5)
    assert state is not None
    clear_table()
    plain = solve(state, last_megalith=False, order=0)
    clear_table()
    fast = solve(state, last_megalith=True, order=0)
    assert fast.result == plain.result
    assert fast.nodes < plain.nodes
