"""The search's plug points (issue 48): every plug-point type stated once in search/base.py, the
selection registry and its compiled switch, the selections' flags that Search reads instead of
knowing the rules, and the kernels' structured arguments."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from carnac_env.agents.mcts import MCTSAgent
from carnac_env.batch.rules import NOT_OVER
from carnac_env.core.game import GameState
from carnac_env.errors import CarnacError
from carnac_env.search import (
    PUCT,
    SELECTIONS,
    UCT,
    Gumbel,
    Mixed,
    Network,
    Playouts,
    Search,
    base,
    evaluators,
    gumbel,
    lookahead,
    make_selection,
    playouts,
    puct,
    selection,
    simulation,
    tree,
    uct,
)
from carnac_env.search.tree import UNPROVEN, new_tree


def _node(visits: list[int], totals: list[float], priors: list[float], lost: int = -1):
    """A tree whose root has one edge per entry, all tried and visited (children unexpanded); with
    ``lost`` >= 0 that edge's child is proven lost for the root's player (MCTS-Solver)."""
    count = len(visits)
    t, a = new_tree(1, count + 1, count, 4)
    a.root[0], a.size[0], a.used[0] = 0, 1 + count, count
    a.count[0, 0] = a.tried[0, 0] = count
    a.count[0, 1:] = -1
    a.winner[0, :] = NOT_OVER
    a.proven[0, :] = UNPROVEN
    a.value[0, 0] = 0.1
    a.n[0, :count] = visits
    a.w[0, :count] = totals
    a.prior[0, :count] = priors
    a.logit[0, :count] = np.log(priors)
    a.action[0, :count] = np.arange(count)
    a.child[0, :count] = np.arange(1, count + 1)
    a.visits[0, 0] = sum(visits)
    if lost >= 0:
        a.proven[0, 1 + lost] = -1  # a loss for player 0, who acts at the root
    return t


# the best edge by every rule is edge 0, which the solver case proves lost
VISITS, TOTALS, PRIORS = [3, 2, 1, 1], [2.5, 0.5, -0.5, 0.2], [0.4, 0.3, 0.2, 0.1]


@pytest.mark.parametrize("name", list(SELECTIONS))
def test_every_registered_selection_has_its_line_in_the_compiled_switch(name: str) -> None:
    rule = SELECTIONS[name]()
    parameters = rule.parameters()
    assert parameters.kind == list(SELECTIONS).index(name) == type(rule).kind
    for at_root in (True, False):
        for level in (0, 1):
            for solver in (False, True):
                lost = 0 if solver else -1
                want = type(rule).select(
                    _node(VISITS, TOTALS, PRIORS, lost), 0, 0, parameters.constants, at_root, level, solver
                )
                got = selection.select_edge(
                    _node(VISITS, TOTALS, PRIORS, lost), 0, 0, parameters, at_root, level, solver
                )
                assert got == want >= 0, (name, at_root, level, solver)


def test_a_kind_without_a_line_selects_nothing() -> None:
    parameters = base.SelectionParameters(len(SELECTIONS), (1.0, 0.0, 0.0, 0.0))
    assert selection.select_edge(_node(VISITS, TOTALS, PRIORS), 0, 0, parameters, False, 0, False) == -1


def test_the_registry_builds_and_checks_selections() -> None:
    assert make_selection("puct", c=2.0) == PUCT(2.0)
    assert make_selection("gumbel", considered=4, noise=False) == Gumbel(4, noise=False)
    with pytest.raises(CarnacError, match="unknown selection 'ucb'; expected one of uct, puct, gumbel"):
        make_selection("ucb")

    class Unregistered(PUCT):
        pass

    for bad in (Unregistered(), "uct", None):
        with pytest.raises(CarnacError, match=r"one of carnac_env.search's selections \(UCT, PUCT, Gumbel\)"):
            Search("small", Network(_Uniform()), bad)  # type: ignore[arg-type]


class _Uniform:
    def forward(self, obs: np.ndarray, supply_scale: float | None = None) -> tuple[np.ndarray, np.ndarray]:
        n, rows, cols, _ = obs.shape
        return np.zeros((n, rows * cols * 4 + 5), np.float32), np.zeros(n, np.float32)


def test_search_reads_the_selections_flags_not_their_names() -> None:
    # Gumbel: paired, needs logits, starts every search afresh, scores and improves its root
    assert (Gumbel.paired, Gumbel.needs_logits, Gumbel.reusable) == (True, True, False)
    assert all((r.paired, r.needs_logits, r.reusable) == (False, False, True) for r in (UCT, PUCT))
    with pytest.raises(CarnacError, match="Gumbel's selection comes as a pair"):
        Search("small", Network(_Uniform()), Gumbel(), root_selection=PUCT())
    with pytest.raises(CarnacError, match="the Gumbel selection needs an evaluator's logits"):
        Search("small", Playouts(), Gumbel())
    search = Search("small", Network(_Uniform()), Gumbel(4, noise=False))
    with pytest.raises(CarnacError, match="tree reuse needs a root selection that can go on from a reused root"):
        search.set_games([GameState("small")], reuse=True)
    assert UCT().root_noise(np.random.default_rng(0), 3) is None and UCT().visit_plan(3, 5) is None
    assert Gumbel(noise=False).root_noise(np.random.default_rng(0), 3) is None
    assert Gumbel().visit_plan(3, 8).tolist() == [0, 0, 0, 1, 1, 2, 2, 3]
    search = Search("small", Playouts(), PUCT())
    search.set_games([GameState("small")])
    search.run(10)
    with pytest.raises(CarnacError, match="gumbel_action needs a search whose root selection scores its actions"):
        search.gumbel_action(0)


def test_the_plug_point_types_are_stated_once_in_base() -> None:
    import carnac_env.search as search_package

    for name in ("Leaves", "Evaluator", "Evaluation", "RootEdges", "Selection"):
        assert getattr(search_package, name) is getattr(base, name), name
    for module in (evaluators, simulation, selection, search_package.search):
        for name in ("Leaves", "Evaluator", "Evaluation", "EvaluatorParameters", "SelectionParameters", "RootEdges"):
            if hasattr(module, name):
                assert getattr(module, name) is getattr(base, name), (module.__name__, name)
    for rule in SELECTIONS.values():
        assert issubclass(rule, base.Selection)
    for evaluator in (Playouts, Network, Mixed):
        assert issubclass(evaluator, base.Evaluator)
    state = GameState("small")
    search = Search("small", Playouts(), UCT())
    search.set_games([state])
    search.run(5)
    assert isinstance(search.root(0), base.RootEdges)


def test_the_builtin_evaluators_return_an_evaluation() -> None:
    got = {}

    class Spy(base.Evaluator):
        def evaluate(self, leaves):
            got["playouts"] = Playouts(2).evaluate(leaves)
            return got["playouts"]

    search = Search("small", Spy(), PUCT(), seed=1)
    search.set_games([GameState("small")])
    search.run(3)
    assert isinstance(got["playouts"], base.Evaluation) and got["playouts"].logits.shape[1] == search.num_actions


def test_mcts_takes_any_registered_selection_that_is_not_paired() -> None:
    assert MCTSAgent(c=0.5).rule == UCT(0.5)
    assert MCTSAgent(rule=PUCT(1.0)).rule == PUCT(1.0)
    with pytest.raises(CarnacError, match=r"mcts rule must be a selection of its own below the root \(UCT, PUCT\)"):
        MCTSAgent(rule=Gumbel())


def test_the_compiled_kernels_take_a_few_structured_arguments() -> None:
    """No compiled function of the search takes more than 7 arguments (they took up to 16):
    the engine states, settings, budget and batch travel as structrefs (simulation.Games ...)."""
    for module in (simulation, selection, lookahead, tree, uct, puct, gumbel):
        for name, function in vars(module).items():
            py_func = getattr(function, "py_func", None)
            if py_func is None or py_func.__module__ != module.__name__:
                continue
            assert len(inspect.signature(py_func).parameters) <= 7, f"{module.__name__}.{name}"
    assert playouts.random_action.py_func.__module__ == playouts.__name__
