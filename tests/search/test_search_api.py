"""The public Search API refuses bad slots, boards, actions, trees and call orders with a
CarnacError (never a crash), and the search budgets (issue 32): sims, seconds and tree memory."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from carnac_env.agents import make
from carnac_env.batch import BatchGame
from carnac_env.core.game import GameState
from carnac_env.errors import CarnacError
from carnac_env.search import UCT, Playouts, Search
from carnac_env.search import search as search_module
from carnac_env.search.tree import new_tree, tree_bytes


def small_search() -> Search:
    return Search("small", Playouts(), UCT(1.0), trees=2, seed=0)


@pytest.mark.parametrize("slots", [[100000], [-5], [0.5], [True], [2**80], "ab", 7])
def test_bad_slots_are_refused(slots) -> None:
    search = small_search()
    games = BatchGame("small", num_envs=2, seed=0)
    with pytest.raises(CarnacError, match="slots"):
        search.set_roots(games.kernel, slots)


def test_a_kernel_of_another_board_or_type_is_refused() -> None:
    search = small_search()
    with pytest.raises(CarnacError, match="not on this search's board"):
        search.set_roots(BatchGame("le_menec", num_envs=1, seed=0).kernel, [0])
    with pytest.raises(CarnacError, match="KernelState"):
        search.set_roots(np.zeros(3), [0])
    with pytest.raises(CarnacError, match="board 'le_menec'"):
        search.set_games([GameState("le_menec")])
    with pytest.raises(CarnacError, match="GameState"):
        search.set_games(["small"])


def test_root_actions_trees_and_call_order() -> None:
    search = small_search()
    with pytest.raises(CarnacError, match="not been searched"):
        search.best_action(0)
    with pytest.raises(CarnacError, match="no root"):
        search.restrict_root(0, [0])
    search.set_games([GameState("small")])
    for actions in ([0.5], [2**70], [-1], [True]):
        with pytest.raises(CarnacError, match="restrict_root actions"):
            search.restrict_root(0, actions)
    with pytest.raises(CarnacError, match="not a tree"):
        search.restrict_root(5, [0])
    with pytest.raises(CarnacError, match="not been searched"):
        search.best_action(0)
    search.run(10)
    assert search.best_action(0) in GameState("small").legal_actions()
    for bad in (2, -1, 0.0, True):
        with pytest.raises(CarnacError, match="not a tree"):
            search.best_action(bad)
    with pytest.raises(CarnacError, match="not been searched"):
        search.policy(1)  # the second tree was never given a game
    with pytest.raises(CarnacError, match="ties"):
        search.best_action(0, ties="visits")


@pytest.mark.parametrize(
    "spec, match",
    [
        ("mcts:sims=100000000", "sims"),
        ("mcts:sims=" + "1" + "0" * 23, "sims"),
        ("mcts:seconds=1e308", "seconds"),
        ("az:sims=10000000", "sims"),
    ],
)
def test_agent_options_have_upper_bounds(spec, match) -> None:
    with pytest.raises(CarnacError, match=match):
        make(spec)


def test_a_sims_budget_beyond_the_tree_budget_is_refused_before_allocating() -> None:
    agent = make("mcts:sims=3000000:width=0")
    with pytest.raises(CarnacError, match=r"mcts option sims=3000000 on board 'le_menec'.*limit of 2048 MB"):
        agent.act(GameState("le_menec"))
    with pytest.raises(CarnacError, match=r"sims=100000000.*limit"):
        search = Search("le_menec", Playouts(), UCT(1.0))
        search.set_games([GameState("le_menec")])
        search.run(100_000_000)


def test_tree_bytes_counts_what_new_tree_allocates() -> None:
    for sizes in [(1, 1, 1, 5, 1), (3, 70, 900, 13, 8)]:
        _, arrays = new_tree(*sizes)
        assert tree_bytes(*sizes) == sum(a.nbytes for a in arrays)


def test_a_time_budget_stops_growing_the_tree_at_the_cap(monkeypatch) -> None:
    monkeypatch.setattr(search_module, "TREE_BUDGET", 4 << 20)
    search = Search("medium", Playouts(), UCT(1.0), seed=0)
    search.set_games([GameState("medium")])
    done = search.run(0, seconds=1.5)
    assert done > 0
    assert sum(a.nbytes for a in search.arrays) <= 4 << 20
    assert search.best_action(0) in GameState("medium").legal_actions()


FUZZ = textwrap.dedent(
    """
    import numpy as np
    from hypothesis import given, settings, strategies as st, HealthCheck
    from carnac_env.batch import BatchGame
    from carnac_env.core.game import GameState
    from carnac_env.errors import CarnacError
    from carnac_env.search import UCT, Playouts, Search

    SEARCH = Search("small", Playouts(), UCT(1.0), trees=2, seed=0)
    OTHER = BatchGame("petit_menec", num_envs=2, seed=0).kernel
    MINE = BatchGame("small", num_envs=3, seed=0).kernel
    numbers = st.one_of(
        st.integers(-(2**70), 2**70), st.integers(-3, 400),
        st.floats(allow_nan=True), st.booleans(), st.text(max_size=2),
    )
    calls = st.one_of(
        st.tuples(st.just("set_roots"), st.sampled_from(["mine", "other"]), st.lists(numbers, max_size=4)),
        st.tuples(st.just("restrict_root"), numbers, st.one_of(st.none(), st.lists(numbers, max_size=4))),
        st.tuples(st.just("run"), st.integers(-2, 40), st.just(None)),
        st.tuples(st.sampled_from(["best_action", "root", "policy", "root_value"]), numbers, st.just(None)),
        st.tuples(st.just("set_games"), st.sampled_from(["small", "le_menec"]), st.just(None)),
    )

    @settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(calls, max_size=8))
    def fuzz(program):
        for name, a, b in program:
            try:
                if name == "set_roots":
                    SEARCH.set_roots(MINE if a == "mine" else OTHER, b)
                elif name == "restrict_root":
                    SEARCH.restrict_root(a, b)
                elif name == "run":
                    SEARCH.run(a)
                elif name == "set_games":
                    SEARCH.set_games([GameState(a)])
                else:
                    getattr(SEARCH, name)(a)
            except CarnacError:
                pass

    fuzz()
    print("fuzzed")
    """
)


@pytest.mark.slow  # about a minute: hypothesis's 300 call sequences
def test_fuzz_the_public_search_api_in_a_subprocess() -> None:
    """Random call sequences with bad and good arguments: only CarnacError, and no crash (a
    segfault in compiled code would end the subprocess, failing this test, not pytest)."""
    done = subprocess.run([sys.executable, "-c", FUZZ], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-4000:]
    assert "fuzzed" in done.stdout


def test_a_replay_buffer_beyond_its_budget_is_refused_before_training() -> None:
    from carnac_env.train.config import REPLAY_BUDGET, Config, replay_bytes

    with pytest.raises(CarnacError, match=r"buffer=100000000 needs 540\.3 GiB.*limit of 16 GiB"):
        Config(board="le_menec", buffer=100_000_000).check()
    most = REPLAY_BUDGET // replay_bytes(1, ["le_menec"])
    Config(board="le_menec", buffer=most).check()
    Config(board="le_menec").check()
