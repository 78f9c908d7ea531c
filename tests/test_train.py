"""The AlphaZero trainer: a short run learns, checkpoints load, resume exactly, and the CLI runs."""

from __future__ import annotations

import numpy as np
import pytest
from _frameworks import require

torch = require("torch")

from carnac_env.agents import make  # noqa: E402
from carnac_env.agents.az import PolicyValueNet  # noqa: E402
from carnac_env.core.game import GameState  # noqa: E402
from carnac_env.errors import CarnacError  # noqa: E402
from carnac_env.train.cli import run  # noqa: E402
from carnac_env.train.selfplay import greedy_games, selfplay_games  # noqa: E402
from carnac_env.train.trainer import Config, Trainer  # noqa: E402

TINY = {
    "board": "petit_menec",
    "games": 4,
    "bootstrap_iterations": 1,
    "sims": 4,
    "train_steps": 10,
    "batch_size": 64,
    "buffer": 2_000,
    "channels": 8,
    "blocks": 1,
    "hidden": 8,
    "eval_every": 2,
    "eval_games": 2,
    "eval_sims": 2,
    "mcts_sims": 10,
}


def test_games_give_consistent_samples():
    from carnac_env.core.boards import make_board

    board = make_board("petit_menec")
    for samples, stats in (
        greedy_games(board, 3, np.random.default_rng(0)),
        selfplay_games(board, _tiny_net(board), 3, 3, np.random.default_rng(0)),
    ):
        assert stats["games"] == 3 and len(samples) == stats["positions"]
        assert stats["red_wins"] + stats["white_wins"] <= 3
        np.testing.assert_allclose(samples.policies.sum(1), 1.0, atol=1e-5)
        assert not (samples.policies[~samples.masks] > 0).any()  # targets only on legal actions
        assert set(np.unique(samples.values)) <= {-1.0, 0.0, 1.0}
        assert (samples.observations[..., 7] == 1).all()  # the player to act's view


def _tiny_net(board):
    from carnac_env.train.model import build, to_numpy

    torch.manual_seed(0)
    return to_numpy(build({"channels": 8, "blocks": 1, "hidden": 8}, board), board)


def test_short_run_improves_the_loss_and_writes_a_loadable_checkpoint(tmp_path):
    trainer = Trainer(tmp_path, Config(**TINY, iterations=2), progress=False)
    row = trainer.run_iteration()
    assert row["kind"] == "greedy"
    before = trainer.buffer_loss()
    for _ in range(60):
        trainer.train_step()
    after = trainer.buffer_loss()
    assert after < before - 0.1, (before, after)
    row = trainer.run_iteration()
    assert row["kind"] == "selfplay" and "vs_greedy" in row and "vs_mcts" in row
    for name in ("checkpoint.pt", "model.npz", "best.npz", "curve.csv", "curve.json", "config.json", "log.txt"):
        assert (tmp_path / name).exists(), name
    assert not list(tmp_path.glob("*.tmp"))
    net = PolicyValueNet.load(tmp_path / "model.npz")
    assert net.header["training"]["games"] == 8
    agent = make(f"az:sims=4:model={tmp_path / 'model.npz'}")
    state = GameState("petit_menec")
    while not state.is_over:
        state.apply(agent.choose(state) if state.to_act == 0 else make("random").choose(state))


def test_resume_continues_exactly(tmp_path):
    straight = Trainer(tmp_path / "a", Config(**TINY, iterations=3), progress=False)
    straight.run()
    first = Trainer(tmp_path / "b", Config(**TINY, iterations=2), progress=False)
    first.run()
    resumed = Trainer(tmp_path / "b", None, progress=False, iterations=3)
    assert resumed.iteration == 2 and resumed.games_played == 8
    resumed.run()

    def timeless(curve):
        return [{k: v for k, v in row.items() if k not in ("wall_seconds", "cpu_seconds")} for row in curve]

    assert timeless(resumed.curve) == timeless(straight.curve)
    for name, value in straight.net.state_dict().items():
        torch.testing.assert_close(resumed.net.state_dict()[name], value, rtol=0, atol=0)


def test_resume_on_another_board_is_refused(tmp_path):
    Trainer(tmp_path, Config(**TINY, iterations=1), progress=False).run()
    with pytest.raises(CarnacError, match=r"petit_menec.*not 'small'"):
        Trainer(tmp_path, Config(**dict(TINY, board="small")), progress=False)


def test_command_line(tmp_path, capsys):
    args = ["--out", str(tmp_path), "--iterations", "1", "--no-progress"]
    for key, value in TINY.items():
        args += [f"--{key.replace('_', '-')}", str(value)]
    assert run(args) == 0
    assert "iteration 1" in capsys.readouterr().out
    assert run(["--out", str(tmp_path), "--iterations", "2", "--no-progress"]) == 0
    assert "resuming" in capsys.readouterr().out
    assert len((tmp_path / "log.txt").read_text().splitlines()) == 2


def test_init_from_a_model_of_another_board(tmp_path):
    Trainer(tmp_path / "petit", Config(**TINY, iterations=1), progress=False).run()
    source = tmp_path / "petit" / "model.npz"
    small = Trainer(tmp_path / "small", Config(**dict(TINY, board="small"), init=str(source)), progress=False)
    for name, value in PolicyValueNet.load(source).params.items():
        np.testing.assert_array_equal(small.net.state_dict()[name].numpy(), value)
    with pytest.raises(CarnacError, match="architecture"):
        Trainer(tmp_path / "wide", Config(**dict(TINY, channels=16), init=str(source)), progress=False)


def test_carnac_train_runs_the_same_command_line(tmp_path, capsys):
    from carnac_env.cli import main

    argv = ["train", "--board", "petit_menec", "--out", str(tmp_path), "--iterations", "1", "--games", "2"]
    argv += ["--sims", "2", "--train-steps", "2", "--eval-every", "0", "--no-progress"]
    assert main(argv) == 0
    assert (tmp_path / "model.npz").exists()
    assert make(f"az:model={tmp_path / 'model.npz'}:sims=0").choose(GameState("petit_menec")) in range(149)
