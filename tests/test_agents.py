"""Agents: legal on every board, deterministic per seed, specs and user agents."""

from __future__ import annotations

import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import carnac_env
from carnac_env.agents import GreedyAgent, MCTSAgent, RandomAgent, evaluate, make, parse_spec
from carnac_env.agents.greedy import action_values
from carnac_env.agents.mcts import (
    PUCT,
    UCT,
    CompiledRollout,
    Evaluation,
    GreedyValue,
    Node,
    RandomRollout,
    Search,
    backup,
    find_subtree,
    rollout,
)
from carnac_env.core.actions import place_action
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
    "spec",
    [
        *FAST_SPECS,
        "mcts:sims=10:width=0",
        "mcts:sims=10:rollout=eval",
        "mcts:sims=10:rollout=own",
        "mcts:sims=10:rollout=python",
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
        ("carnac_env.core.game.GameState", ["no act(env) method"]),
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


class Recorder:
    """A user agent class that records being built (its constructor must not run on a bad spec)."""

    built = 0

    def __init__(self, depth: int = 1) -> None:
        Recorder.built += 1

    def act(self, env: object) -> int:
        return env.unwrapped.game.legal_actions()[0]  # type: ignore[attr-defined]


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


def test_mcts_time_budget() -> None:
    state = GameState("small")
    agent = make("mcts:seconds=0.05:width=0", seed=1)
    assert agent.choose(state) in state.legal_actions()
    assert agent.last_sims >= 16
    assert agent.spec == "mcts:seconds=0.05:width=0"


# --------------------------------------------------------------------------- search parts
class RedIsWinning:
    """An evaluator that says Red wins every position (a value for the player to act)."""

    def evaluate(self, state: GameState, rng: object) -> Evaluation:
        return Evaluation(1.0 if state.to_act == 0 else -1.0)


def _walk(node: Node):
    stack = [node]
    while stack:
        node = stack.pop()
        if node.expanded:
            yield node
            stack.extend(child for child in node.children if child is not None)


def test_backup_takes_sides_by_the_player_of_each_node_not_by_depth() -> None:
    # Red places, White tilts, White places again (the same player twice), Red places
    nodes = []
    for player in (0, 1, 1, 0):
        state = GameState("small")
        state.to_act = player  # only the player to act matters to the backup
        node = Node()
        node.expand(state, [10, 20])
        nodes.append(node)
    path = [(node, 0) for node in nodes]
    backup(path, 1, 0.5)  # White's leaf value
    assert [node.w[0] for node in nodes] == [-0.5, 0.5, 0.5, -0.5]
    assert [node.n[0] for node in nodes] == [1, 1, 1, 1]
    assert all(node.visits == 1 for node in nodes)


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


def test_search_values_are_for_the_player_who_chose_each_edge_when_a_player_moves_twice() -> None:
    # Red has placed on an open medium board; White responds. After a tilt White places
    # next, so White chooses two edges in a row. Every leaf says "Red wins" (no game ends
    # this early), so each edge's mean must be +1 where Red chose it and -1 where White did.
    state = GameState("medium")
    state.apply(place_action(state.board, 33, 0))
    assert state.phase == RESPOND and state.to_act == 1
    agent = MCTSAgent(seed=0, sims=400, width=0, evaluator=RedIsWinning())
    agent.choose(state)
    twice = 0
    for node in _walk(agent.root):
        for n, w, child in zip(node.n, node.w, node.children):
            if n:
                assert w / n == pytest.approx(1.0 if node.player == 0 else -1.0)
                assert child.visits == n  # a node's visits equal its parent edge's count
        twice += node is not agent.root and node.player == 1
    assert twice > 0  # nodes where White places right after White's tilt
    assert agent.root.visits == sum(agent.root.n) == 400


def test_mcts_tilts_and_then_wins_with_a_second_move_in_a_row() -> None:
    state = _white_to_respond()
    values = {action: _minimax(_after(state, action), 1) for action in state.legal_actions()}
    assert sorted(values.values()) == [-1, 1]  # one winning response, one losing
    for rollout_name in ("python", "random", "eval"):
        agent = MCTSAgent(seed=1, sims=300, width=0, rollout=rollout_name)
        action = agent.choose(state)
        assert values[action] == 1, rollout_name
        root = agent.root
        best = root.best_index()
        assert root.w[best] / root.n[best] > 0.5, rollout_name  # White's own view of its tilt
        child = root.children[best]
        assert child.player == 1  # White again
        after = _after(state, action)
        chosen = child.actions[child.best_index()]
        assert _minimax(_after(after, chosen), 1) == 1, rollout_name


def test_tree_reuse_continues_from_the_subtree_of_the_moves_played() -> None:
    state = GameState("small")
    agent = MCTSAgent(seed=2, sims=300, width=0, rollout="python")
    action = agent.choose(state)
    old_root = agent.root
    state.apply(action)
    reply = state.legal_actions()[-1]
    expected = None
    index = old_root.actions.index(action)
    node = old_root.children[index]
    if node.expanded and reply in node.actions and node.children[node.actions.index(reply)] is not None:
        expected = node.children[node.actions.index(reply)]
    state.apply(reply)
    found = find_subtree(old_root, state)
    assert found is expected or (expected is not None and not expected.expanded and found is None)
    carried = found.visits if found is not None else 0
    agent.choose(state)
    assert agent.last_sims == 300
    if found is not None:
        assert agent.root is found and agent.root.visits >= 300 + carried - 1
    # without reuse, a fresh tree every move
    fresh = MCTSAgent(seed=2, sims=300, width=0, rollout="python", reuse=False)
    fresh.choose(state)
    assert fresh.root.visits <= 300


def test_tree_reuse_finds_only_equal_positions() -> None:
    state = GameState("small")
    agent = MCTSAgent(seed=3, sims=200, width=0, rollout="python")
    agent.choose(state)
    other = GameState("petit_menec")
    assert find_subtree(agent.root, other) is None
    assert find_subtree(agent.root, state) is agent.root


class Prior:
    """An evaluator with priors that point at one action."""

    def __init__(self, action: int) -> None:
        self.action = action

    def evaluate(self, state: GameState, rng: object) -> Evaluation:
        priors = [0.001] * state.board.num_actions
        priors[self.action] = 1.0
        return Evaluation(0.0, priors)


def test_puct_follows_the_evaluators_priors() -> None:
    state = GameState("small")
    agent = MCTSAgent(seed=0, sims=100, width=0, evaluator=Prior(4 * 9 + 1), policy=PUCT(c=1.5))
    assert agent.choose(state) == 4 * 9 + 1
    assert max(agent.root.n) > 50


def test_search_is_usable_without_the_agent() -> None:
    import random

    state = GameState("small")
    search = Search(UCT(1.0), GreedyValue(), random.Random(0))
    root = search.new_root(state)
    assert search.run(root, sims=50) == 50
    assert root.visits == 50 and sum(root.n) == 50
    assert state == GameState("small")


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -1.0])
def test_tree_policies_reject_bad_constants(bad: float) -> None:
    with pytest.raises(CarnacError):
        UCT(bad)
    with pytest.raises(CarnacError):
        PUCT(bad)


@pytest.mark.parametrize("make_evaluator", [RandomRollout, CompiledRollout])
@pytest.mark.parametrize("player", [0, 1])
def test_rollout_evaluators_give_the_value_for_the_player_to_act(make_evaluator, player: int) -> None:
    import random

    # one empty square and one megalith left: whoever places it, Red wins
    rows = ["RRRR.W", "WWWRWR", "RWRWWR", "WWWWWR", "WWRRRR", "RWRRRR"]
    state = GameState.from_diagram("petit_menec", rows, supply=1, last_tilt=False, megaliths=40, to_act=player)
    before = state.copy()
    evaluator = make_evaluator()
    values = {evaluator.evaluate(state.copy(), random.Random(seed)).value for seed in range(10)}
    assert values == {1.0 if player == 0 else -1.0}
    evaluator.evaluate(state, random.Random(0))
    if make_evaluator is CompiledRollout:
        assert state == before  # the compiled playout leaves the state alone
