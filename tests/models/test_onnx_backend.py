"""The onnxruntime backend (:mod:`carnac_env.models.onnx_runtime`, ``az:backend=onnx``): its
graphs against numpy's forward, the int8 graph's accuracy, and the agent option. Skipped
without onnx and onnxruntime (the ``onnx`` extra)."""

from __future__ import annotations

import pickle
import sys

import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from carnac_env.agents import make
from carnac_env.core.boards import make_board
from carnac_env.core.game import GameState
from carnac_env.errors import CarnacError
from carnac_env.models import PolicyValueNet, load, model_path, parameter_shapes
from carnac_env.models.onnx_runtime import OnnxNet, random_positions

BOARDS = ("small", "medium", "large", "le_menec")
TOLERANCE = 1e-4


@pytest.fixture(scope="module")
def general() -> PolicyValueNet:
    return load(model_path("general"))


def assert_close(got: tuple[np.ndarray, np.ndarray], want: tuple[np.ndarray, np.ndarray]) -> None:
    (logits, values), (ref_logits, ref_values) = got, want
    assert logits.dtype == np.float32 and values.dtype == np.float32
    assert logits.shape == ref_logits.shape and values.shape == ref_values.shape
    assert np.abs(logits - ref_logits).max(initial=0.0) <= TOLERANCE
    assert np.abs(values - ref_values).max(initial=0.0) <= TOLERANCE


@pytest.mark.parametrize("board", BOARDS)
def test_float32_graph_equals_numpy_on_every_board_and_batch(general, board):
    board = make_board(board)
    fast = OnnxNet(general)
    obs, _ = random_positions(board, 70, seed=3)
    for batch in (1, 8, 64, 70):
        assert_close(fast.forward(obs[:batch], board=board), general.forward(obs[:batch], board=board))


def test_rules_and_supply_scale_are_the_boards(general):
    """Other rules on one board size are another graph: the rules planes and supply divisor follow."""
    board, other = make_board("small"), make_board("small", megaliths=20, min_dolmen=4, last_tilt=False)
    fast = OnnxNet(general)
    obs, _ = random_positions(board, 16, seed=4)
    for rules in (board, other):
        assert_close(fast.forward(obs, board=rules), general.forward(obs, board=rules))
    assert_close(fast.forward(obs, 40.0, board=board), general.forward(obs, 40.0, board=board))


def test_specialist_without_board_reads_its_own_board():
    """A specialist (no rules inputs) on its own board; observations of another size need the board."""
    net = load(model_path("small"))
    fast = OnnxNet(net)
    obs, _ = random_positions(make_board("small"), 24, seed=5)
    assert_close(fast.forward(obs), net.forward(obs))
    with pytest.raises(CarnacError, match="needs the board"):
        fast.forward(np.zeros((1, 7, 10, 9), np.int8))


@pytest.mark.parametrize(("channels", "blocks", "rows", "cols"), [(8, 0, 3, 5), (16, 2, 6, 7), (5, 1, 1, 4)])
def test_other_architectures_and_shapes(channels, blocks, rows, cols):
    rng = np.random.default_rng(channels)
    params = {
        name: (rng.standard_normal(shape) / np.sqrt(np.prod(shape[1:]))).astype(np.float32)
        for name, shape in parameter_shapes(channels, blocks, 12, ownership=True).items()
    }
    board = make_board("custom", rows=rows, cols=cols, megaliths=12)
    header = {
        "board": {**board.rules(), "name": board.name},
        "architecture": {"channels": channels, "blocks": blocks, "hidden": 12, "ownership": True},
    }
    net = PolicyValueNet(header, params)
    obs, _ = random_positions(board, 20, seed=6)
    assert_close(OnnxNet(net).forward(obs, board=board), net.forward(obs, board=board))


def test_int8_graph_is_close_and_mostly_agrees(general):
    """The int8 graph is not equal: it keeps the best legal move of the raw policy on most positions."""
    board = make_board("small")
    obs, legal_sets = random_positions(board, 256, seed=7)
    logits, values = OnnxNet(general, "int8").forward(obs, board=board)
    want_logits, want_values = general.forward(obs, board=board)
    assert logits.shape == want_logits.shape and values.shape == want_values.shape
    # int8's error grows with the weights' range: general-g5 came to 2.5 on logits up to 23 and 0.16
    # on values, general-g6 to 3.5 on logits up to 33 and 0.30 (random positions, this machine)
    assert np.abs(logits - want_logits).max() < 0.15 * np.abs(want_logits).max()
    assert np.abs(values - want_values).max() < 0.4
    same = [int(np.argmax(a[legal]) == np.argmax(b[legal])) for a, b, legal in zip(logits, want_logits, legal_sets)]
    assert np.mean(same) >= 0.85


def test_bad_inputs_empty_batch_and_pickling(general):
    board = make_board("small")
    fast = OnnxNet(general)
    logits, values = fast.forward(np.zeros((0, 5, 8, 9), np.int8), board=board)
    assert logits.shape == (0, 5 * 8 * 4 + 5) and values.shape == (0,)
    with pytest.raises(CarnacError, match="expected"):
        fast.forward(np.zeros((2, 5, 8, 3), np.int8), board=board)
    with pytest.raises(CarnacError, match="not of board"):
        fast.forward(np.zeros((2, 7, 10, 9), np.int8), board=board)
    with pytest.raises(CarnacError, match="precision"):
        OnnxNet(general, "float16")
    obs, _ = random_positions(board, 8, seed=8)
    again = pickle.loads(pickle.dumps(fast))
    assert again.precision == "float32" and again.channels == general.channels
    assert_close(again.forward(obs.astype(np.float32), board=board), general.forward(obs, board=board))


def test_az_backend_option_plays_as_numpy():
    """``az:backend=onnx`` (float32) makes the numpy agent's moves; the spec keeps the option."""
    agent = make("az:sims=24:backend=onnx")
    assert agent.spec == "az:sims=24:backend=onnx"
    reference = make("az:sims=24")
    state = GameState("small")
    for _ in range(6):
        action = agent.choose(state)
        assert action == reference.choose(state)
        state.apply(action)
    assert agent.search is not None and isinstance(agent.search.evaluator.net, OnnxNet)
    int8 = make("az:sims=8:backend=onnx-int8")
    assert int8.choose(GameState("medium")) in GameState("medium").legal_actions()
    with pytest.raises(CarnacError):
        make("az:backend=tensorrt")


def test_missing_onnxruntime_is_said_when_the_agent_is_made(monkeypatch):
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # import onnxruntime raises ImportError
    with pytest.raises(CarnacError, match="carnac-env\\[onnx\\]"):
        make("az:backend=onnx")
    assert make("az").backend == "numpy"


def test_missing_onnxruntime_is_said_before_training_starts(monkeypatch, tmp_path, capsys):
    pytest.importorskip("torch")
    from carnac_env.cli import main

    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    out = tmp_path / "run"
    assert (
        main(["train", "--out", str(out), "--board", "petit_menec", "--selfplay-backend", "onnx-int8", "--no-progress"])
        == 2
    )
    assert "carnac-env[onnx]" in capsys.readouterr().err and not out.exists()


def test_selfplay_on_the_int8_graph_gives_valid_targets_and_trains(tmp_path):
    """``selfplay_backend="onnx-int8"``: the searches run on the int8 twin of each iteration's
    network (the default stays numpy), their samples are as valid, and a short run trains."""
    pytest.importorskip("torch")
    from carnac_env.train.selfplay import Shard, selfplay_games, selfplay_network
    from carnac_env.train.trainer import Config, Trainer

    board = make_board("small")
    general = load(model_path("general"))
    assert isinstance(selfplay_network(general, "onnx-int8"), OnnxNet)
    assert not isinstance(selfplay_network(general), OnnxNet)
    with pytest.raises(CarnacError, match="'tpu'"):
        selfplay_network(general, "tpu")
    shard = Shard("selfplay", 4, 0, sims=8, backend="onnx-int8")
    samples, stats = selfplay_games(board, general, shard, np.random.default_rng(0))
    assert stats["games"] == 4 and len(samples) == stats["positions"] > 0
    np.testing.assert_allclose(samples.policies.sum(1), 1.0, atol=1e-5)
    assert not (samples.policies[~samples.masks] > 0).any()
    # the int8 network searches differently from the numpy one on the same seeds
    numpy_samples, _ = selfplay_games(board, general, Shard("selfplay", 4, 0, sims=8), np.random.default_rng(0))
    assert not np.array_equal(samples.policies[:8], numpy_samples.policies[:8])
    config = Config(board="petit_menec", games=4, sims=4, train_steps=2, batch_size=16, buffer=2000,
                    channels=8, blocks=1, hidden=8, eval_every=0, bootstrap_iterations=0, iterations=1,
                    selfplay_backend="onnx-int8")  # fmt: skip
    with Trainer(tmp_path / "run", config, progress=False) as trainer:
        rows = trainer.run()
    assert rows and rows[-1]["games"] == 4 and np.isfinite(rows[-1]["loss"])
