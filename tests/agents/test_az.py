"""The ``az`` agent: the numpy network against PyTorch, model files, the agent's rules and play.

The search itself (backups with Carnac's turn order, PUCT, Gumbel) is tested in tests/search/test_search.py;
hostile model files in tests/models/test_model_files.py."""

from __future__ import annotations

import json
import random
import subprocess
import sys

import numpy as np
import pytest
from _frameworks import require

from carnac_env.agents import make
from carnac_env.agents.az import AZAgent
from carnac_env.core.boards import BOARDS, make_board
from carnac_env.core.game import OVER, RESPOND, GameState
from carnac_env.core.observation import observation_planes
from carnac_env.errors import CarnacError
from carnac_env.models import (
    GENERAL_MODEL,
    MODELS_DIR,
    PolicyValueNet,
    load,
    parameter_shapes,
    save,
    shipped_models,
    specialists,
)
from carnac_env.search import Network, Search


def random_net(board_name: str = "petit_menec", channels: int = 8, blocks: int = 1, hidden: int = 8, seed: int = 0):
    """A numpy network with random weights for ``board_name`` (no PyTorch needed)."""
    board = make_board(board_name)
    rng = np.random.default_rng(seed)
    params = {
        name: (rng.standard_normal(shape) * 0.3).astype(np.float32)
        for name, shape in parameter_shapes(channels, blocks, hidden).items()
    }
    header = {
        "board": {
            "name": board.name,
            "rows": board.rows,
            "cols": board.cols,
            "megaliths": board.megaliths,
            "min_dolmen": board.min_dolmen,
            "last_tilt": board.last_tilt,
        },
        "architecture": {"channels": channels, "blocks": blocks, "hidden": hidden},
    }
    return PolicyValueNet(header, params)


def play_game(first, second, board: str) -> list[int]:
    """A whole game on the core; ``apply`` rejects any illegal action."""
    state = GameState(board)
    agents = [first, second]
    actions = []
    while not state.is_over:
        action = agents[state.to_act].choose(state)
        assert action in state.legal_actions()
        state.apply(action)
        actions.append(action)
    return actions


# ---------------------------------------------------------------- the network and its files
def test_forward_shapes_and_ranges():
    net = random_net("small")
    state = GameState("small")
    state.apply(4 * 12)
    obs = np.stack([observation_planes(state, state.to_act), observation_planes(GameState("small"), 0)])
    logits, values = net.forward(obs)
    assert logits.shape == (2, make_board("small").num_actions)
    assert values.shape == (2,)
    assert np.all(np.abs(values) <= 1)
    assert logits.dtype == values.dtype == np.float32


def test_model_round_trip(tmp_path):
    net = random_net("small", channels=6, blocks=2, hidden=5, seed=3)
    net.header["training"] = {"note": "test"}
    path = tmp_path / "m.npz"
    save(net, path)
    again = load(path)
    assert again.header == net.header
    assert again.header["format"] == "carnac-az" and again.header["version"] == 3
    for name, value in net.params.items():
        np.testing.assert_array_equal(again.params[name], value)
    obs = np.stack([observation_planes(GameState("small"), 0)])
    np.testing.assert_array_equal(again.forward(obs)[0], net.forward(obs)[0])
    assert [p.name for p in tmp_path.iterdir()] == ["m.npz"]  # no temporary file left


def test_bad_model_files_name_the_file(tmp_path):
    missing = tmp_path / "nope.npz"
    with pytest.raises(CarnacError, match=r"nope\.npz"):
        load(missing)
    garbage = tmp_path / "garbage.npz"
    garbage.write_bytes(b"not a zip at all")
    with pytest.raises(CarnacError, match=r"garbage\.npz.*not a readable"):
        load(garbage)
    headerless = tmp_path / "headerless.npz"
    np.savez(headerless, x=np.zeros(3))
    with pytest.raises(CarnacError, match=r"headerless\.npz.*no JSON header"):
        load(headerless)
    net = random_net()
    for field, value, message in (("format", "other", "format 'other'"), ("version", 99, "version 99")):
        path = tmp_path / f"bad-{field}.npz"
        header = dict(net.header, **{field: value})
        np.savez(path, __header__=np.frombuffer(json.dumps(header).encode(), dtype=np.uint8), **net.params)
        with pytest.raises(CarnacError, match=f"bad-{field}.npz.*{message}"):
            load(path)
    misshapen = tmp_path / "misshapen.npz"
    params = dict(net.params, **{"stem.bias": np.zeros(3, dtype=np.float32)})
    np.savez(misshapen, __header__=np.frombuffer(json.dumps(net.header).encode(), dtype=np.uint8), **params)
    with pytest.raises(CarnacError, match=r"misshapen.npz.*stem.bias has shape \(3,\), expected \(8,\)"):
        load(misshapen)


def test_model_for_another_board_is_refused(tmp_path):
    path = tmp_path / "petit.npz"
    save(random_net("petit_menec"), path)
    agent = make(f"az:model={path}:sims=2")
    with pytest.raises(CarnacError, match=r"petit.npz.*trained on board 'petit_menec'.*'small'"):
        agent.choose(GameState("small"))
    with pytest.raises(CarnacError, match="neither a file nor a shipped model"):
        make(f"az:model={tmp_path / 'absent.npz'}")


def test_numpy_inference_equals_torch():
    torch = require("torch")
    from carnac_env.batch import BatchGame
    from carnac_env.train.model import build, to_numpy

    for name in ("petit_menec", "small"):
        board = make_board(name)
        torch.manual_seed(1)
        net = build({"channels": 16, "blocks": 2, "hidden": 12, "ownership": name == "small"}, board)
        games = BatchGame(board, num_envs=32, seed=2)
        step = games.reset()
        observations = []
        for _ in range(25):
            step = games.step(games.sample_actions())
            observations.append(step.observation)
        obs = np.concatenate(observations)
        assert obs[..., 4].any()  # pending megaliths included
        with torch.no_grad():
            logits, values = net(torch.from_numpy(obs))
        np_logits, np_values = to_numpy(net, board).forward(obs)
        np.testing.assert_allclose(np_logits, logits.numpy(), atol=1e-5)
        np.testing.assert_allclose(np_values, values.numpy(), atol=1e-5)


def test_playing_does_not_import_torch(tmp_path):
    path = tmp_path / "m.npz"
    save(random_net(), path)
    code = (
        "import sys\n"
        "from carnac_env.agents import make\n"
        "from carnac_env.core.game import GameState\n"
        f"agent = make('az:sims=4:model={path}')\n"
        "state = GameState('petit_menec')\n"
        "state.apply(agent.choose(state))\n"
        "assert 'torch' not in sys.modules and 'jax' not in sys.modules, sorted(sys.modules)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# ---------------------------------------------------------------- search over the network
def tiltable_respond_position() -> GameState:
    """Red has placed in the middle of an empty petit_menec board: White to tilt or decline."""
    state = GameState("petit_menec")
    state.apply((2 * 6 + 2) * 4)
    assert state.phase == RESPOND and state.to_act == 1
    return state


def find_deciding_position(seed: int) -> tuple[GameState, set[int], set[int]]:
    """A position where some legal action ends the game with a win for the player to act and
    some other does not; with the sets of winning and of other actions."""
    rng = random.Random(seed)
    for _ in range(300):
        state = GameState("petit_menec")
        while not state.is_over:
            wins, others = set(), set()
            for action in state.legal_actions():
                after = state.copy()
                after.apply_unchecked(action)
                if after.phase == OVER and after.result().winner == state.to_act:
                    wins.add(action)
                else:
                    others.add(action)
            if wins and others:
                return state, wins, others
            state.apply(rng.choice(state.legal_actions()))
    raise AssertionError("no deciding position found")


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_agent_finds_the_winning_end_with_a_network_that_knows_nothing(seed, tmp_path):
    state, wins, _ = find_deciding_position(seed)
    net = random_net("petit_menec", seed=seed)
    zero = PolicyValueNet(net.header, {k: np.zeros_like(v) for k, v in net.params.items()})  # uniform, value 0
    path = tmp_path / "zero.npz"
    save(zero, path)
    agent = make(f"az:sims={max(200, 3 * len(state.legal_actions()))}:model={path}")
    assert agent.choose(state) in wins


def test_batched_network_search_equals_single_searches():
    net = random_net("petit_menec", seed=5)
    rng = random.Random(4)
    states = []
    for _ in range(3):
        state = GameState("petit_menec")
        for _ in range(rng.randrange(1, 12)):
            state.apply(rng.choice(state.legal_actions()))
        states.append(state)
    from carnac_env.search import PUCT

    together = Search("petit_menec", Network(net), PUCT(1.5), trees=3)
    together.set_games(states)
    together.run(20)
    for t, state in enumerate(states):
        alone = Search("petit_menec", Network(net), PUCT(1.5))
        alone.set_games([state])
        alone.run(20)
        np.testing.assert_array_equal(alone.root(0).visits, together.root(t).visits)
        np.testing.assert_allclose(alone.root(0).values, together.root(t).values, atol=1e-6)


# ---------------------------------------------------------------- the agent
def test_spec_options():
    agent = make("az:sims=0:c=2")
    assert isinstance(agent, AZAgent) and agent.sims == 0 and agent.c == 2.0
    assert make(agent.spec).spec == agent.spec
    gumbel = make("az:rule=gumbel:considered=8:sims=16")
    assert (gumbel.rule, gumbel.considered) == ("gumbel", 8)
    assert make(gumbel.spec).spec == gumbel.spec == "az:sims=16:rule=gumbel:considered=8"
    with pytest.raises(CarnacError, match="sims=-1"):
        make("az:sims=-1")
    with pytest.raises(CarnacError, match="has no option 'depth'"):
        make("az:depth=3")
    with pytest.raises(CarnacError, match="rule='alphabeta'"):
        make("az:rule=alphabeta")


def test_raw_policy_is_the_best_legal_logit(tmp_path):
    path = tmp_path / "m.npz"
    net = random_net("petit_menec", seed=7)
    save(net, path)
    agent = make(f"az:sims=0:model={path}")
    state = tiltable_respond_position()
    logits, _ = net.forward(observation_planes(state, state.to_act)[None])
    legal = state.legal_actions()
    assert agent.choose(state) == legal[int(np.argmax(logits[0, legal]))]


@pytest.mark.parametrize("board", sorted(BOARDS))
def test_legal_and_deterministic_on_every_board(board, tmp_path):
    path = tmp_path / f"{board}.npz"
    save(random_net(board, seed=11), path)
    for rule in ("puct", "gumbel"):
        spec = f"az:sims=3:rule={rule}:model={path}"
        first = play_game(make(spec, seed=1), make("random", seed=2), board)
        again = play_game(make(spec, seed=9), make("random", seed=2), board)
        assert first == again  # the agent uses no randomness: the seed does not matter


@pytest.mark.parametrize("board", sorted(BOARDS))
def test_default_model_plays_every_board(board):
    """Without a model option az plays the board's specialist or the general model: a missing one fails here."""
    actions = play_game(make("az:sims=2"), make("greedy", seed=0), board)
    assert actions == play_game(make("az:sims=2"), make("greedy", seed=0), board)


def test_the_general_model_ships_with_its_card():
    """The general model, which plays every board without a specialist, is part of the package: a
    checkout or an install without it (a wheel without its data, a Git LFS pointer) fails here
    instead of skipping."""
    shipped = shipped_models()
    assert GENERAL_MODEL in shipped, f"missing the general model; shipped: {sorted(shipped)}"
    for folder in (MODELS_DIR, MODELS_DIR / "specialists", MODELS_DIR / "generations"):
        cards = {path.stem for path in folder.glob("*.json")}
        models = {path.stem for path in folder.glob("*.npz")}
        assert models, f"no model in {folder}"
        assert cards == models, f"a model without its card, or a card without its model: {cards ^ models}"


@pytest.mark.parametrize("name", sorted({GENERAL_MODEL} | set(shipped_models()) | set(specialists())))
def test_shipped_models_load_and_play(name):
    path = {**shipped_models(), **specialists()}[name]
    net = load(path)
    assert net.board_name == name
    assert path.stat().st_size < 5_000_000
    card = path.with_suffix(".json")
    assert card.exists(), f"{path.name} needs its model card {card.name}"
    assert json.loads(card.read_text())["board"] == name
    if name == "general":  # one network for every board: it reads the rules
        assert net.reads_rules and net.header["boards"]["mix"]
        for board in ("kerlescan", "petit_menec"):
            play_game(make(f"az:sims=8:model={name}"), make("az:sims=0"), board)
    else:
        play_game(make(f"az:sims=8:model={name}"), make("az:sims=0"), name)


def test_works_through_the_aec_env(tmp_path):
    import carnac_env

    path = tmp_path / "m.npz"
    save(random_net(), path)
    env = carnac_env.raw_env(board="petit_menec")
    env.reset(seed=0)
    agent = make(f"az:sims=4:model={path}")
    action = agent.act(env)
    assert action in env.unwrapped.game.legal_actions()


def test_train_command_without_torch_says_what_to_install(tmp_path):
    code = (
        "import sys\n"
        "sys.modules['torch'] = None  # as if PyTorch were not installed\n"
        "from carnac_env.cli import main\n"
        f"raise SystemExit(main(['train', '--out', {str(tmp_path / 'run')!r}, '--iterations', '1']))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 2, proc.stderr
    assert "needs PyTorch" in proc.stderr and "carnac-env[train]" in proc.stderr
