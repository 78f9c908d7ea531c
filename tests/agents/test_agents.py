"""Agents: legal on every board, deterministic per seed, specs and user agents."""

from __future__ import annotations

import pickle
import subprocess
import sys

import numpy as np
import pytest
from _greedy_reference import evaluate as reference_evaluate
from _greedy_reference import reference_action_values
from hypothesis import given, settings
from hypothesis import strategies as st

import carnac_env
from carnac_env.agents import GreedyAgent, MCTSAgent, RandomAgent, evaluate, make, parse_spec
from carnac_env.agents.az import AZAgent
from carnac_env.agents.greedy import action_values, engine_action_values
from carnac_env.batch import BatchGame
from carnac_env.batch.rng import seed_state
from carnac_env.core.boards import BOARDS
from carnac_env.core.game import RESPOND, GameState
from carnac_env.errors import CarnacError
from carnac_env.search import PUCT, Network, Playouts
from carnac_env.search.playouts import random_action

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
        game = env.unwrapped.game
        legal = game.legal_actions()
        action = agents[player].act(game)
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
            action = agent.act(env)  # the built-in agents take a carnac AEC env too (game_of)
            assert action in env.game.legal_actions()
            env.step(action)
        return
    play([spec, "random"], board=board, seed=1)
    play(["random", spec], board=board, seed=2, wrapped=True)


@pytest.mark.parametrize(
    "spec",
    [
        *FAST_SPECS,
        "mcts:sims=10:width=0",
        "mcts:sims=10:playouts=3",
        "mcts:sims=10:reuse=false",
    ],
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
        ("mcts:c=nan", ["c='nan'", "finite"]),
        ("mcts:c=inf", ["c='inf'", "finite"]),
        ("mcts:c=-1", ["c=-1.0", ">= 0"]),
        ("mcts:seconds=-inf", ["seconds='-inf'", "finite"]),
        ("mcts:width=-2", ["width=-2"]),
        ("mcts:reuse=maybe", ["reuse='maybe'", "bool"]),
        ("..", ["not an import path"]),
        (".x", ["not an import path"]),
        ("x.", ["not an import path"]),
        ("a..b", ["not an import path"]),
        ("1a.b", ["not an import path"]),
        ("subprocess.Popen:args=true:shell=true", ["standard library"]),
        ("sys.exit", ["standard library"]),
        ("os.system", ["standard library"]),
        ("builtins.exec", ["standard library"]),
        ("carnac_env.core.game.GameState", ["no act(state) method"]),
        ("carnac_env.core.scoring.score", ["does not take these arguments"]),
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

    def act(self, state: GameState) -> int:
        legal = state.legal_actions()
        return legal[min(self.offset, len(legal) - 1)]


def last_legal(state: GameState) -> int:
    """A user agent function for the spec tests."""
    return state.legal_actions()[-1]


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


@pytest.mark.parametrize("board", list(BOARDS))
def test_compiled_greedy_values_equal_the_reference_bit_for_bit(board: str) -> None:
    import random

    rng = random.Random(board)
    engine = BatchGame(board, num_envs=1)
    for _ in range(2):
        state = GameState(board)
        while not state.is_over:
            expected = reference_action_values(state)
            assert action_values(state) == expected
            engine.set_state(0, state)
            assert engine_action_values(engine, 0) == expected
            assert [evaluate(state, p) for p in (0, 1)] == [reference_evaluate(state, p) for p in (0, 1)]
            state.apply(rng.choice(state.legal_actions()))
    assert action_values(state) == []  # a finished game has no action
    assert [evaluate(state, p) for p in (0, 1)] == [reference_evaluate(state, p) for p in (0, 1)]  # the WIN term


def test_playout_responses_are_uniform_over_the_legal_ones() -> None:
    # the last megalith placed on d4: four legal tilts and declining, each 1/5 of the time
    start = GameState.from_diagram(
        "petit_menec", ["......", "..W...", "......", "......", "......", "......"], supply=1
    )
    start.apply(21 * 4)
    legal = start.legal_actions()
    assert len(legal) == 5
    engine = BatchGame(start.board, num_envs=1)
    engine.set_state(0, start)
    counts = dict.fromkeys(legal, 0)
    x = seed_state(0)
    for _ in range(5000):
        x, action = random_action(engine.kernel, 0, x)
        x = np.uint64(x)  # numba hands the generator state back as a Python int
        counts[int(action)] += 1
    for count in counts.values():
        assert abs(count / 5000 - 1 / len(legal)) < 0.03


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


class Recorder:
    """A user agent class that records being built (its constructor must not run on a bad spec)."""

    built = 0

    def __init__(self, depth: int = 1) -> None:
        Recorder.built += 1

    def act(self, state: GameState) -> int:
        return state.legal_actions()[0]


class NotAnAgent:
    """A class without act: refused before it is called."""

    built = 0

    def __init__(self, **options: object) -> None:
        NotAnAgent.built += 1


def test_user_agent_shape_is_checked_before_anything_is_called(tmp_path) -> None:
    marker = tmp_path / "ran"
    with pytest.raises(CarnacError, match="standard library"):
        make(f"subprocess.Popen:args=touch {marker}:shell=true")
    assert not marker.exists()
    before = Recorder.built
    with pytest.raises(CarnacError, match="does not take these arguments"):
        make(f"{__name__}.Recorder:depth=2:colour=red")
    assert Recorder.built == before
    assert isinstance(make(f"{__name__}.Recorder:depth=2"), Recorder)
    with pytest.raises(CarnacError, match="no act"):
        make(f"{__name__}.NotAnAgent:x=1")
    assert NotAnAgent.built == 0


_SPEC_WORDS = st.sampled_from(
    [
        "mcts",
        "random",
        "greedy",
        "sims",
        "c",
        "width",
        "rollout",
        "reuse",
        "seconds",
        "nan",
        "inf",
        "-1",
        "0",
        "2",
        "1e400",
        "true",
        "eval",
        "own",
        "x",
        "a.b",
        "..",
        ".",
        ":",
        ",",
        "=",
        " ",
        "subprocess.Popen",
        "sys.exit",
        "os.system",
        "carnac_env.agents.RandomAgent",
        "carnac_env.core.game.GameState",
        "\x00",
        "é",
    ]
)


@settings(deadline=None, max_examples=300)
@given(spec=st.one_of(st.lists(_SPEC_WORDS, max_size=8).map("".join), st.text(alphabet="abx.:=,01-", max_size=12)))
def test_fuzzed_specs_give_an_agent_or_a_package_error(spec: str) -> None:
    try:
        agent = make(spec, seed=0)
    except CarnacError:
        return
    assert hasattr(agent, "act")


def test_mcts_time_budget_is_measured_in_time() -> None:
    import time

    state = GameState("small")
    agent = make("mcts:seconds=0.2:width=0", seed=1)
    agent.choose(state)  # compiled code loaded
    start = time.perf_counter()
    assert agent.choose(state) in state.legal_actions()
    spent = time.perf_counter() - start
    assert 0.2 <= spent < 5.0  # the budget is spent, and the search stops soon after it
    assert agent.last_sims >= 64
    assert agent.spec == "mcts:seconds=0.2:width=0"


def _white_to_respond() -> GameState:
    """Red has placed the second-last megalith on d4 (red on top); White responds. Tilting it
    east lets White place the last megalith next (a second move in a row) and win; a
    decline lets Red place it and win (checked by exhaustive minimax in the test)."""
    rows = ["WW.RWW", "RRWWRR", "WWRRWW", "RRW...", "WWRRWW", "RRWWRR"]
    state = GameState.from_diagram("petit_menec", rows, supply=2, last_tilt=False, megaliths=34)
    state.apply(21 * 4)
    assert state.phase == RESPOND and state.to_act == 1
    return state


def _minimax(state: GameState, player: int) -> int:
    """The game-theoretic result (+1, 0, -1) of ``state`` for ``player``, by brute force."""
    if state.is_over:
        return state.result().reward(player)
    values = [_minimax(_after(state, action), player) for action in state.legal_actions()]
    return max(values) if state.to_act == player else min(values)


def test_mcts_tilts_and_then_wins_with_a_second_move_in_a_row() -> None:
    state = _white_to_respond()
    values = {action: _minimax(_after(state, action), 1) for action in state.legal_actions()}
    assert sorted(values.values()) == [-1, 1]  # one winning response, one losing
    for playouts in (1, 4):
        agent = MCTSAgent(seed=1, sims=300, width=0, playouts=playouts)
        action = agent.choose(state)
        assert values[action] == 1, playouts
        # and White's next move, a placement right after its own tilt, wins too
        after = _after(state, action)
        assert after.to_act == 1
        assert _minimax(_after(after, agent.choose(after)), 1) == 1


def test_tree_reuse_carries_the_subtree_and_stays_deterministic() -> None:
    state = GameState("small")
    agent = MCTSAgent(seed=2, sims=300, width=0)
    action = agent.choose(state)
    state.apply(action)
    reply = state.legal_actions()[-1]
    state.apply(reply)
    agent.choose(state)
    reused = agent.search
    assert agent.last_sims == 300
    root_visits = int(reused.arrays.visits[0, reused.arrays.root[0]])
    fresh = MCTSAgent(seed=2, sims=300, width=0, reuse=False)
    fresh.choose(GameState("small"))
    fresh.choose(state)
    assert int(fresh.search.arrays.visits[0, fresh.search.arrays.root[0]]) == 300
    assert root_visits >= 300  # the carried visits add to the new ones (or the reply was new)
    # the same seed and moves give the same trees
    again = MCTSAgent(seed=2, sims=300, width=0)
    again.choose(GameState("small"))
    again.choose(state)
    np.testing.assert_array_equal(again.search.root(0).visits, agent.search.root(0).visits)


class PriorNet:
    """A network stub whose logits point at one action."""

    def __init__(self, action: int) -> None:
        self.action = action

    def forward(self, obs, supply_scale=None):
        n, rows, cols, _ = obs.shape
        logits = np.zeros((n, rows * cols * 4 + 5), np.float32)
        logits[:, self.action] = 8.0
        return logits, np.zeros(n, np.float32)


def test_mcts_takes_search_parts_as_objects() -> None:
    state = GameState("small")
    agent = MCTSAgent(seed=0, sims=100, width=0, evaluator=Network(PriorNet(4 * 9 + 1)), rule=PUCT(c=1.5))
    assert agent.choose(state) == 4 * 9 + 1
    assert agent.search.root(0).visits.max() > 50
    assert isinstance(MCTSAgent(evaluator=Playouts(2)).evaluator, Playouts)
    with pytest.raises(CarnacError, match="rule"):
        MCTSAgent(rule="uct")  # type: ignore[arg-type]


def test_mcts_option_values_are_checked() -> None:
    for bad in ({"c": float("nan")}, {"c": -1.0}, {"sims": 0}, {"width": -1}, {"playouts": 0}, {"reuse": 1}):
        with pytest.raises(CarnacError):
            MCTSAgent(**bad)
    with pytest.raises(CarnacError, match="no option 'rollout'"):  # the one-value option is gone
        make("mcts:rollout=random")


@pytest.mark.parametrize("cls", [MCTSAgent, AZAgent])
def test_each_option_default_is_written_once(cls) -> None:
    """The constructor, the spec and the help read one declaration per option."""
    import inspect

    from carnac_env.agents import agent_table, options_of

    known = options_of(cls)
    parameters = inspect.signature(cls).parameters
    table = agent_table()
    agent = cls()
    assert known, cls
    for key, option in known.items():
        assert parameters[key].default == option.default == getattr(agent, key)
        assert f"{key}={option.text(option.default)}" in table
    assert agent.spec == cls.name  # every option at its default: the bare name


def test_the_registry_lists_every_built_in_once_in_its_order_with_no_import_side_effect() -> None:
    """The table in agents/registry.py is the one place that names the built-ins and their
    order: a fresh interpreter that imports only the registry sees all of them, az included
    though its module is not imported (it used to register itself when imported), and each
    entry's class carries that name."""
    code = (
        "from carnac_env.agents.registry import BUILTIN, agent_names, builtin\n"
        "import sys\n"
        "print(agent_names(), 'carnac_env.agents.az' in sys.modules)\n"
        "print([builtin(n).name for n in agent_names()])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    names, loaded = done.stdout.splitlines()
    assert names == "['random', 'greedy', 'mcts', 'az'] False"
    assert loaded == "['random', 'greedy', 'mcts', 'az']"


def test_an_agent_registered_at_run_time_follows_the_built_ins_and_cannot_take_their_names() -> None:
    from carnac_env.agents import registry

    class Toy(RandomAgent):
        name = "toy-agent-for-the-registry-test"

    try:
        registry.register(Toy)
        assert registry.agent_names()[-1] == Toy.name and registry.builtin(Toy.name) is Toy
        assert isinstance(make(f"{Toy.name}", seed=1), Toy)
    finally:
        registry._REGISTERED.pop(Toy.name, None)

    class Impostor(RandomAgent):
        name = "greedy"

    with pytest.raises(ValueError, match="built-in"):
        registry.register(Impostor)
