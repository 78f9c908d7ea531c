"""The compiled solver (carnac_env.solve) against a brute-force minimax on the core rules.

The reference is a plain memoised minimax written on :class:`~carnac_env.core.game.GameState`
(``legal_actions``, ``apply``, ``result``), with no pruning: on tiny custom boards it visits
every reachable position, and the compiled solver must give the same value on each (and a best
move that achieves it). Hand-built endgames with results worked out by hand come after.
"""

from __future__ import annotations

import random

import pytest

from carnac_env.core.game import OVER, GameState
from carnac_env.errors import CarnacError
from carnac_env.solve import Solution, solve

#: The solver's first compile takes about two minutes and the full check of 3x4 three more: CI's
#: slow entry runs this file (pytest -m slow).
pytestmark = pytest.mark.slow


def _key(state: GameState) -> tuple:
    return (bytes(state.cells), bytes(state.kinds), state.supply, state.phase, state.to_act, state.pending,
            state.pending_colour)  # fmt: skip


def minimax(state: GameState, memo: dict) -> int:
    """The value of ``state`` for its player to act (+1, 0, -1), by trying every move; every
    position reached is kept in ``memo`` as ``key -> (value, state)``."""
    key = _key(state)
    if key in memo:
        return memo[key][0]
    if state.phase == OVER:
        value = state.result().reward(state.to_act)
    else:
        value = -2
        for action in state.legal_actions():
            child = state.copy()
            child.apply(action)
            child_value = minimax(child, memo)
            value = max(value, child_value if child.to_act == state.to_act else -child_value)
    memo[key] = (value, state)
    return value


def _agreement(memo: dict) -> tuple[int, list]:
    agree, wrong = 0, []
    for value, state in memo.values():
        solution = solve(state)
        ok = solution.result == value
        if ok and state.phase != OVER:  # the best move achieves the value
            child = state.copy()
            child.apply(solution.best_action)
            child_value = memo[_key(child)][0]
            ok = (child_value if child.to_act == state.to_act else -child_value) == value
        if ok:
            agree += 1
        else:
            wrong.append((state.diagram(), state.phase, state.to_act, value, solution))
    return agree, wrong


@pytest.mark.parametrize("last_tilt", [True, False])
def test_every_reachable_position_of_a_3x4_board_with_4_megaliths(last_tilt: bool) -> None:
    memo: dict = {}
    minimax(GameState("custom", rows=3, cols=4, megaliths=4, last_tilt=last_tilt), memo)
    agree, wrong = _agreement(memo)
    assert not wrong, f"{agree} of {len(memo)} positions agree; first disagreements: {wrong[:3]}"
    assert agree == len(memo) > 10_000, f"{agree} of {len(memo)} positions agree"


def test_sampled_endgames_of_a_4x4_board_with_5_megaliths() -> None:
    """Random games cut at 3 megaliths left, each solved completely by both."""
    rng = random.Random(34)
    memo: dict = {}
    for _ in range(12):
        state = GameState("custom", rows=4, cols=4, megaliths=5)
        while state.supply > 3 or state.phase != 0:
            state.apply(rng.choice(state.legal_actions()))
        minimax(state, memo)
    agree, wrong = _agreement(memo)
    assert not wrong, f"{agree} of {len(memo)} positions agree; first disagreements: {wrong[:3]}"
    assert agree == len(memo) > 1000, f"{agree} of {len(memo)} positions agree"


def _custom(rows: list[str], **options: object) -> GameState:
    board_options = {"rows": len(rows), "cols": len(rows[0]), "last_tilt": False, **options}
    supply = board_options.pop("supply", 1)
    to_act = board_options.pop("to_act", 0)
    return GameState.from_diagram("custom", rows, supply=supply, to_act=to_act, **board_options)


def test_the_last_megalith_closes_a_dolmen() -> None:
    # Red completes r-r-R on the top row with the last megalith (a standing red top on c1's
    # square 2, action 2 * 4 + 0); White to act completes its own row instead.
    state = _custom(["RR.", "WW."])
    assert solve(state) == Solution(1, 8, solve(state).nodes)
    assert solve(_custom(["RR.", "WW."], to_act=1)).result == 1


def test_no_dolmen_can_be_made_a_draw() -> None:
    assert solve(_custom(["R.W"])).result == 0


def test_the_tie_break_on_the_largest_dolmen() -> None:
    # Both have one dolmen of 3; Red to place the last megalith: extending its dolmen to 4 wins.
    state = _custom(["RRR.", "....", "WWW."])
    assert solve(state).result == 1
    # White to place it: White extends its own and wins.
    assert solve(_custom(["RRR.", "....", "WWW."], to_act=1)).result == 1


def test_the_responder_is_the_other_player() -> None:
    # Red places the last megalith beside its pair; with last_tilt the megalith may be tilted by
    # White, who then decides: Red's result is what White's best answer leaves.
    state = _custom(["RR..", "....", "...."], last_tilt=True)
    reference: dict = {}
    assert solve(state).result == minimax(state, reference)
    responding = state.copy()
    responding.apply(2 * 4 + 0)  # Red on square 2, red top: White to answer
    assert responding.to_act == 1 and responding.phase == 1
    assert solve(responding).result == minimax(responding, reference)


def test_refusals() -> None:
    with pytest.raises(CarnacError, match="28 megaliths left, more than max_megaliths_left=8"):
        solve(GameState("small"))
    with pytest.raises(CarnacError, match="table_mb=0"):
        solve(_custom(["R.W"]), table_mb=0)
    with pytest.raises(CarnacError, match="table_mb=99999"):
        solve(_custom(["R.W"]), table_mb=99999)
    with pytest.raises(CarnacError, match="node_limit=10"):
        solve(GameState("custom", rows=4, cols=4, megaliths=5), max_megaliths_left=5, node_limit=10, table_mb=1)
    with pytest.raises(CarnacError, match="malformed"):
        solve("not a state")  # type: ignore[arg-type]
