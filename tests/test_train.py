"""The AlphaZero trainer: a short run learns, checkpoints load, resume exactly, and the CLI runs."""

from __future__ import annotations

import numpy as np
import pytest
from _frameworks import require

torch = require("torch")

from _training import SHARDED, TINY, assert_same_run  # noqa: E402

from carnac_env.agents import make  # noqa: E402
from carnac_env.agents.az import PolicyValueNet  # noqa: E402
from carnac_env.core.game import GameState  # noqa: E402
from carnac_env.errors import CarnacError  # noqa: E402
from carnac_env.train.cli import run  # noqa: E402
from carnac_env.train.selfplay import greedy_games, selfplay_games  # noqa: E402
from carnac_env.train.trainer import Config, Trainer  # noqa: E402


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


# ---------------------------------------------------------------- shards and workers


def test_one_shard_plays_with_the_runs_own_generator(tmp_path):
    """selfplay_shards=1 (the default, and every run before shards existed) plays the
    iteration's games with the run's generator, as it always did."""
    from carnac_env.core.boards import make_board

    trainer = Trainer(tmp_path, Config(**dict(TINY, iterations=1)), progress=False)
    trainer.run_iteration()
    samples, _ = greedy_games(make_board("petit_menec"), TINY["games"], np.random.default_rng(0))
    np.testing.assert_array_equal(trainer.replay.observations[: len(samples)], samples.observations)
    np.testing.assert_array_equal(trainer.replay.policies[: len(samples)], samples.policies)
    assert trainer.replay.size == len(samples)


def test_shards_split_the_games_and_play_the_same_on_local_workers(tmp_path):
    from carnac_env.train.workers import LocalPlayers, shard_players

    here = Trainer(tmp_path / "here", Config(**SHARDED), progress=False)
    here.run()
    assert here.curve[0]["kind"] == "greedy" and here.curve[1]["kind"] == "selfplay"
    assert here.games_played == 2 * TINY["games"]
    with shard_players(workers=2) as players:
        assert isinstance(players, LocalPlayers) and players.workers == 2
        there = Trainer(tmp_path / "there", Config(**SHARDED), progress=False, players=players)
        there.run()
    assert_same_run(here, there)
    assert there.cpu > 0
    # the same settings with one shard give another run (the split is part of the settings)
    one = Trainer(tmp_path / "one", Config(**dict(SHARDED, selfplay_shards=1)), progress=False)
    one.run()
    assert one.replay.size != here.replay.size or not np.array_equal(
        one.replay.observations[: one.replay.size], here.replay.observations[: here.replay.size]
    )


def test_a_resumed_run_may_change_its_workers(tmp_path):
    from carnac_env.train.workers import shard_players

    straight = Trainer(tmp_path / "a", Config(**dict(SHARDED, iterations=3)), progress=False)
    straight.run()
    first = Trainer(tmp_path / "b", Config(**SHARDED), progress=False)
    first.run()
    with shard_players(workers=2) as players:
        resumed = Trainer(tmp_path / "b", None, progress=False, iterations=3, players=players)
        resumed.run()
    assert_same_run(straight, resumed)


def test_split_games():
    from carnac_env.train.selfplay import split_games

    assert split_games(10, 3) == [4, 3, 3]
    assert split_games(4, 4) == [1, 1, 1, 1]
    assert split_games(7, 1) == [7]


def test_bad_shard_and_worker_options_are_clear_errors(tmp_path, capsys):
    for shards in (0, 5, 2.5, True):
        with pytest.raises(
            CarnacError, match=r"selfplay_shards must be a whole number from 1 to the games per iteration \(4\)"
        ):
            Trainer(tmp_path / "t", Config(**dict(TINY, selfplay_shards=shards)), progress=False)
        assert not (tmp_path / "t").exists()
    base = ["--out", str(tmp_path / "o"), "--iterations", "1", "--no-progress", "--games", "4"]
    for extra, words in [
        (["--selfplay-shards", "5"], "selfplay_shards must be a whole number from 1 to the games per iteration (4)"),
        (["--workers", "0"], "workers must be at least 1, got 0"),
        (["--workers", "300"], "workers must be at most 256"),
    ]:
        assert run(base + extra) == 2
        assert words in capsys.readouterr().err
        assert not (tmp_path / "o").exists()


def test_workers_and_the_cli_never_import_ray_or_torch_unasked(tmp_path):
    """A worker plays a shard with numpy alone; `carnac train --workers 2` does not import Ray."""
    import subprocess
    import sys

    code = (
        "import sys, numpy as np\n"
        "from carnac_env.agents.az import PolicyValueNet\n"
        "from carnac_env.core.boards import make_board\n"
        "from carnac_env.train.selfplay import Shard, timed_shard\n"
        "import carnac_env.train.workers\n"
        "net = PolicyValueNet.load('carnac_env/models/petit_menec.npz')\n"
        "samples, stats, cpu = timed_shard(make_board('petit_menec'), Shard('selfplay', 2, 5, sims=2), net)\n"
        "assert stats['games'] == 2 and len(samples) == stats['positions']\n"
        "assert 'torch' not in sys.modules and 'ray' not in sys.modules, 'torch or ray imported'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    code = (
        "import sys\nfrom carnac_env.cli import main\n"
        f"status = main(['train', '--out', {str(tmp_path / 'o')!r}, '--iterations', '1', '--games', '2', "
        "'--sims', '2', '--train-steps', '2', '--eval-every', '0', '--channels', '8', '--blocks', '1', "
        "'--hidden', '8', '--no-progress', '--workers', '2'])\n"
        "assert status == 0 and 'ray' not in sys.modules, 'ray imported'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "self-play: 2 shard(s) per iteration on 2 local processes" in done.stdout
    assert Trainer(tmp_path / "o", None, progress=False).config.selfplay_shards == 2


def test_without_ray_the_error_names_the_extra(tmp_path):
    import subprocess
    import sys

    code = (
        "import sys; sys.modules['ray'] = None; from carnac_env.cli import main; "
        f"sys.exit(main(['train', '--ray', '--out', {str(tmp_path / 'o')!r}]))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 2
    assert "self-play on Ray needs Ray: pip install 'carnac-env[ray]'" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "o").exists()


def test_a_lost_local_worker_is_replaced(tmp_path):
    import multiprocessing
    import os
    import signal

    from carnac_env.train.workers import shard_players

    here = Trainer(tmp_path / "here", Config(**SHARDED), progress=False)
    here.run()
    with shard_players(workers=2) as players:
        there = Trainer(tmp_path / "there", Config(**SHARDED), progress=False, players=players)
        there.run_iteration()
        workers = multiprocessing.active_children()
        assert workers
        os.kill(workers[0].pid, signal.SIGKILL)  # a worker is lost between iterations
        there.run_iteration()
    assert_same_run(here, there)
    assert not multiprocessing.active_children()  # the workers stop with the block
