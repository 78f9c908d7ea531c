"""One network for every board: the rules inputs, the board mix, and which model plays a board.

The numpy network reads the board's rules through a fixed map per board (the stem's response to
constant planes); PyTorch's twin concatenates the planes. Both must give the same outputs on every
board, and a model with rules planes of zero weight must be exactly the model it started from.
"""

from __future__ import annotations

import numpy as np
import pytest
from _frameworks import require

from carnac_env.agents import make
from carnac_env.batch import BatchGame
from carnac_env.core.boards import BOARDS, make_board
from carnac_env.core.game import GameState
from carnac_env.errors import CarnacError
from carnac_env.models import (
    PLAY_CONVOLUTION,
    PolicyValueNet,
    cached,
    default_model,
    load,
    model_path,
    parameter_shapes,
    plays,
    save,
    shipped_models,
    specialists,
)
from carnac_env.models.network import RULES_INPUTS, rules_response, rules_vector
from carnac_env.train.mix import CUSTOM_LIMITS, DEFAULT_MIX, BoardMix, parse_mix, random_board


def rules_net(seed: int = 0, general: bool = True, board: str = "medium") -> PolicyValueNet:
    """A random rules-conditioned numpy network (a general one, or a specialist of ``board``)."""
    rng = np.random.default_rng(seed)
    shapes = parameter_shapes(8, 1, 8, ownership=True, rules=True, dolmens=True)
    params = {name: (rng.standard_normal(shape) * 0.3).astype(np.float32) for name, shape in shapes.items()}
    b = make_board(board)
    header = {
        "board": {"name": "general" if general else b.name, **b.rules()},
        "architecture": {"channels": 8, "blocks": 1, "hidden": 8, "ownership": True, "rules": True, "dolmens": True},
    }
    if general:
        header["boards"] = {"mix": {"medium": 1.0, "custom": 1.0}}
    return PolicyValueNet(header, params)


def observations(board, count: int = 24, seed: int = 3) -> np.ndarray:
    games = BatchGame(board, num_envs=8, seed=seed)
    step = games.reset()
    seen = []
    for _ in range(count // 8):
        step = games.step(games.sample_actions())
        seen.append(step.observation)
    return np.concatenate(seen)


def direct_forward(net: PolicyValueNet, obs: np.ndarray, board) -> np.ndarray:
    """The stem's first-layer pre-activation by the definition: a 3x3 convolution of the 9
    planes and the constant rules planes, zeros off the board (float64)."""
    weight = net.params["stem.weight"].astype(np.float64)
    n, rows, cols, _ = obs.shape
    x = obs.astype(np.float64)
    x[..., 8] /= board.megaliths
    rules = rules_vector(rows, cols, board.megaliths, board.min_dolmen, board.last_tilt)
    planes = np.concatenate([x, np.broadcast_to(rules, (n, rows, cols, len(RULES_INPUTS)))], axis=3)
    padded = np.zeros((n, rows + 2, cols + 2, planes.shape[3]))
    padded[:, 1:-1, 1:-1] = planes
    out = np.zeros((n, rows, cols, weight.shape[0]))
    for dy in range(3):
        for dx in range(3):
            out += np.einsum("nrck,ok->nrco", padded[:, dy : dy + rows, dx : dx + cols], weight[:, :, dy, dx])
    return out + net.params["stem.bias"]


def test_rules_vector_reads_every_rule():
    assert len(rules_vector(7, 10, 28, 3, True)) == len(RULES_INPUTS)
    base = rules_vector(7, 10, 28, 3, True)
    for changed in (
        rules_vector(7, 10, 28, 5, True),
        rules_vector(7, 10, 28, 3, False),
        rules_vector(7, 10, 56, 3, True),
        rules_vector(9, 14, 28, 3, True),
    ):
        assert not np.array_equal(changed, base)


@pytest.mark.parametrize("name", ["petit_menec", "kerlescan", "le_menec"])
def test_rules_response_is_the_convolution_of_constant_planes(name):
    board = make_board(name)
    net = rules_net(1)
    obs = observations(board)
    want = direct_forward(net, obs, board)
    rules = rules_vector(board.rows, board.cols, board.megaliths, board.min_dolmen, board.last_tilt)
    rules_map = rules_response(net.params["stem.weight"][:, 9:], rules, board.rows, board.cols)
    # what the rules planes add to the stem is the same map at every position of the batch
    zero_rules = dict(net.params)
    zero_rules["stem.weight"] = net.params["stem.weight"].copy()
    zero_rules["stem.weight"][:, 9:] = 0
    plain = PolicyValueNet(net.header, zero_rules)
    without = direct_forward(plain, obs, board)
    for k in range(len(obs)):
        np.testing.assert_allclose((want - without)[k].reshape(-1, 8), rules_map, atol=1e-5)
    assert np.abs(rules_map).max() > 0.1


def test_the_rules_change_the_outputs_and_the_board_is_checked():
    net = rules_net(2)
    medium, kerlescan = make_board("medium"), make_board("kerlescan")
    obs = observations(medium)
    a = net.forward(obs, board=medium)
    b = net.forward(obs, board=kerlescan)
    assert not np.allclose(a[0], b[0])  # same squares, another minimum dolmen
    np.testing.assert_array_equal(net.forward(obs)[0], a[0])  # no board: the header's rules (medium's)
    with pytest.raises(CarnacError, match="not of board 'small'"):
        net.forward(obs, board=make_board("small"))


@pytest.mark.parametrize("name", ["small", "kerlescan", "kermario"])
def test_numpy_equals_torch_with_rules_inputs(name):
    torch = require("torch")
    from carnac_env.train.model import board_rules, build, to_numpy

    board = make_board(name)
    torch.manual_seed(3)
    arch = {"channels": 8, "blocks": 2, "hidden": 8, "ownership": True, "rules": True, "dolmens": True}
    net = build(arch, make_board("medium"))
    with torch.no_grad():
        for p in net.parameters():
            p.add_(torch.randn_like(p) * 0.1)
    obs = observations(board)
    with torch.no_grad():
        logits, values = net(
            torch.from_numpy(obs),
            board_rules(board).expand(len(obs), -1),
            torch.full((len(obs),), float(board.megaliths)),
        )
    numpy_net = to_numpy(net, make_board("medium"), boards={"mix": {name: 1.0}})
    for convolution in ("im2col", "winograd"):
        numpy_net.convolution = convolution
        np_logits, np_values = numpy_net.forward(obs, board=board)
        np.testing.assert_allclose(np_logits, logits.numpy(), atol=2e-5)
        np.testing.assert_allclose(np_values, values.numpy(), atol=2e-5)


def test_a_run_started_from_a_plain_model_starts_as_that_model(tmp_path):
    require("torch")
    from carnac_env.train.config import Config
    from carnac_env.train.trainer import Trainer

    source = load(specialists()["small"]) if "small" in specialists() else None
    if source is None:
        pytest.fail("the shipped small specialist is missing")
    config = Config(board="general", mix="small:1,kerlescan:1", init="small", iterations=0, dolmens=0.5)
    with Trainer(tmp_path, config, progress=False) as t:
        assert t.architecture["rules"] and t.architecture["dolmens"]
        started = t.numpy_net()
    for name in ("small", "kerlescan"):
        board = make_board(name)
        obs = observations(board)
        theirs = source.forward(obs, supply_scale=board.megaliths)
        mine = started.forward(obs, board=board)
        np.testing.assert_allclose(mine[0], theirs[0], atol=1e-5)
        np.testing.assert_allclose(mine[1], theirs[1], atol=1e-5)


GENERAL_TINY = {
    "board": "general",
    "mix": "petit_menec:1,kerlescan:1,custom:1",
    "games": 6,
    "games_per_board": 2,
    "sims": 4,
    "considered": 4,
    "train_steps": 3,
    "batch_size": 48,
    "buffer": 1500,
    "channels": 8,
    "blocks": 1,
    "hidden": 8,
    "dolmens": 0.5,
    "bootstrap_iterations": 1,
    "eval_every": 2,
    "eval_games": 2,
    "eval_sims": 2,
    "mcts_sims": 10,
    "eval_boards": "petit_menec,kerlescan",
}


def test_a_general_run_trains_on_its_mix_and_resumes_exactly(tmp_path):
    require("torch")
    from _training import assert_same_run

    from carnac_env.train.config import Config
    from carnac_env.train.trainer import Trainer

    with Trainer(tmp_path / "a", Config(**GENERAL_TINY, iterations=3), progress=False) as straight:
        rows = straight.run()
    boards = {chunk.board.name for chunk in straight.replay.chunks}
    assert {"petit_menec", "kerlescan", "custom"} <= boards
    assert rows[1]["vs_greedy"] == np.mean([rows[1]["vs_greedy@petit_menec"], rows[1]["vs_greedy@kerlescan"]])
    for chunk in straight.replay.chunks:  # each position's dolmen target is that of its own board
        assert chunk.samples.observations.shape[1:3] == (chunk.board.rows, chunk.board.cols)
        assert (chunk.samples.dolmens >= 0).all()
    model = load(tmp_path / "a" / "model.npz")
    assert model.reads_rules and model.header["boards"]["mix"]["custom"] == 1.0
    assert plays(model, make_board("custom", rows=5, cols=13))
    with Trainer(tmp_path / "b", Config(**GENERAL_TINY, iterations=2), progress=False) as first:
        first.run()
    with Trainer(tmp_path / "b", iterations=3, progress=False) as resumed:
        resumed.run()
        assert_same_run(straight, resumed)


def test_a_run_resumes_from_its_small_file_without_the_buffer(tmp_path):
    require("torch")
    from carnac_env.train.config import Config
    from carnac_env.train.trainer import Trainer

    with Trainer(tmp_path / "a", Config(**GENERAL_TINY, iterations=2), progress=False) as t:
        t.run()
        weights = {k: v.clone() for k, v in t.net.state_dict().items()}
    fresh = tmp_path / "b"
    fresh.mkdir()
    (fresh / "resume.pt").write_bytes((tmp_path / "a" / "resume.pt").read_bytes())
    assert (tmp_path / "a" / "resume.pt").stat().st_size < (tmp_path / "a" / "checkpoint.pt").stat().st_size
    with Trainer(fresh, iterations=3, progress=False) as resumed:
        assert resumed.iteration == 2 and resumed.replay.size == 0
        for key, value in weights.items():
            assert resumed.net.state_dict()[key].equal(value)
        resumed.run()
        assert resumed.iteration == 3 and resumed.replay.size > 0
    assert (fresh / "checkpoint.pt").exists()


def test_parse_mix_names_the_bad_part():
    assert parse_mix("small:1,large:2,custom:0.5") == {"small": 1.0, "large": 2.0, "custom": 0.5}
    assert set(parse_mix(DEFAULT_MIX)) == {*BOARDS, "custom"}
    for bad, words in (
        ("", "empty"),
        ("nowhere:1", "unknown board 'nowhere'"),
        ("small:0", "weight '0'"),
        ("small:x", "weight 'x'"),
        ("small:1,small:2", "named twice"),
        ("small:nan", "weight"),
    ):
        with pytest.raises(CarnacError, match=words):
            parse_mix(bad)
    with pytest.raises(CarnacError, match="for --board general"):
        BoardMix.of("small", "small:1")


def test_the_schedule_follows_the_weights():
    mix = BoardMix(parse_mix("small:1,large:3"))
    names = mix.schedule(0, 40)
    assert names.count("large") == 30 and names.count("small") == 10
    assert mix.schedule(7, 5) == names[7:12]  # the sequence does not depend on how it is cut


def test_random_boards_stay_within_the_limits():
    rng = np.random.default_rng(0)
    for _ in range(300):
        board = random_board(rng)
        low, high = CUSTOM_LIMITS["rows"][0], CUSTOM_LIMITS["cols"][1]
        assert low <= board.rows <= high and low <= board.cols <= high
        assert min(board.rows, board.cols) <= CUSTOM_LIMITS["rows"][1]
        assert CUSTOM_LIMITS["min_dolmen"][0] <= board.min_dolmen <= CUSTOM_LIMITS["min_dolmen"][1]
        assert 4 <= board.megaliths <= 127


def test_models_trained_under_other_rules_are_refused(tmp_path):
    specialist = rules_net(4, general=False, board="medium")
    path = tmp_path / "medium-like.npz"
    save(specialist, path)
    assert plays(specialist, make_board("medium"))
    assert not plays(specialist, make_board("kerlescan"))  # same size, other minimum dolmen
    assert not plays(specialist, make_board("medium", last_tilt=False))
    with pytest.raises(CarnacError, match=r"min dolmen 5.*az:model=general"):
        make(f"az:sims=2:model={path}").choose(GameState("kerlescan"))
    general = tmp_path / "general-like.npz"
    save(rules_net(5), general)
    state = GameState("kerlescan")
    assert make(f"az:sims=2:model={general}").choose(state) in state.legal_actions()


@pytest.mark.parametrize("name", sorted(BOARDS))
def test_every_board_has_a_default_model_trained_for_its_rules(name):
    board = make_board(name)
    chosen = default_model(board)
    assert chosen is not None, f"no shipped model plays {name}"
    assert plays(load(shipped_models()[chosen]), board)
    assert default_model(make_board("custom", rows=6, cols=11, min_dolmen=4)) == "general"


def test_the_general_model_is_the_default_on_every_board_and_the_specialists_play_by_name():
    # no specialist is measurably stronger than the general model on its board (docs/training.md),
    # so none is a default; each is still played by its name, from its own folder
    assert all(default_model(make_board(name)) == "general" for name in BOARDS)
    assert set(specialists()) == {"small", "medium", "petit_menec"}
    for name, path in specialists().items():
        assert model_path(name) == path and path.parent.name == "specialists"
        assert plays(load(path), make_board(name)) and not plays(load(path), make_board("large"))
    assert set(shipped_models()) == {"general"}


@pytest.mark.parametrize("name", ["small", "large", "le_menec"])
def test_a_model_loaded_to_play_computes_with_winograd_close_to_the_definition(name):
    board = make_board(name)
    played, exact = cached(model_path("general")), load(model_path("general"))
    assert played.convolution == PLAY_CONVOLUTION == "winograd" and exact.convolution == "im2col"
    assert cached(model_path("general")) is played  # one network per process, shared
    obs = observations(board)
    fast, slow = played.forward(obs, board=board), exact.forward(obs, board=board)
    for a, b in zip(fast, slow):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-4)
