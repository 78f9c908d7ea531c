"""The batched engine (carnac_env.batch) against the rules core.

The differential tests play random games in a BatchGame and, in lockstep, one core
GameState per slot (the shared harness of tests/_lockstep.py), comparing masks,
observations, players, rewards and (periodically) the whole state after every step.
Hand-built positions like those of tests/rules/ are loaded into batch slots with
``set_state`` and played the same way. The default suite plays a few
hundred games per official board; the ``slow`` tests play 10,000 per board.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from _lockstep import CoreLanes
from hypothesis import given, settings
from hypothesis import strategies as st

from carnac_env.batch import MAX_ENVS, BatchGame, BatchStep, batch_scores, dolmen_winner
from carnac_env.batch import rules as batch_rules
from carnac_env.batch import views as batch_views
from carnac_env.batch.scoring import dolmens_of, group_into
from carnac_env.batch.state import new_state
from carnac_env.core import (
    BOARDS,
    OVER,
    GameState,
    legal_mask,
    make_board,
    observation_planes,
    place_action,
    score,
    validate,
)
from carnac_env.core.scoring import groups
from carnac_env.envs.infos import info_dolmen_slots
from carnac_env.errors import CarnacError, IllegalActionError
from carnac_env.search import playouts
from carnac_env.search.playouts import playout_actions, random_playout


# --------------------------------------------------------------------------- the lockstep harness
class Lockstep:
    """A BatchGame and one core GameState per slot (tests/_lockstep.py), checked after every step."""

    def __init__(self, board: str, num_envs: int, seed: int, **rules):
        self.games = BatchGame(board, num_envs=num_envs, seed=seed, **rules)
        self.core = CoreLanes(self.games.board, lanes=num_envs)
        self.steps = 0
        self.check(self.games.reset(), "reset")

    @property
    def finished(self) -> int:
        return self.core.finished

    def check(self, step: BatchStep, where: str, full: bool = False) -> None:
        assert step.observation.dtype == np.int8 and step.action_mask.dtype == bool
        assert step.current_player.dtype == np.int8
        self.core.check(
            where,
            {
                "current_player": step.current_player,
                "legal_action_mask": step.action_mask,
                "observation": step.observation,
            },
        )
        if full:
            for i, state in enumerate(self.core.games):
                assert self.games.get_state(i) == state, f"{where}: env {i}"

    def step(self, actions: np.ndarray, active: np.ndarray | None = None) -> BatchStep:
        step = self.games.step(actions, active=active)
        rewards, ended = self.core.apply(actions, active)
        np.testing.assert_array_equal(step.terminated, ended, err_msg="terminated")
        np.testing.assert_array_equal(step.rewards, rewards, err_msg="rewards")
        self.core.restart(ended)  # the engine has already started the next game there
        self.steps += 1
        self.check(step, f"step {self.steps}", full=self.steps % 17 == 0)
        return step

    def play(self, games: int) -> None:
        while self.finished < games:
            self.step(self.games.sample_actions())


# --------------------------------------------------------------------------- differential tests
@pytest.mark.parametrize("board", list(BOARDS))
def test_random_games_match_the_core(board: str) -> None:
    run = Lockstep(board, num_envs=100, seed=7)
    run.play(300)
    assert run.finished >= 300


@pytest.mark.slow
@pytest.mark.parametrize("board", list(BOARDS))
def test_ten_thousand_random_games_match_the_core(board: str) -> None:
    run = Lockstep(board, num_envs=1000, seed=2026)
    run.play(10_000)
    assert run.finished >= 10_000


@pytest.mark.parametrize(
    "rules",
    [
        {"board": "custom", "rows": 2, "cols": 2, "megaliths": 5},
        {"board": "custom", "rows": 1, "cols": 4, "megaliths": 9},
        {"board": "custom", "rows": 3, "cols": 3, "megaliths": 20, "min_dolmen": 1},
        {"board": "small", "last_tilt": False},
        {"board": "petit_menec", "last_tilt": False},
        {"board": "custom", "rows": 4, "cols": 9, "megaliths": 1},
    ],
)
def test_custom_boards_and_last_tilt_off_match_the_core(rules: dict) -> None:
    rules = dict(rules)
    board = rules.pop("board")
    run = Lockstep(board, num_envs=64, seed=3, **rules)
    run.play(200)


def test_partial_steps_with_active_match_the_core() -> None:
    run = Lockstep("small", num_envs=50, seed=11)
    rng = np.random.default_rng(0)
    for _ in range(200):
        run.step(run.games.sample_actions(), active=rng.random(50) < 0.5)
    assert run.finished > 0


def test_the_lockstep_check_fails_when_the_engine_is_wrong() -> None:
    """The harness can fail: a step whose observation is tampered with is caught."""
    run = Lockstep("small", num_envs=4, seed=0)
    step = run.step(run.games.sample_actions())
    tampered = step.observation.copy()
    tampered[2, 0, 0, 8] += 1
    with pytest.raises(AssertionError, match=r"observation differs in lanes \[2\]"):
        run.core.check("tampered", {"observation": tampered})


# --------------------------------------------------------------------------- hand-built positions
def play_position(state: GameState, actions: list[int], slot: int = 3) -> list[BatchStep]:
    """Load ``state`` into one slot of a batch of random games and play ``actions`` there,
    comparing with the core after every step (the other slots stand still)."""
    games = BatchGame(state.board, num_envs=5, seed=0)
    games.reset()
    for _ in range(3):  # the other slots hold games in progress
        games.step(games.sample_actions())
    others = [games.get_state(i) for i in range(5)]
    games.set_state(slot, state)
    assert games.get_state(slot) == state
    core = state.copy()
    active = np.zeros(5, dtype=bool)
    active[slot] = True
    steps = []
    current = games.observe()
    for action in actions:
        np.testing.assert_array_equal(current.observation[slot], observation_planes(core, core.to_act))
        np.testing.assert_array_equal(current.action_mask[slot], legal_mask(core).astype(bool))
        assert current.current_player[slot] == core.to_act
        chosen = np.zeros(5, dtype=np.int64)
        chosen[slot] = action
        current = games.step(chosen, active=active)
        core.apply(action)
        steps.append(current)
        if core.is_over:
            result = core.result()
            assert current.terminated[slot]
            assert tuple(current.rewards[slot]) == (result.reward(0), result.reward(1))
            assert games.get_state(slot) == GameState(state.board)  # auto-reset
        else:
            assert not current.terminated[slot]
            assert games.get_state(slot) == core
    for i in range(5):
        if i != slot:
            assert games.get_state(i) == others[i]
    return steps


def sq(board, r: int, c: int) -> int:
    return r * board.cols + c


def place(board, r: int, c: int, o: int) -> int:
    return sq(board, r, c) * 4 + o


def tilt(board, d: int) -> int:
    return board.squares * 4 + d


def decline(board) -> int:
    return board.squares * 4 + 4


ONE_LEFT = ".W...\nW....\n.....\n.....\n....."
FULL_SMALL = "rrwwrrWR\nwwrrwwRW\nrrwwrrWR\nwwrrwwRW\nrrRW.RWR"


def edge_positions() -> list[tuple[str, GameState, list[int]]]:
    """Hand-built positions like those of tests/rules/ (which check the rules on every engine), with
    moves, compared here in lockstep with the core: masks, observations and rewards too."""
    cases = []
    five = make_board("custom", rows=5, cols=5)
    for o in range(4):
        for d in range(4):
            cases.append((f"centre o{o} d{d}", GameState(five), [place(five, 2, 2, o), tilt(five, d)]))
    cases.append(("corner", GameState(five), [place(five, 0, 0, 0), tilt(five, 1)]))
    boxed = GameState.from_diagram("custom", ".W...\nW.W..\n.W...\n.....\n.....", rows=5, cols=5)
    cases.append(("untiltable placement passes", boxed, [place(boxed.board, 1, 1, 0), place(boxed.board, 4, 4, 1)]))
    for last_tilt in (True, False):
        one = GameState.from_diagram("custom", ONE_LEFT, rows=5, cols=5, megaliths=10, supply=1, last_tilt=last_tilt)
        b = one.board
        if last_tilt:
            cases.append(("last megalith tilted", one.copy(), [place(b, 2, 2, 0), tilt(b, 2)]))
            cases.append(("last megalith declined", one.copy(), [place(b, 2, 2, 1), decline(b)]))
        else:
            cases.append(("last megalith, last_tilt off", one.copy(), [place(b, 2, 2, 0)]))
        cases.append((f"untiltable last megalith {last_tilt}", one.copy(), [place(b, 0, 0, 0)]))
    full = GameState.from_diagram("small", FULL_SMALL, to_act=1)
    cases.append(("full small board", full, [place(full.board, 4, 4, 0)]))
    tiny = GameState.from_diagram("custom", "RW.\nWRW", rows=2, cols=3, megaliths=20)
    cases.append(("full custom board", tiny, [place(tiny.board, 0, 2, 1)]))
    row = GameState.from_diagram("custom", "R..W", rows=1, cols=4, megaliths=9)
    cases.append(("last empty square", row, [place(row.board, 0, 1, 0), place(row.board, 0, 2, 0)]))
    medium = GameState("medium")
    mb = medium.board
    declines = []
    for i, (r, c) in enumerate([(1, 1), (3, 3), (5, 5), (1, 7), (3, 8)]):
        declines += [place(mb, r, c, i % 4), decline(mb)]
    cases.append(("repeated declines", medium, declines))
    cases.append(
        ("decline then tilt", GameState("medium"), [place(mb, 3, 3, 0), decline(mb), place(mb, 3, 6, 0), tilt(mb, 3)])
    )
    large = GameState("large", megaliths=3)
    lb = large.board
    cases.append(
        (
            "supply runs out",
            large,
            [place(lb, 6, 6, 0), decline(lb), place(lb, 4, 4, 0), decline(lb), place(lb, 2, 2, 0), decline(lb)],
        )
    )
    merge = GameState.from_diagram("custom", "RRR.RRR\n.......", rows=2, cols=7)
    cases.append(("placement merges groups", merge, [place(merge.board, 0, 3, 0)]))
    edges = GameState.from_diagram("custom", ["...rr", ".....", "....w", "....w"], rows=4, cols=5)
    cases.append(("lying at the edges", edges, [place(edges.board, 1, 0, 2), tilt(edges.board, 1)]))
    return cases


@pytest.mark.parametrize("case", edge_positions(), ids=lambda case: case[0])
def test_edge_positions_match_the_core(case) -> None:
    _, state, actions = case
    play_position(state, actions)


def test_full_small_board_from_play_matches_the_core() -> None:
    """The real small board filled up by tilts east, with megaliths left (as in tests/rules/)."""
    state = GameState("small")
    b = state.board
    actions = []
    for r in range(5):
        for c0 in (5, 3, 0):
            actions += [place(b, r, c0, 0), tilt(b, 1)]
    core = state.copy()
    for a in actions:
        core.apply(a)
    while not core.is_over:
        a = decline(b) if core.phase == 1 else core.legal_actions()[0]
        actions.append(a)
        core.apply(a)
    steps = play_position(state, actions)
    assert steps[-1].terminated[3]


# --------------------------------------------------------------------------- scoring
SCORING = [
    "RRR\n...\nWWW",
    "RR.\n...\nW.W",
    "R.R\n.R.\nR.R",
    "rrR\nWWW\n...",
    "RRRRR.WWW\n.........\nWWW.RRR..",
    "RRR.RRR.WWWW\n............",
    "RRRR.WWWW\n.........\nRRR..WWW.",
    "RRR.WWW\n.......\nRR..WW.",
    ".......\n.......",
    "RRR.RRR.R\n.........\nWWW.WWW.W\n.........\nRRR.WWW..",
]


@pytest.mark.parametrize("diagram", SCORING)
@pytest.mark.parametrize("min_dolmen", [1, 3, 5])
def test_batch_scores_match_the_core(diagram: str, min_dolmen: int) -> None:
    lines = diagram.splitlines()
    board = make_board("custom", rows=len(lines), cols=len(lines[0]), min_dolmen=min(min_dolmen, len(diagram)))
    state = GameState.from_diagram(board, lines, supply=1)
    winner = score(board, state.cells).winner
    expected = -1 if winner is None else winner
    assert batch_scores(board, np.frombuffer(bytes(state.cells), dtype=np.uint8)[None])[0] == expected


def test_batch_scores_of_random_positions_match_the_core() -> None:
    rng = np.random.default_rng(5)
    for name in ("small", "kerlescan", "le_menec"):
        board = BOARDS[name]
        cells = rng.choice(3, size=(300, board.squares), p=[0.3, 0.35, 0.35]).astype(np.int8)
        expected = [score(board, list(c)).winner for c in cells]
        expected = np.array([-1 if w is None else w for w in expected])
        np.testing.assert_array_equal(batch_scores(board, cells), expected)


# --------------------------------------------------------------------------- auto-reset and BatchStep
def test_auto_reset_replaces_a_finished_game_in_the_same_step() -> None:
    one = GameState.from_diagram("custom", ONE_LEFT, rows=5, cols=5, megaliths=10, supply=1)
    games = BatchGame(one.board, num_envs=2, seed=0)
    games.reset()
    games.set_state(0, one)
    games.set_state(1, one)
    b = one.board
    step = games.step(np.array([place(b, 2, 2, 0), place(b, 0, 0, 0)]), final_observer=np.array([0, 1]))
    # env 1 ended (untiltable last megalith): result reported, fresh game already in place
    assert step.terminated.tolist() == [False, True]
    final = one.copy()
    final.apply(place(b, 0, 0, 0))
    assert tuple(step.rewards[1]) == (final.result().reward(0), final.result().reward(1))
    assert step.current_player[1] == 0
    fresh = GameState(b)
    np.testing.assert_array_equal(step.observation[1], observation_planes(fresh, 0))
    np.testing.assert_array_equal(step.action_mask[1], legal_mask(fresh).astype(bool))
    np.testing.assert_array_equal(step.final_observation[1], observation_planes(final, 1))
    assert not step.final_observation[0].any()
    # env 0 waits for White's decision on the last megalith
    assert step.current_player[0] == 1 and not step.rewards[0].any()
    step = games.step(np.array([tilt(b, 2), 0]), active=np.array([True, False]))
    assert step.terminated.tolist() == [True, False]


def test_batch_step_shapes_and_fresh_arrays() -> None:
    games = BatchGame("kermario", num_envs=3, seed=0)
    first = games.reset()
    b = games.board
    assert first.observation.shape == (3, b.rows, b.cols, 9)
    assert first.action_mask.shape == (3, b.num_actions)
    assert first.rewards.shape == (3, 2) and first.rewards.dtype == np.float32
    assert first.terminated.shape == (3,) and first.terminated.dtype == bool
    assert (first.observation[..., 7] == 1).all() and (first.observation[..., 8] == 56).all()
    assert first.final_observation is None
    saved = first.observation.copy()
    second = games.step(games.sample_actions())
    assert not np.shares_memory(first.observation, second.observation)
    np.testing.assert_array_equal(first.observation, saved)
    second.observation[:] = 99  # the caller owns the arrays
    second.action_mask[:] = False
    np.testing.assert_array_equal(games.observe().action_mask, games.legal_mask())
    assert games.observe().action_mask.any(axis=1).all()


# --------------------------------------------------------------------------- bad input
def test_illegal_actions_name_envs_and_change_nothing() -> None:
    games = BatchGame("small", num_envs=6, seed=1)
    games.reset()
    for _ in range(5):
        games.step(games.sample_actions())
    before = [games.get_state(i) for i in range(6)]
    observed = games.observe()
    actions = games.sample_actions()
    mask = games.legal_mask()
    illegal = {1: int(np.flatnonzero(~mask[1])[0]), 4: games.num_actions + 3}
    for i, a in illegal.items():
        actions[i] = a
    with pytest.raises(IllegalActionError) as info:
        games.step(actions)
    message = str(info.value)
    assert "envs [1, 4]" in message and f"env 1: action {illegal[1]}" in message
    assert f"env 4: action {illegal[4]}" in message and "actions run from 0 to" in message
    assert [games.get_state(i) for i in range(6)] == before
    after = games.observe()
    np.testing.assert_array_equal(after.observation, observed.observation)
    np.testing.assert_array_equal(after.action_mask, observed.action_mask)
    # an illegal action in an inactive env is ignored
    active = np.ones(6, dtype=bool)
    active[[1, 4]] = False
    games.step(actions, active=active)


def test_tilt_and_decline_when_placing_are_illegal() -> None:
    games = BatchGame("medium", num_envs=2, seed=0)
    games.reset()
    b = games.board
    with pytest.raises(IllegalActionError, match="no megalith to tilt"):
        games.step(np.array([0, tilt(b, 0)]))
    with pytest.raises(IllegalActionError, match="no megalith to decline"):
        games.step(np.array([decline(b), 0]))
    games.step(np.array([place(b, 3, 3, 0), place(b, 0, 0, 0)]))
    with pytest.raises(IllegalActionError, match="must first tilt or decline"):
        games.step(np.array([place(b, 5, 5, 0), tilt(b, 1)]))


@pytest.mark.parametrize(
    ("actions", "fragment"),
    [
        (np.zeros(3, dtype=np.float64), "integers"),
        (np.zeros(3, dtype=bool), "integers"),
        (np.zeros(4, dtype=np.int64), "shape (3,)"),
        (np.zeros((3, 1), dtype=np.int64), "shape (3,)"),
        ("abc", "integers"),
    ],
)
def test_bad_action_arrays(actions, fragment: str) -> None:
    games = BatchGame("small", num_envs=3)
    games.reset()
    with pytest.raises(CarnacError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        games.step(actions)
    assert all(games.get_state(i) == GameState(games.board) for i in range(3))


def test_lists_of_ints_are_accepted() -> None:
    games = BatchGame("small", num_envs=2)
    games.reset()
    games.step([0, 4])
    assert games.get_state(1).kinds[1] == 1


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"num_envs": 0}, "num_envs"),
        ({"num_envs": 2.0}, "num_envs"),
        ({"num_envs": True}, "num_envs"),
        ({"seed": -1}, "seed"),
        ({"seed": 1.5}, "seed"),
        ({"board": "atlantis"}, "unknown board"),
        ({"min_dolmen": 0}, "min_dolmen"),
        ({"colour": "red"}, "unknown rules option"),
        ({"backend": "cuda"}, "unknown backend"),
    ],
)
def test_bad_arguments(kwargs: dict, fragment: str) -> None:
    with pytest.raises(CarnacError, match=fragment):
        BatchGame(**kwargs)


def test_bad_active_observer_index_and_state() -> None:
    games = BatchGame("small", num_envs=2)
    games.reset()
    with pytest.raises(CarnacError, match="active"):
        games.step([0, 4], active=[1, 1])
    with pytest.raises(CarnacError, match="final_observer"):
        games.step([0, 4], final_observer=2)
    with pytest.raises(CarnacError, match="env index"):
        games.get_state(2)
    with pytest.raises(CarnacError, match="env index"):
        games.set_state(-1, GameState("small"))
    with pytest.raises(CarnacError, match="board"):
        games.set_state(0, GameState("medium"))
    with pytest.raises(CarnacError, match="GameState"):
        games.set_state(0, "R.......")
    over = GameState.from_diagram("custom", "RW.", rows=1, cols=3, megaliths=5)
    over.apply(8)
    small_like = BatchGame(over.board, num_envs=1)
    with pytest.raises(CarnacError, match="finished"):
        small_like.set_state(0, over)
    assert all(games.get_state(i) == GameState("small") for i in range(2))


def test_the_removed_numpy_backend_is_a_clear_error() -> None:
    with pytest.raises(CarnacError, match=r"backend='numpy' was removed.*'auto'"):
        BatchGame("small", backend="numpy")
    assert BatchGame("small", backend="auto").backend == BatchGame("small", backend="numba").backend == "numba"


# --------------------------------------------------------------------------- determinism and seeds
def test_same_seed_same_games() -> None:
    def run(seed: int) -> list[np.ndarray]:
        games = BatchGame("small", num_envs=8, seed=seed)
        out = [games.reset().observation]
        for _ in range(80):
            step = games.step(games.sample_actions())
            out += [step.observation, step.rewards, step.terminated]
        return out

    first, again, other = run(3), run(3), run(4)
    assert all(np.array_equal(a, b) for a, b in zip(first, again))
    assert not all(np.array_equal(a, b) for a, b in zip(first, other))


def test_reset_with_seed_reseeds_the_sampler_only() -> None:
    games = BatchGame("small", num_envs=4, seed=0)
    start = games.reset(seed=9)
    first = games.sample_actions()
    games.step(first)
    again = games.reset(seed=9)
    np.testing.assert_array_equal(games.sample_actions(), first)
    np.testing.assert_array_equal(start.observation, again.observation)


def test_sample_actions_is_uniform_over_the_legal_actions() -> None:
    """A chi-square-free check: every legal action is drawn, nothing else, roughly equally."""
    state = GameState.from_diagram("custom", "R.W\n...\nw..\nw..", rows=4, cols=3, to_act=1)
    games = BatchGame(state.board, num_envs=4000, seed=0)
    for i in range(4000):
        games.set_state(i, state)
    counts = np.bincount(games.sample_actions(), minlength=games.num_actions)
    legal = legal_mask(state).astype(bool)
    assert (counts[~legal] == 0).all()
    expected = 4000 / legal.sum()
    assert counts[legal].min() > 0.6 * expected and counts[legal].max() < 1.4 * expected


def test_pickle_keeps_the_games() -> None:
    games = BatchGame("small", num_envs=3, seed=0)
    games.reset()
    for _ in range(7):
        games.step(games.sample_actions())
    clone = pickle.loads(pickle.dumps(games))
    assert [clone.get_state(i) for i in range(3)] == [games.get_state(i) for i in range(3)]
    actions = games.sample_actions()
    np.testing.assert_array_equal(clone.sample_actions(), actions)
    np.testing.assert_array_equal(clone.step(actions).observation, games.step(actions).observation)


# --------------------------------------------------------------------------- random playouts
def _core_playout(state: GameState, rng: np.random.Generator) -> int:
    """A uniformly random playout on the core, for comparing distributions."""
    state = state.copy()
    while not state.is_over:
        legal = state.legal_actions()
        state.apply_unchecked(legal[int(rng.integers(len(legal)))])
    winner = state.result().winner
    return -1 if winner is None else winner


def _positions() -> list[GameState]:
    """Start positions for the playout tests: fresh games, games in progress (both phases),
    last_tilt off, a board that fills up, and a finished game."""
    rng = np.random.default_rng(5)
    out = [GameState("petit_menec"), GameState("small"), GameState("custom", rows=2, cols=3, megaliths=5)]
    for board, moves, rules in [("small", 9, {}), ("medium", 20, {}), ("petit_menec", 13, {"last_tilt": False})]:
        state = GameState(board, **rules)
        for _ in range(moves):
            state.apply(state.legal_actions()[int(rng.integers(len(state.legal_actions())))])
        out.append(state)
    responding = GameState("small")
    responding.apply(place_action(responding.board, 20, 1))
    assert responding.phase == 1
    out.append(responding)
    finished = GameState.from_diagram("custom", "RW.", rows=1, cols=3, megaliths=5)
    finished.apply(8)
    out.append(finished)
    return out


@pytest.mark.parametrize("start", _positions(), ids=lambda s: f"{s.board.name}-{s.placed}-{s.phase}")
def test_random_playout_plays_legal_games_the_core_agrees_with(start: GameState) -> None:
    before = start.copy()
    for seed in range(40):
        winner, actions = playout_actions(start, seed)
        assert start == before, "the playout changed its start state"
        state = start.copy()
        for action in actions:
            assert not state.is_over
            state.apply(action)  # raises IllegalActionError on an illegal move
        assert state.is_over
        expected = state.result().winner
        assert winner == (-1 if expected is None else expected)
        assert random_playout(start, seed) == winner


def test_random_playout_is_deterministic_per_seed() -> None:
    state = GameState("medium")
    games = [playout_actions(state, seed) for seed in (0, 1, 2**64 + 1, -3)]
    assert playout_actions(state, 0) == games[0]
    assert games[2] == games[1]  # seeds are taken modulo 2**64
    assert games[0][1] != games[1][1] and games[0][1] != games[3][1]


def test_random_playout_is_uniform_over_legal_moves() -> None:
    """The first move is uniform over the legal actions; the winners match core playouts."""
    state = GameState.from_diagram("custom", "R.W\n...\nw..\nw..", rows=4, cols=3, to_act=1)
    firsts = np.bincount(
        [playout_actions(state, seed)[1][0] for seed in range(4000)], minlength=state.board.num_actions
    )
    legal = legal_mask(state).astype(bool)
    assert (firsts[~legal] == 0).all()
    expected = 4000 / legal.sum()
    assert firsts[legal].min() > 0.6 * expected and firsts[legal].max() < 1.4 * expected

    start = GameState("petit_menec")
    ours = np.bincount([random_playout(start, seed) + 1 for seed in range(3000)], minlength=3) / 3000
    rng = np.random.default_rng(0)
    core = np.bincount([_core_playout(start, rng) + 1 for _ in range(3000)], minlength=3) / 3000
    assert np.abs(ours - core).max() < 0.05, (ours, core)


def test_random_playout_rejects_bad_arguments() -> None:
    with pytest.raises(CarnacError, match="GameState"):
        random_playout("medium", 0)
    for seed in (1.5, True, "0"):
        with pytest.raises(CarnacError, match="seed"):
            random_playout(GameState("small"), seed)


def test_the_compiled_scorer_matches_the_core() -> None:
    rng = np.random.default_rng(11)
    for board in (make_board("small"), make_board("kerlescan"), make_board("custom", rows=3, cols=4, min_dolmen=1)):
        for _ in range(300):
            cells = rng.integers(0, 3, board.squares).astype(np.uint8)
            winner = score(board, bytes(cells)).winner
            assert dolmen_winner(cells, board.arrays.neighbours, board.min_dolmen) == (-1 if winner is None else winner)


def test_the_compiled_dolmen_sizes_match_the_core() -> None:
    """dolmens_of (the vector env's info) gives each player's sizes as the core scores them."""
    rng = np.random.default_rng(12)
    for board in (make_board("small"), make_board("kerlescan"), make_board("custom", rows=3, cols=4, min_dolmen=1)):
        cells = rng.integers(0, 3, (300, board.squares)).astype(np.uint8)
        slots = info_dolmen_slots(board)
        out = np.full((len(cells), 2, slots), -1, dtype=np.int16)
        dolmens_of(cells, board.arrays.neighbours, board.min_dolmen, out)
        for row, sizes in zip(cells, out):
            result = score(board, bytes(row))
            for player in (0, 1):
                expected = list(result.dolmens[player]) + [0] * (slots - len(result.dolmens[player]))
                assert sizes[player].tolist() == expected


def test_restart_starts_fresh_games_in_the_marked_slots_only() -> None:
    games = BatchGame("small", num_envs=4, seed=0)
    games.reset()
    for _ in range(3):
        games.step(games.sample_actions())
    before = [games.get_state(i) for i in range(4)]
    games.restart(np.array([False, True, False, True]))
    assert [games.get_state(i) for i in (0, 2)] == [before[0], before[2]]
    assert all(games.get_state(i) == GameState("small") for i in (1, 3))
    np.testing.assert_array_equal(games.observe().action_mask[1], legal_mask(GameState("small")).astype(bool))
    with pytest.raises(CarnacError, match="bool array"):
        games.restart([1, 0, 0, 0])


# --------------------------------------------------------------------------- set_state: checked and atomic
def _snapshot(games: BatchGame) -> list[np.ndarray]:
    return [np.array(getattr(games._arrays, name), copy=True) for name in games._arrays._fields]


def _played(board: str, moves: int, seed: int) -> GameState:
    rng = np.random.default_rng(seed)
    state = GameState(board)
    for _ in range(moves):
        legal = state.legal_actions()
        if state.is_over or len(legal) == 0:
            break
        candidate = state.copy()
        candidate.apply(legal[int(rng.integers(len(legal)))])
        if candidate.is_over:
            break
        state = candidate
    return state


_FIELDS = ("cells", "kinds", "supply", "empty", "phase", "to_act", "pending", "pending_colour", "lying")


@st.composite
def _malformed(draw: st.DrawFn) -> GameState:
    """A game in progress with one to three of its fields overwritten by junk."""
    state = _played("small", draw(st.integers(0, 40)), draw(st.integers(0, 10)))
    squares = state.board.squares
    for field in draw(st.lists(st.sampled_from(_FIELDS), min_size=1, max_size=3)):
        if field in ("cells", "kinds"):
            data = bytearray(getattr(state, field))
            data[draw(st.integers(0, squares - 1)) % max(len(data), 1)] = draw(st.integers(0, 255))
            setattr(state, field, draw(st.sampled_from([data, data[:-1], bytes(data), list(data)])))
        elif field == "lying":
            pairs = list(state.lying) if isinstance(state.lying, list) else []
            choice = draw(st.integers(0, 3))
            if choice == 0 and pairs:
                pairs.pop(draw(st.integers(0, len(pairs) - 1)))
            elif choice == 1:
                pairs.append((draw(st.integers(-2, squares + 2)), draw(st.integers(-2, squares + 2))))
            elif choice == 2 and pairs and isinstance(pairs[0], tuple) and len(pairs[0]) == 2:
                pairs[0] = (pairs[0][1], pairs[0][1])
            else:
                pairs = draw(st.sampled_from([None, "ab", [(1,)], [(1.0, 2.0)], pairs * 2]))
            state.lying = pairs
        elif field == "pending_colour":
            state.pending_colour = draw(st.sampled_from([0, 1, 2, 3, True, 1.0, None, (1, 2)]))
        else:
            value = draw(
                st.one_of(
                    st.integers(-3, 200),
                    st.integers(-(10**12), 10**12),
                    st.sampled_from([True, None, 1.0, "1", np.int64(1), 10**100]),
                )
            )
            setattr(state, field, value)
    return state


def _valid(state: GameState) -> bool:
    """Whether the core's one check of a position accepts ``state`` (the batch holds games in
    progress only, so a finished game does not count)."""
    try:
        validate(state)
    except CarnacError:
        return False
    return state.phase != OVER


@settings(max_examples=300, deadline=None)
@given(state=_malformed(), slot=st.integers(0, 2))
def test_set_state_checks_everything_and_changes_nothing_on_error(state: GameState, slot: int) -> None:
    games = BatchGame("small", num_envs=3, seed=0)
    games.reset()
    for _ in range(5):
        games.step(games.sample_actions())
    before = _snapshot(games)
    try:
        games.set_state(slot, state)
    except CarnacError:
        after = _snapshot(games)
        assert all(np.array_equal(a, b) for a, b in zip(before, after)), "a rejected state changed the batch"
        assert not _valid(state), "a state the core's validate accepts was refused"
        return
    assert _valid(state), "a state the core's validate refuses was accepted"
    # Accepted: it must be a consistent game the engine and the core agree on, to the end.
    assert games.get_state(slot) == state
    core = state.copy()
    for _ in range(200):
        step = games.observe()
        np.testing.assert_array_equal(step.action_mask[slot], legal_mask(core).astype(bool))
        np.testing.assert_array_equal(step.observation[slot], observation_planes(core, core.to_act))
        actions = games.sample_actions()
        step = games.step(actions)
        core.apply(int(actions[slot]))
        if core.is_over:
            result = core.result()
            assert step.terminated[slot]
            assert tuple(step.rewards[slot]) == (result.reward(0), result.reward(1))
            break


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        ({"pending": 10**8}, "pending"),
        ({"supply": -1}, "supply"),
        ({"to_act": 5}, "to_act"),
        ({"phase": 9}, "phase"),
        ({"empty": 3}, "empty"),
    ],
)
def test_set_state_reports_the_bad_field(change: dict, fragment: str) -> None:
    """The cases of issue 12: each is refused with its name, and observe() still works."""
    state = GameState("small")
    state.apply(place_action(state.board, 20, 0))  # a megalith awaiting a response
    for name, value in change.items():
        setattr(state, name, value)
    games = BatchGame("small", num_envs=2, seed=0)
    before = games.observe()
    with pytest.raises(CarnacError, match=fragment):
        games.set_state(1, state)
    np.testing.assert_array_equal(games.observe().observation, before.observation)


def test_set_state_refuses_a_cell_value_of_seven() -> None:
    state = GameState("small")
    state.cells[3] = 7
    state.kinds[3] = 1
    with pytest.raises(CarnacError, match=r"cells\[3\]=7"):
        BatchGame("small").set_state(0, state)


def test_num_envs_takes_numpy_integers_and_has_a_limit() -> None:
    assert BatchGame("small", num_envs=np.int32(3)).num_envs == 3
    for bad in (True, 2.0, 0, -1, np.float64(2), MAX_ENVS + 1, 10**9):
        with pytest.raises(CarnacError, match=rf"num_envs.*1\.\.{MAX_ENVS}"):
            BatchGame("small", num_envs=bad)


def test_a_draw_gives_plus_zero() -> None:
    """A drawn game reports 0.0 for both players, never -0.0."""
    state = GameState.from_diagram("custom", "R.W", rows=1, cols=3, megaliths=3)
    games = BatchGame(state.board, num_envs=1)
    games.set_state(0, state)
    step = games.step([4])  # the last megalith, red on b1: no group reaches 3 squares, a draw
    assert step.terminated[0]
    assert tuple(step.rewards[0]) == (0.0, 0.0) and not np.signbit(step.rewards).any()


def test_random_playout_refuses_states_it_could_not_play_safely() -> None:
    """Cheap bounds checks: a state whose fields would take the compiled loop off its arrays
    (or into an endless search for an empty square) is refused, not played."""
    for field, value in [("cells", bytearray(3)), ("supply", -1), ("supply", 99), ("empty", 0), ("phase", 7)]:
        state = GameState("small")
        setattr(state, field, value)
        with pytest.raises(CarnacError, match="malformed"):
            random_playout(state, 0)
    responding = GameState("small")
    responding.apply(place_action(responding.board, 20, 0))
    responding.pending = 10**6
    with pytest.raises(CarnacError, match="malformed"):
        random_playout(responding, 0)


# --------------------------------------------------------------------------- the compiled rules layer, each rule once
@pytest.mark.parametrize("board", ["small", "petit_menec", "kerlescan"])
def test_legality_has_one_answer(board: str) -> None:
    """is_legal, legal_actions, pick and the observation's mask agree with the core, move by move."""
    b = make_board(board)
    games = BatchGame(b, num_envs=1, seed=1)
    out = np.zeros(b.num_actions, np.int32)
    mask = np.zeros(b.num_actions, bool)
    rng = np.random.default_rng(board.encode()[0])
    for _ in range(3):
        state = GameState(b)
        while not state.is_over:
            games.set_state(0, state)
            legal = state.legal_actions()
            count = batch_rules.legal_actions(games.kernel, 0, out)
            assert out[:count].tolist() == legal
            assert [a for a in range(b.num_actions) if batch_rules.is_legal(games.kernel, 0, a)] == legal
            batch_views.write_mask(games.kernel, 0, mask)
            np.testing.assert_array_equal(mask, legal_mask(state))
            ranks = {batch_rules.pick(games.kernel, 0, (k + 0.5) / len(legal)) for k in range(len(legal))}
            assert ranks == set(legal)  # each rank picks a different legal action
            state.apply(int(rng.choice(legal)))


@pytest.mark.parametrize("board", ["medium", "petit_menec"])
def test_an_unobserved_move_is_the_same_move(board: str) -> None:
    """play_unobserved changes what the rules read exactly as play does; only the views stay
    behind, and copy_game from an observed slot brings them back."""
    b = make_board(board)
    st, arrays = new_state(b, 2)
    batch_rules.reset_all(st)
    rng = np.random.default_rng(7)
    out = np.zeros(b.num_actions, np.int32)
    rules_fields = ("cells", "kinds", "free", "where", "supply", "empty", "phase", "to_act", "pending", "tilt_ok")
    for _ in range(4):
        batch_rules.reset_all(st)
        over = False
        while not over:
            action = int(rng.choice(out[: batch_rules.legal_actions(st, 0, out)]))
            over = batch_rules.play(st, 0, action)
            assert batch_rules.play_unobserved(st, 1, action) == over
            for name in rules_fields:
                np.testing.assert_array_equal(getattr(arrays, name)[0], getattr(arrays, name)[1], err_msg=name)
        assert batch_rules.winner_of(st, 0) == batch_rules.winner_of(st, 1) != batch_rules.NOT_OVER
    batch_rules.copy_game(st, 0, st, 1)
    np.testing.assert_array_equal(arrays.planes[:, 0], arrays.planes[:, 1])
    np.testing.assert_array_equal(arrays.place_bits[0], arrays.place_bits[1])


def test_the_one_flood_fill_lists_each_group() -> None:
    """group_into's members are the core's groups, square for square."""
    for seed in range(40):
        board = ("small", "medium", "kerlescan", "petit_menec")[seed % 4]
        state = GameState(board)
        rng = np.random.default_rng(seed)
        while not state.is_over:
            state.apply(int(rng.choice(state.legal_actions())))
        cells = np.frombuffer(state.cells, np.uint8)
        squares = len(cells)
        seen = np.zeros(squares, bool)
        members = np.zeros(squares + 1, np.int32)
        found = []
        for start in range(squares):
            if cells[start] and not seen[start]:
                size = group_into(cells, state.board.arrays.neighbours, start, seen, members)
                found.append(sorted(members[:size].tolist()))
        want = sorted(sorted(g) for colour in (1, 2) for g in groups(state.board, state.cells, colour))
        assert sorted(found) == want


def test_the_kernel_is_the_batch_s_state() -> None:
    games = BatchGame("small", num_envs=3, seed=0)
    games.step(games.sample_actions())
    work, _ = new_state(games.board, 1)
    before = games.get_state(2)
    value, _ = playouts.playout_value(games.kernel, 2, work, 0, 4, np.uint64(9))
    assert -1.0 <= value <= 1.0 and games.get_state(2) == before  # played in the work slot
    batch_rules.play(games.kernel, 2, before.legal_actions()[0])
    assert games.get_state(2) != before  # the kernel is the games' own state, not a copy
