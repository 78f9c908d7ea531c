"""Agents: legal on every board, deterministic per seed, specs and user agents."""

from __future__ import annotations

import pickle

import pytest

import carnac_env
from carnac_env.agents import GreedyAgent, MCTSAgent, RandomAgent, evaluate, make, parse_spec
from carnac_env.agents.greedy import action_values
from carnac_env.agents.mcts import rollout
from carnac_env.core.boards import BOARDS
from carnac_env.core.game import RESPOND, GameState
from carnac_env.errors import CarnacError

FAST_SPECS = ["random", "greedy", "mcts:sims=8"]


def play(specs: list[str], board: str = "petit_menec", seed: int = 0, wrapped: bool = False) -> list[int]:
    """Play a game through the AEC env; every action is checked by the env."""
    env = carnac_env.env(board=board) if wrapped else carnac_env.raw_env(board=board)
    env.reset(seed=seed)
    agents = [make(specs[0], seed=seed), make(specs[1], seed=seed + 1)]
    actions = []
    for agent_name in env.agent_iter():
        _, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        player = int(agent_name[-1])
        legal = env.unwrapped.game.legal_actions()
        action = agents[player].act(env)
        assert action in legal, (specs[player], action)
        env.step(action)
        actions.append(action)
    assert env.unwrapped.game.is_over
    return actions


@pytest.mark.parametrize("board", list(BOARDS))
@pytest.mark.parametrize("spec", FAST_SPECS)
def test_agents_play_legal_moves_on_every_board(board: str, spec: str) -> None:
    if spec != "random" and board not in ("small", "petit_menec"):
        # a short game (a reduced supply) keeps the search agents fast on the bigger boards
        env = carnac_env.raw_env(board=board, megaliths=10)
        agent = make(spec, seed=3)
        while not env.game.is_over:
            action = agent.act(env)
            assert action in env.game.legal_actions()
            env.step(action)
        return
    play([spec, "random"], board=board, seed=1)
    play(["random", spec], board=board, seed=2, wrapped=True)


@pytest.mark.parametrize(
    "spec", [*FAST_SPECS, "mcts:sims=10:width=0", "mcts:sims=10:rollout=eval", "mcts:sims=10:rollout=own"]
)
def test_same_seed_same_game(spec: str) -> None:
    first = play([spec, spec], board="small", seed=7)
    second = play([spec, spec], board="small", seed=7)
    assert first == second


def test_different_seeds_differ_for_random() -> None:
    assert play(["random", "random"], seed=1) != play(["random", "random"], seed=2)


def test_reset_reseeds() -> None:
    state = GameState("small")
    agent = RandomAgent(seed=5)
    first = [agent.choose(state) for _ in range(5)]
    agent.reset()
    assert [agent.choose(state) for _ in range(5)] == first
    agent.reset(6)
    assert [agent.choose(state) for _ in range(5)] != first


def test_agents_pickle_and_leave_the_state_unchanged() -> None:
    state = GameState("small")
    state.apply(4 * 10)  # a placement that may be tilted
    before = state.copy()
    for spec in [*FAST_SPECS, "mcts:sims=5:width=4"]:
        agent = pickle.loads(pickle.dumps(make(spec, seed=1)))
        assert agent.act(state) in state.legal_actions()
        assert state == before


def test_spec_parsing_and_options() -> None:
    assert parse_spec("mcts:sims=400") == ("mcts", {"sims": "400"})
    assert parse_spec(" mcts:sims=400,c=2 ") == ("mcts", {"sims": "400", "c": "2"})
    agent = make("mcts:sims=400:c=2:width=5", seed=3)
    assert isinstance(agent, MCTSAgent)
    assert (agent.sims, agent.c, agent.width, agent.seed) == (400, 2.0, 5, 3)
    assert make("mcts:seconds=0.5").seconds == 0.5
    assert isinstance(make("greedy"), GreedyAgent)
    assert make(agent) is agent  # an agent object passes through


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ("alphazero", ["unknown agent 'alphazero'", "random", "greedy", "mcts", "sims"]),
        ("mcts:depth=3", ["no option 'depth'", "sims", "seconds"]),
        ("mcts:sims=many", ["sims='many'", "int"]),
        ("mcts:sims", ["not key=value"]),
        ("mcts:sims=0", ["sims=0"]),
        ("mcts:rollout=smart", ["rollout"]),
        ("", ["no agent name"]),
        ("random:x=1", ["no option 'x'", "none"]),
        ("no_such_module_xyz.Agent", ["cannot import module 'no_such_module_xyz'"]),
        ("carnac_env.agents.NoSuchAgent", ["has no attribute 'NoSuchAgent'"]),
    ],
)
def test_bad_specs_explain(spec: str, words: list[str]) -> None:
    with pytest.raises(CarnacError) as info:
        make(spec)
    for word in words:
        assert word in str(info.value)


def test_bad_spec_type() -> None:
    with pytest.raises(CarnacError, match="spec string or an object with act"):
        make(42)  # type: ignore[arg-type]


class FirstLegal:
    """A user agent class for the spec tests (takes an option and a seed)."""

    def __init__(self, offset: int = 0, seed: int = 0) -> None:
        self.offset = offset
        self.seed = seed

    def act(self, env: object) -> int:
        legal = env.unwrapped.game.legal_actions()  # type: ignore[attr-defined]
        return legal[min(self.offset, len(legal) - 1)]


def last_legal(env: object) -> int:
    """A user agent function for the spec tests."""
    return env.unwrapped.game.legal_actions()[-1]  # type: ignore[attr-defined]


def test_user_agents_by_import_path() -> None:
    agent = make(f"{__name__}.FirstLegal:offset=2", seed=9)
    assert isinstance(agent, FirstLegal)
    assert (agent.offset, agent.seed) == (2, 9)
    play([f"{__name__}.FirstLegal", f"{__name__}.last_legal"])
    with pytest.raises(CarnacError, match="takes no options"):
        make(f"{__name__}.last_legal:x=1")


def test_greedy_completes_a_dolmen_the_opponent_cannot_tilt() -> None:
    # c1 completes red a1-b1-c1, and a megalith there cannot be tilted (edge north, b1 west,
    # d1 east, c2 south are taken): greedy must place red on top there.
    state = GameState.from_diagram("petit_menec", ["RR.W..", "..W...", "......", "......", "......", "......"])
    best = GreedyAgent(seed=0).choose(state)
    assert best // 4 == 2 and best % 4 in (0, 2)


def test_greedy_assumes_the_most_harmful_reply() -> None:
    # a placement the opponent may tilt is worth the least of the replies
    state = GameState.from_diagram("petit_menec", ["RR....", "......", "......", "......", "......", "......"])
    values = {a: v for v, a in action_values(state)}
    action = 2 * 4  # c1, red on top, north/south tilts show red
    after = _after(state, action)
    assert after.phase == RESPOND
    replies = [evaluate(_after(after, r), 0) for r in after.legal_actions()]
    assert values[action] == pytest.approx(min(replies))
    assert values[action] < evaluate(after, 0)  # White's tilt spoils the dolmen


def _after(state: GameState, action: int) -> GameState:
    out = state.copy()
    out.apply(action)
    return out


def test_evaluation_is_antisymmetric_and_counts_dolmens() -> None:
    state = GameState.from_diagram("petit_menec", ["RRR...", "......", "..WW..", "......", "......", "......"])
    assert evaluate(state, 0) == -evaluate(state, 1)
    assert evaluate(state, 0) > 100 - 40  # a red dolmen against a white pair


class CheckedState(GameState):
    """A GameState whose unchecked moves are checked: the rollout must only play legal moves."""

    def apply_unchecked(self, action: int) -> None:
        assert self.why_illegal(action) is None, (action, self.diagram())
        super().apply_unchecked(action)


@pytest.mark.parametrize("own_on_top", [False, True])
def test_rollout_plays_legal_moves_and_keeps_the_empty_squares_right(own_on_top: bool) -> None:
    import random

    for board in ("small", "medium", "petit_menec"):
        for seed in range(10):
            state = CheckedState(board)
            rollout(state, random.Random(seed), own_on_top)
            assert state.is_over
            assert state.empty == sum(1 for k in state.kinds if not k)


def test_rollout_responses_are_uniform_over_the_legal_ones() -> None:
    import random

    # the last megalith placed on d4: four legal tilts and declining, each 1/5 of the time
    start = GameState.from_diagram(
        "petit_menec", ["......", "..W...", "......", "......", "......", "......"], supply=1
    )
    start.apply(21 * 4)
    legal = start.legal_actions()
    counts = dict.fromkeys(legal, 0)
    rng = random.Random(0)
    base = start.board.squares * 4
    for _ in range(3000):
        state = start.copy()
        rollout(state, rng)
        if len(state.lying) == 0:
            counts[base + 4] += 1
        else:
            first, _ = state.lying[-1]
            direction = next(d for d, (f, _, _) in start.tilt_targets().items() if f == first)
            counts[base + direction] += 1
    assert len(legal) == 5
    for count in counts.values():
        assert abs(count / 3000 - 1 / len(legal)) < 0.04


def test_mcts_backs_up_by_mover_not_alternation() -> None:
    # Red places a megalith White can tilt; whatever happens the search must run and return
    # a legal response for White, and a search from a decided position picks the win.
    state = GameState.from_diagram("petit_menec", ["RR.W..", "......", "......", "......", "......", "......"])
    agent = MCTSAgent(seed=0, sims=300)
    action = agent.choose(state)
    assert action in state.legal_actions()
    assert agent.last_sims == 300


def test_mcts_finds_an_immediate_dolmen_on_the_last_megalith() -> None:
    # One megalith left, no last tilt: Red completes a dolmen or does not; MCTS must see it.
    state = GameState.from_diagram(
        "petit_menec", ["RR.WW.", "......", "......", "......", "......", "......"], supply=1, last_tilt=False
    )
    # a dolmen of 3 against White's pair wins at once; only red on top of c1 does it
    action = MCTSAgent(seed=0, sims=400).choose(state)
    after = _after(state, action)
    assert after.is_over and after.result().winner == 0


def test_mcts_time_budget() -> None:
    state = GameState("small")
    agent = make("mcts:seconds=0.05:width=0", seed=1)
    assert agent.choose(state) in state.legal_actions()
    assert agent.last_sims >= 16
    assert agent.spec == "mcts:seconds=0.05:width=0"
