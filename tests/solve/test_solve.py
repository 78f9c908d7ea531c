"""The compiled solver (carnac_env.solve) against a brute-force minimax on the core rules.

The reference is a plain memoised minimax written on :class:`~carnac_env.core.game.GameState`
(``legal_actions``, ``apply``, ``result``), with no pruning: on tiny custom boards it visits
every reachable position, and the compiled solver must give the same value on each (and a best
move that achieves it). Hand-built endgames with results worked out by hand come after.
"""

from __future__ import annotations

import random
import subprocess
import sys

import pytest
from _frameworks import require

from carnac_env.core.game import OVER, GameState
from carnac_env.errors import CarnacError
from carnac_env.solve import Solution, solve

#: The solver's first compile takes about half a minute and the checks two more: CI's
#: slow entry runs this file (pytest -m slow).
pytestmark = pytest.mark.slow


def _key(state: GameState) -> tuple:
    return (bytes(state.cells), bytes(state.kinds), state.supply, state.phase, state.to_act, state.pending,
            state.pending_colour)  # fmt: skip


def _margin(state: GameState) -> int:
    """A finished game's dolmens of the player to act minus the opponent's (the core's scorer)."""
    dolmens = state.result().dolmens
    return len(dolmens[state.to_act]) - len(dolmens[1 - state.to_act])


def minimax(state: GameState, memo: dict) -> tuple[int, int]:
    """The lexicographic value ``(result, margin)`` of ``state`` for its player to act, by trying
    every move: the result (+1, 0, -1) first, then the final dolmen margin; every position
    reached is kept in ``memo`` as ``key -> (value, state)``."""
    key = _key(state)
    if key in memo:
        return memo[key][0]
    if state.phase == OVER:
        value = (state.result().reward(state.to_act), _margin(state))
    else:
        value = (-2, 0)
        for action in state.legal_actions():
            child = state.copy()
            child.apply(action)
            value = max(value, _for_parent(state, child, minimax(child, memo)))
    memo[key] = (value, state)
    return value


def _for_parent(parent: GameState, child: GameState, value: tuple[int, int]) -> tuple[int, int]:
    """A child's value seen by the parent's player to act (negated when the player changes)."""
    return value if child.to_act == parent.to_act else (-value[0], -value[1])


def _agreement(memo: dict, margin: bool = False) -> tuple[int, list]:
    """How many positions of ``memo`` the solver gets right (the result, and with ``margin``
    the margin too, and a best move that achieves them), and the first wrong ones."""
    agree, wrong = 0, []
    for value, state in memo.values():
        solution = solve(state, margin=margin)
        got = (solution.result, solution.margin) if margin else solution.result
        expected = value if margin else value[0]
        ok = got == expected
        if ok and state.phase != OVER:  # the best move achieves the value
            child = state.copy()
            child.apply(solution.best_action)
            child_value = _for_parent(state, child, memo[_key(child)][0])
            ok = (child_value if margin else child_value[0]) == expected
        if ok:
            agree += 1
        else:
            wrong.append((state.diagram(), state.phase, state.to_act, value, solution))
    return agree, wrong


@pytest.mark.parametrize("last_tilt", [True, False])
def test_every_reachable_position_of_a_3x4_board_with_4_megaliths(last_tilt: bool) -> None:
    memo: dict = {}
    minimax(GameState("custom", rows=3, cols=4, megaliths=4, last_tilt=last_tilt), memo)
    agree, wrong = _agreement(memo, margin=not last_tilt)  # the margin too on one of the rules (the smaller)
    assert not wrong, f"{agree} of {len(memo)} positions agree; first disagreements: {wrong[:3]}"
    assert agree == len(memo) > 10_000, f"{agree} of {len(memo)} positions agree"


def test_sampled_endgames_of_a_4x4_board_with_5_megaliths() -> None:
    """Random games cut at 3 megaliths left, each solved completely by both (result and margin)."""
    rng = random.Random(34)
    memo: dict = {}
    for _ in range(12):
        state = GameState("custom", rows=4, cols=4, megaliths=5)
        while state.supply > 3 or state.phase != 0:
            state.apply(rng.choice(state.legal_actions()))
        minimax(state, memo)
    agree, wrong = _agreement(memo, margin=True)
    assert not wrong, f"{agree} of {len(memo)} positions agree; first disagreements: {wrong[:3]}"
    assert agree == len(memo) > 1000, f"{agree} of {len(memo)} positions agree"


def test_finished_games_through_the_compiled_search() -> None:
    """A finished game goes through the compiled search like any other (it used to be scored
    in Python because the compiled path crashed on it): the result and margin of the core's
    scorer, no move; and so again in a fresh process, which runs the search from numba's
    on-disk cache (the crash was there: a cached recursive function, numba issue 6061)."""
    rng = random.Random(6)
    finished = []
    for rows, cols, megaliths, last_tilt in [(3, 4, 4, True), (2, 3, 6, False), (3, 3, 9, True)]:
        for _ in range(20):
            state = GameState("custom", rows=rows, cols=cols, megaliths=megaliths, last_tilt=last_tilt)
            while state.phase != OVER:
                state.apply(rng.choice(state.legal_actions()))
            finished.append(state)
    assert {state.empty for state in finished} & {0}, "a full board is among them"
    for state in finished:
        assert solve(state) == Solution(state.result().reward(state.to_act), -1, 1), state.diagram()
        solution = solve(state, margin=True)  # a search for each, of one node
        assert solution == Solution(solution.result, -1, 2, _margin(state)), state.diagram()
    script = (
        "import random\n"
        "from carnac_env.core.game import OVER, GameState\n"
        "from carnac_env.solve import solve\n"
        "rng = random.Random(6)\n"
        "state = GameState('custom', rows=3, cols=4, megaliths=4)\n"
        "while state.phase != OVER:\n"
        "    state.apply(rng.choice(state.legal_actions()))\n"
        "print(solve(state).result, solve(state, margin=True).margin, state.result().reward(state.to_act))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    result, margin, expected = map(int, done.stdout.split())
    assert result == expected and abs(margin) <= 2


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
    assert solve(state).result == minimax(state, reference)[0]
    responding = state.copy()
    responding.apply(2 * 4 + 0)  # Red on square 2, red top: White to answer
    assert responding.to_act == 1 and responding.phase == 1
    assert solve(responding).result == minimax(responding, reference)[0]


def test_a_tilt_blocked_by_the_edge() -> None:
    # 1x4, "WW..", the last megalith: White places a white top on square 2 (action 2 * 4 + 0).
    # Its east tilt would cover squares 3 and 4, and 4 is off the board; its west tilt is
    # blocked by the W on square 1: it stands, and W-W-W is a dolmen. White wins.
    state = _custom(["WW.."], to_act=1, last_tilt=True)
    assert solve(state) == Solution(1, 8, solve(state).nodes)
    # One column more ("WW..."), the same placement may be tilted east, onto squares 3 and 4,
    # which breaks the three; and from square 4 the west tilt that would join them can be
    # declined. Red always keeps White to a draw.
    wide = _custom(["WW..."], to_act=1, last_tilt=True)
    assert solve(wide).result == 0
    # Red to place on 1x4 cannot make a dolmen and need not give White one: a draw.
    assert solve(_custom(["WW.."], last_tilt=True)).result == 0


def test_the_last_megalith_may_still_be_tilted() -> None:
    # 1x5, "RR...", Red places the last megalith. With last_tilt=False, a red top on square 2
    # ends the game with R-R-R: Red wins by one dolmen.
    assert solve(_custom(["RR..."], last_tilt=False), margin=True)[::3] == (1, 1)
    # With last_tilt=True White may still tilt it (east, onto squares 3 and 4: no three), and a
    # megalith Red places further east is either blocked or declined: a draw.
    assert solve(_custom(["RR..."], last_tilt=True), margin=True)[::3] == (0, 0)


def test_repeated_declines() -> None:
    """Declines keep the placer placing: the solver follows the player to act through a line of
    two declines in a row (then the last megalith), agreeing with the brute force at each step."""
    state = _custom(["......", "......"], supply=3, last_tilt=True)
    reference: dict = {}
    decline = state.board.num_actions - 1
    for action in [2 * 4 + 0, decline, 8 * 4 + 1, decline]:  # Red places, White declines, twice
        assert solve(state, margin=True)[::3] == minimax(state, reference)
        state.apply(action)
    assert state.to_act == 0 and state.supply == 1 and state.phase == 0  # Red places the last one
    assert solve(state, margin=True)[::3] == minimax(state, reference)


def test_agreement_with_openspiel_alpha_beta() -> None:
    """OpenSpiel's own alpha_beta_search on python_carnac (petit_menec) gives the same value on
    endgames of random games, 1 and 2 megaliths left."""
    require("pyspiel", "the openspiel extra")
    from open_spiel.python.algorithms.minimax import alpha_beta_search

    from carnac_env.envs.openspiel import load_game

    game = load_game("petit_menec")
    rng = random.Random(2026)
    agree = 0
    positions = 0
    for left in (1, 1, 1, 1, 2):
        spiel_state = game.new_initial_state()
        while spiel_state.game_state.supply > left or spiel_state.game_state.phase != 0:
            spiel_state.apply_action(rng.choice(spiel_state.legal_actions()))
        core = spiel_state.game_state
        value, action = alpha_beta_search(game, spiel_state, maximum_depth=2 * left + 2)
        positions += 1
        agree += solve(core).result == int(value)
        child = core.copy()
        child.apply(action)  # OpenSpiel's move achieves its value by the solver too
        child_value = solve(child).result
        assert (child_value if child.to_act == core.to_act else -child_value) == int(value)
    assert agree == positions == 5


def test_refusals() -> None:
    with pytest.raises(CarnacError, match="28 megaliths left, more than max_megaliths_left=8"):
        solve(GameState("small"))
    with pytest.raises(CarnacError, match="max_megaliths_left=-1"):
        solve(_custom(["R.W"]), max_megaliths_left=-1)
    with pytest.raises(CarnacError, match="table_mb=0"):
        solve(_custom(["R.W"]), table_mb=0)
    with pytest.raises(CarnacError, match="table_mb=99999"):
        solve(_custom(["R.W"]), table_mb=99999)
    with pytest.raises(CarnacError, match="node_limit=-1"):
        solve(_custom(["R.W"]), node_limit=-1)
    for seconds in (-1, float("nan"), 10**6, "1", True):
        with pytest.raises(CarnacError, match="seconds="):
            solve(_custom(["R.W"]), seconds=seconds)  # type: ignore[arg-type]
    with pytest.raises(CarnacError, match="margin="):
        solve(_custom(["R.W"]), margin=1)  # type: ignore[arg-type]
    with pytest.raises(CarnacError, match="node_limit=10"):
        solve(GameState("custom", rows=4, cols=4, megaliths=5), max_megaliths_left=5, node_limit=10, table_mb=1)
    with pytest.raises(CarnacError, match="malformed"):
        solve("not a state")  # type: ignore[arg-type]


def test_a_time_limit_gives_up_and_leaves_the_solver_usable() -> None:
    big = GameState("custom", rows=4, cols=5, megaliths=8)
    with pytest.raises(CarnacError, match=r"gave up after seconds=0\.05"):
        solve(big, seconds=0.05)
    state = _custom(["RR.", "WW."])
    assert solve(state, seconds=60).result == solve(state).result == 1
