"""``mcts:solve=K`` and ``az:solve=K``: the exact solver's move in small endgames.

The option is read like every other (one declaration, checked, shown by ``carnac agents``);
with at most K megaliths left the agent plays :func:`carnac_env.solve.solve`'s move, under a
node budget after which it searches as usual. The tests that call the solver are slow (its
first compile takes minutes).
"""

from __future__ import annotations

import pytest

from carnac_env.agents import endgame, make
from carnac_env.agents.az import AZAgent
from carnac_env.agents.mcts import MCTSAgent
from carnac_env.core.game import GameState
from carnac_env.errors import CarnacError
from carnac_env.solve import solve

#: A position of the small board from a game of greedy against greedy (found by playing such
#: games and solving every position with 2 to 4 megaliths left): White to place, with one
#: winning move (74) among 32, which ``mcts:sims=100`` (seed 0) misses.
ONLY_WIN = {
    "diagram": [".rr.rrRR", "RWrrRwwR", "...RWRwR", "R.RRRRwW", ".RR.wwWW"],
    "to_act": 1,
    "supply": 2,
    "win": 74,
}


def only_win() -> GameState:
    return GameState.from_diagram("small", ONLY_WIN["diagram"], to_act=ONLY_WIN["to_act"], supply=ONLY_WIN["supply"])


@pytest.mark.parametrize("name", ["mcts", "az"])
def test_the_option_is_read_checked_and_written_back(name: str) -> None:
    agent = make(f"{name}:solve=3")
    assert agent.solve == 3 and agent.spec == f"{name}:solve=3"
    assert make(f"{name}:solve=0").spec == name
    for bad in ("9", "-1", "1.5", "yes"):
        with pytest.raises(CarnacError, match=f"solve={bad}"):
            make(f"{name}:solve={bad}")
    cls = MCTSAgent if name == "mcts" else AZAgent
    for bad in (True, 2.0, "3", endgame.MAX_SOLVE + 1):
        with pytest.raises(CarnacError, match="solve"):
            cls(solve=bad)


def test_no_solver_above_k_megaliths_left() -> None:
    state = GameState("small")
    assert endgame.solver_move(state, 0) is None
    assert endgame.solver_move(state, endgame.MAX_SOLVE) is None  # 28 left


@pytest.mark.slow
def test_the_solver_agents_find_the_only_winning_move() -> None:
    state = only_win()
    assert solve(state).result == 1
    for action in state.legal_actions():
        child = state.copy()
        child.apply(action)
        value = solve(child).result * (1 if child.to_act == state.to_act else -1)
        assert (value == 1) == (action == ONLY_WIN["win"]), action
    plain = make("mcts:sims=100", seed=0).act(state)
    assert plain != ONLY_WIN["win"], "the position no longer shows the difference: find another"
    for spec in ("mcts:sims=100:solve=4", "az:solve=4"):
        agent = make(spec, seed=0)
        assert agent.act(state) == ONLY_WIN["win"], spec
    assert make("mcts:sims=100:solve=4", seed=0).last_sims == 0  # no search: the solver's move


@pytest.mark.slow
def test_a_solver_that_gives_up_leaves_the_move_to_the_search(monkeypatch: pytest.MonkeyPatch) -> None:
    state = only_win()
    monkeypatch.setattr(endgame, "NODE_LIMIT", 1)
    assert endgame.solver_move(state, 4) is None
    agent = make("mcts:sims=100:solve=4", seed=0)
    action = agent.act(state)
    assert action in state.legal_actions() and agent.last_sims == 100
    assert agent.search is not None and agent.search.solver


@pytest.mark.slow
def test_a_solver_move_does_not_depend_on_what_was_solved_before() -> None:
    """Each move starts from an empty table: a move after other solves (which fill the table
    and steer its move ordering) is the move of a fresh process."""
    state = only_win()
    fresh = endgame.solver_move(state, 4)
    for action in state.legal_actions()[:8]:  # fill the table with other positions' entries
        child = state.copy()
        child.apply(action)
        solve(child)
    assert endgame.solver_move(state, 4) == fresh


@pytest.mark.slow
def test_only_a_spent_budget_falls_back_to_the_search(monkeypatch: pytest.MonkeyPatch) -> None:
    """A solver error other than a spent budget is a bug to report, not a reason to search."""

    def broken(*args: object, **kwargs: object) -> None:
        raise CarnacError("solve got a malformed state: planted")

    monkeypatch.setattr(endgame, "solve", broken)
    with pytest.raises(CarnacError, match="planted"):
        endgame.solver_move(only_win(), 4)
