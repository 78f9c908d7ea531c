"""Greedy playouts (``mcts:playout=greedy``, ``Playouts(policy="greedy")``): the options, the
compiled greedy move against greedy's own values, the playouts' ends and values, and the
search's determinism per seed."""

from __future__ import annotations

import random

import numpy as np
import pytest
from _greedy_reference import reference_action_values

from carnac_env.agents import MCTSAgent, make
from carnac_env.batch import BatchGame
from carnac_env.batch.rng import seed_state
from carnac_env.batch.rules import legal_actions
from carnac_env.batch.state import new_state
from carnac_env.core.game import GameState
from carnac_env.errors import CarnacError
from carnac_env.search import UCT, Evaluator, Playouts, Search
from carnac_env.search.evaluators import evaluator_parameters
from carnac_env.search.lookahead import TIE, greedy_action, greedy_playout_value, lookahead_room

BOARD = "petit_menec"


def position(plies: int, seed: int, board: str = BOARD) -> GameState:
    """The position after ``plies`` seeded random moves."""
    rng = random.Random(seed)
    state = GameState(board)
    for _ in range(plies):
        if state.is_over:
            break
        state.apply(rng.choice(state.legal_actions()))
    return state


def loaded(state: GameState) -> BatchGame:
    engine = BatchGame(state.board, num_envs=1)
    engine.set_state(0, state)
    return engine


# ----------------------------------------------------------------------------- options
def test_spec_options_reach_the_evaluator() -> None:
    agent = make("mcts:sims=10:playout=greedy:epsilon=0.25", seed=1)
    assert agent.evaluator == Playouts(1, "greedy", 0.25)
    assert agent.spec == "mcts:sims=10:playout=greedy:epsilon=0.25"
    parameters = evaluator_parameters(agent.evaluator)
    assert parameters.greedy and parameters.epsilon == 0.25
    default = evaluator_parameters(make("mcts").evaluator)
    assert not default.greedy and default.epsilon == 0.0


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ("mcts:playout=smart", ["playout", "'smart'", "'random'", "'greedy'"]),
        ("mcts:playout=greedy:epsilon=1.5", ["epsilon", "1.5"]),
        ("mcts:playout=greedy:epsilon=-0.1", ["epsilon", "-0.1"]),
        ("mcts:epsilon=0.1", ["epsilon=0.1", "playout=greedy"]),
    ],
)
def test_bad_options_are_refused(spec: str, words: list[str]) -> None:
    with pytest.raises(CarnacError) as error:
        make(spec)
    for word in words:
        assert word in str(error.value)


def test_bad_evaluator_settings_are_refused() -> None:
    with pytest.raises(CarnacError, match="'random', 'greedy'"):
        Playouts(policy="minimax")
    with pytest.raises(CarnacError, match="epsilon"):
        Playouts(policy="greedy", epsilon=2.0)
    with pytest.raises(CarnacError, match="policy='greedy'"):
        Playouts(epsilon=0.5)
    with pytest.raises(CarnacError, match="epsilon"):
        MCTSAgent(playout="random", epsilon=0.5)


# ----------------------------------------------------------------------------- the move
def test_greedy_move_is_greedys_move_without_epsilon() -> None:
    """With epsilon 0 the compiled playout move is one of greedy's best (by the Python
    reference), and it is greedy's move wherever greedy's best is unique."""
    unique = 0
    for seed in range(12):
        state = position(2 * (seed % 5), seed)
        if state.is_over:
            continue
        values = reference_action_values(state)
        best = max(v for v, _ in values)
        ties = {a for v, a in values if v >= best - TIE}
        engine = loaded(state)
        work, _ = new_state(state.board, 3)
        for draw in range(4):
            _, action = greedy_action(engine.kernel, 0, lookahead_room(work, 1), 0.0, seed_state(draw))
            assert int(action) in ties
        if len(ties) == 1:
            unique += 1
            assert int(action) == next(iter(ties))
    assert unique > 0  # the positions include some with one best move


def test_epsilon_one_plays_legal_random_moves() -> None:
    state = GameState(BOARD)  # a placement: many legal moves
    engine = loaded(state)
    work, _ = new_state(state.board, 3)
    legal = set(state.legal_actions())
    seen = set()
    x = seed_state(5)
    for _ in range(40):
        x, action = greedy_action(engine.kernel, 0, lookahead_room(work, 1), 1.0, x)
        x = np.uint64(x)  # the state comes back as a Python int
        assert int(action) in legal
        seen.add(int(action))
    assert len(seen) > 5  # random, not greedy's one move


# ----------------------------------------------------------------------------- playouts
@pytest.mark.parametrize("epsilon", [0.0, 0.3])
def test_playouts_reach_the_end_with_valid_values(epsilon: float) -> None:
    state = position(4, 3)
    engine = loaded(state)
    work, work_arrays = new_state(state.board, 3)
    for draw in range(3):
        value, _ = greedy_playout_value(engine.kernel, 0, lookahead_room(work, 1), 0, 1, epsilon, seed_state(draw))
        assert value in (-1.0, 0.0, 1.0)  # one playout: a finished game's result
        assert legal_actions(work, 0, np.empty(4 * state.board.squares + 5, np.int32)) == 0  # over
        assert (work_arrays.kinds[0] != 0).any()
        mean, _ = greedy_playout_value(engine.kernel, 0, lookahead_room(work, 1), 0, 3, epsilon, seed_state(draw))
        assert -1.0 <= mean <= 1.0
    after = engine.get_state(0)  # the leaf is left as it was
    assert after.legal_actions() == state.legal_actions() and bytes(after.cells) == bytes(state.cells)


def test_finished_game_is_scored() -> None:
    """From a finished game (one a greedy playout ended, left in its slot) every seed gives the
    same result: nothing is played."""
    state = position(4, 5)
    engine = loaded(state)
    work, _ = new_state(state.board, 3)
    greedy_playout_value(engine.kernel, 0, lookahead_room(work, 1), 0, 1, 0.0, seed_state(0))
    other, _ = new_state(state.board, 3)
    values = {
        greedy_playout_value(work, 0, lookahead_room(other, 1), 0, 1, 0.0, seed_state(draw))[0] for draw in range(4)
    }
    assert len(values) == 1 and values <= {-1.0, 0.0, 1.0}


# ----------------------------------------------------------------------------- the search
def root_table(evaluator: Playouts, seed: int) -> tuple[list[int], list[float]]:
    search = Search(BOARD, evaluator, UCT(1.0), seed=seed)
    search.set_games([position(2, 7)])
    search.run(40)
    edges = search.root(0)
    return edges.visits.tolist(), edges.values.tolist()


def test_search_is_deterministic_per_seed() -> None:
    greedy = Playouts(policy="greedy", epsilon=0.2)
    first = root_table(greedy, 11)
    assert first == root_table(greedy, 11)
    assert sum(first[0]) == 40
    assert first != root_table(Playouts(), 11)  # greedy playouts value the leaves otherwise


def test_agent_is_deterministic_per_seed() -> None:
    state = position(2, 4)
    moves = [make("mcts:sims=20:playout=greedy:epsilon=0.1", seed=3).act(state) for _ in range(2)]
    assert moves[0] == moves[1] and moves[0] in state.legal_actions()


class PythonGreedyPlayouts(Evaluator):
    """A batched evaluator whose values are :meth:`Playouts.evaluate`'s (the Python path)."""

    def __init__(self) -> None:
        self.inner = Playouts(policy="greedy", epsilon=0.1)

    def evaluate(self, leaves):
        return self.inner.evaluate(leaves)


def test_python_path_gives_valid_values() -> None:
    search = Search(BOARD, PythonGreedyPlayouts(), UCT(1.0), seed=2)
    search.set_games([position(2, 8)])
    search.run(12)
    edges = search.root(0)
    assert edges.visits.sum() == 12
    assert ((edges.values >= -1.0) & (edges.values <= 1.0)).all()
