"""The AlphaZero trainer: a short run learns, checkpoints load safely, resume exactly, and the CLI runs."""

from __future__ import annotations

import numpy as np
import pytest
from _frameworks import require

torch = require("torch")

from _training import SHARDED, TINY, assert_same_run  # noqa: E402

from carnac_env.agents import make  # noqa: E402
from carnac_env.cli import main  # noqa: E402
from carnac_env.core.boards import make_board  # noqa: E402
from carnac_env.core.game import GameState  # noqa: E402
from carnac_env.errors import CarnacError  # noqa: E402
from carnac_env.models import load  # noqa: E402
from carnac_env.train.selfplay import Shard, greedy_games, selfplay_games  # noqa: E402
from carnac_env.train.trainer import Config, Trainer  # noqa: E402


def run(argv: list[str]) -> int:
    """``carnac train ARGV``: the trainer's command line."""
    return main(["train", *argv])


def trainer(out, config=None, **kwargs):
    """A Trainer that releases its folder when the test's ``with`` block ends."""
    return Trainer(out, config, progress=False, **kwargs)


@pytest.mark.parametrize("rule", ["gumbel", "puct"])
def test_games_give_consistent_samples(rule):
    board = make_board("petit_menec")
    for samples, stats in (
        greedy_games(board, Shard("greedy", 3, 0, openings=2, playouts=4), np.random.default_rng(0)),
        selfplay_games(
            board, _tiny_net(board), Shard("selfplay", 3, 0, sims=3, rule=rule, playouts=4), np.random.default_rng(0)
        ),
    ):
        assert stats["games"] == 3 and len(samples) == stats["positions"]
        assert stats["red_wins"] + stats["white_wins"] <= 3
        np.testing.assert_allclose(samples.policies.sum(1), 1.0, atol=1e-5)
        assert not (samples.policies[~samples.masks] > 0).any()  # targets only on legal actions
        assert set(np.unique(samples.values)) <= {-1.0, 0.0, 1.0}
        assert (samples.observations[..., 7] == 1).all()  # the player to act's view
        assert np.all(np.abs(samples.search_values) <= 1) and np.all(np.abs(samples.playout_values) <= 1)
        assert set(np.unique(samples.ownership)) <= {0, 1, 2}
        # the ownership target is the final board seen by the player to act: what a position's
        # own colour shows now and never changes again (a lying megalith) is its own at the end
        lying_own = (samples.observations[..., 3] == 1) & (samples.observations[..., 0] == 1)
        assert (samples.ownership.reshape(lying_own.shape)[lying_own] == 0).all()


def test_openings_vary_the_games():
    board = make_board("petit_menec")
    net = _tiny_net(board)
    plain, _ = selfplay_games(board, net, Shard("selfplay", 4, 0, sims=2, openings=0), np.random.default_rng(1))
    varied, _ = selfplay_games(board, net, Shard("selfplay", 4, 0, sims=2, openings=6), np.random.default_rng(1))
    empty = plain.observations[..., :4].reshape(len(plain), -1).sum(1) == 0
    assert empty.sum() == 4  # without openings every game is recorded from the empty board
    assert (varied.observations[..., :4].reshape(len(varied), -1).sum(1) == 0).sum() < 4


def _tiny_net(board):
    from carnac_env.train.model import build, to_numpy

    torch.manual_seed(0)
    return to_numpy(build({"channels": 8, "blocks": 1, "hidden": 8}, board), board)


def test_settings_are_checked(tmp_path, capsys):
    for bad in (
        {"buffer": 0},
        {"buffer": -1},
        {"batch_size": 0},
        {"channels": 0},
        {"train_steps": 0},
        {"eval_games": 0},
        {"bootstrap_temperature": 0.0},
        {"bootstrap_temperature": float("nan")},
        {"lr": float("nan")},
        {"seed": -1},
        {"seed": 10**25},
        {"blocks": -1},
        {"hidden": 0},
        {"sims": -1},
        {"c": float("nan")},
        {"iterations": -1},
        {"threads": 0},
        {"games": True},
        {"rule": "minimax"},
        {"selfplay_backend": "gpu"},
        {"value_search": 0.7, "value_playouts": 0.5, "playouts": 4},
        {"value_playouts": 0.5},
    ):
        with pytest.raises(CarnacError, match=next(iter(bad))):
            Config(**dict(TINY, **bad)).check()
    base = ["--out", str(tmp_path / "o"), "--iterations", "1", "--no-progress"]
    for extra, words in [
        (["--buffer", "0"], "buffer=0"),
        (["--lr", "nan"], "lr=nan"),
        (["--seed", "-1"], "seed=-1"),
        (["--games", "0"], "games=0"),
        (["--minutes", "nan"], "minutes"),
        (["--minutes", "-1"], "minutes"),
    ]:
        assert run(base + extra) == 2, extra
        err = capsys.readouterr().err
        assert err.startswith("carnac: error: train:") and words in err and "Traceback" not in err, err
        assert not (tmp_path / "o").exists()


def test_short_run_improves_the_loss_and_writes_a_loadable_checkpoint(tmp_path):
    with trainer(tmp_path, Config(**dict(TINY, ownership=0.5, value_search=0.5), iterations=2)) as t:
        _short_run(t, tmp_path)


def _short_run(trainer, tmp_path):
    row = trainer.run_iteration()
    assert row["kind"] == "greedy"
    before = trainer.buffer_loss()
    for _ in range(60):
        trainer.train_step()
    after = trainer.buffer_loss()
    assert after < before - 0.1, (before, after)
    row = trainer.run_iteration()
    assert row["kind"] == "selfplay" and "vs_greedy" in row and "vs_mcts" in row and "ownership_loss" in row
    for name in ("checkpoint.pt", "model.npz", "best.npz", "curve.csv", "curve.json", "config.json", "log.txt"):
        assert (tmp_path / name).exists(), name
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".") or p.suffix == ".tmp") == [
        ".carnac.lock"
    ]  # no temporary file left; the run's lock while it holds the folder
    net = load(tmp_path / "model.npz")
    assert net.header["training"]["games"] == 8 and net.has_ownership
    agent = make(f"az:sims=4:model={tmp_path / 'model.npz'}")
    state = GameState("petit_menec")
    while not state.is_over:
        state.apply(agent.choose(state) if state.to_act == 0 else make("random").choose(state))


def test_resume_continues_exactly(tmp_path):
    settings = dict(TINY, ownership=0.5, playouts=2, value_playouts=0.25, value_search=0.25)
    with trainer(tmp_path / "a", Config(**settings, iterations=3)) as straight:
        straight.run()
    with trainer(tmp_path / "b", Config(**settings, iterations=2)) as first:
        first.run()
    with trainer(tmp_path / "b", iterations=3) as resumed:
        assert resumed.iteration == 2 and resumed.games_played == 8
        resumed.run()

    def timeless(curve):
        return [{k: v for k, v in row.items() if not k.endswith("_seconds")} for row in curve]

    assert timeless(resumed.curve) == timeless(straight.curve)
    for name, value in straight.net.state_dict().items():
        torch.testing.assert_close(resumed.net.state_dict()[name], value, rtol=0, atol=0)


def test_the_learning_rate_schedule_steps_at_its_iterations_and_is_checked():
    config = Config(**dict(TINY, lr=1e-3, lr_schedule="3:1e-4, 5:3e-5")).check()
    assert [config.lr_at(i) for i in range(1, 7)] == [1e-3, 1e-3, 1e-4, 1e-4, 3e-5, 3e-5]
    assert Config(**TINY).check().lr_at(10**6) == Config.lr  # no schedule: lr throughout
    for bad, words in [
        ("3", "step '3'; expected ITERATION:RATE"),
        ("x:0.1", "step 'x:0.1'"),
        ("0:0.1", "iteration"),
        ("3:0", "rate"),
        ("3:nan", "rate"),
        ("5:0.1,3:0.01", "step '3:0.01' after iteration 5"),
        ("3:0.1,3:0.01", "after iteration 3"),
    ]:
        with pytest.raises(CarnacError, match="lr_schedule") as err:
            Config(**dict(TINY, lr_schedule=bad)).check()
        assert words in str(err.value), (bad, err.value)


def test_a_scheduled_step_trains_at_its_rate_and_the_curve_says_so(tmp_path):
    settings = dict(TINY, eval_every=0, lr=1e-3, lr_schedule="2:0.0001")
    with trainer(tmp_path, Config(**settings, iterations=2)) as t:
        rows = t.run()
        assert [row["lr"] for row in rows] == [1e-3, 1e-4]
        assert [g["lr"] for g in t.optimizer.param_groups] == [1e-4]
    with trainer(tmp_path / "plain", Config(**dict(TINY, eval_every=0, lr=0.002), iterations=1)) as t:
        assert t.run()[0]["lr"] == 0.002  # no schedule: lr throughout


def test_model_file_is_the_checkpoints_after_a_resume(tmp_path):
    """model.npz is written after the checkpoint, so a kill between them leaves it behind, never
    ahead; a resume writes the checkpoint's network there (a missing or torn file too)."""
    settings = dict(TINY, eval_every=0)
    with trainer(tmp_path, Config(**settings, iterations=1)) as t:
        t.run()
    first = (tmp_path / "model.npz").read_bytes()
    with trainer(tmp_path, iterations=2) as t:
        t.run()
    second = (tmp_path / "model.npz").read_bytes()
    assert load(tmp_path / "model.npz").header["training"]["iteration"] == 2 and second != first
    for stale in (first, b"", second[:100]):  # the last iteration's file lost, missing, torn
        (tmp_path / "model.npz").write_bytes(stale)
        with trainer(tmp_path, iterations=2) as t:
            assert t.run() == []  # nothing left to play
        assert (tmp_path / "model.npz").read_bytes() == second
    (tmp_path / "model.npz").unlink()
    with trainer(tmp_path, iterations=2) as t:
        t.run()
    assert (tmp_path / "model.npz").read_bytes() == second


def test_a_step_added_on_resume_gives_the_run_that_had_it_from_the_start(tmp_path):
    settings = dict(TINY, eval_every=0)
    with trainer(tmp_path / "a", Config(**settings, lr_schedule="3:0.0002", iterations=4)) as straight:
        straight.run()
    with trainer(tmp_path / "b", Config(**settings, iterations=2)) as first:
        first.run()
    before = (tmp_path / "b" / "config.json").read_text()
    # a schedule that would change an iteration already done is refused, naming it, and changes nothing
    with pytest.raises(CarnacError, match=r"iteration 2 the rate 0.0002, but it trained at 0.001.*from iteration 3 on"):
        trainer(tmp_path / "b", lr_schedule="2:0.0002", iterations=4)
    assert (tmp_path / "b" / "config.json").read_text() == before
    with trainer(tmp_path / "b", lr_schedule="3:0.0002", iterations=4) as resumed:
        assert resumed.config.lr_schedule == "3:0.0002"
        resumed.run()
    assert_same_run(straight, resumed)
    # the command line takes it on resume too, where other settings are refused
    resume = ["--out", str(tmp_path / "b"), "--iterations", "5", "--no-progress"]
    assert run([*resume, "--lr-schedule", "3:0.0002,5:1e-5"]) == 0
    with trainer(tmp_path / "b") as again:
        assert again.iteration == 5 and again.curve[-1]["lr"] == 1e-5


def test_resume_on_another_board_is_refused(tmp_path):
    with trainer(tmp_path, Config(**TINY, iterations=1)) as t:
        t.run()
    with pytest.raises(CarnacError, match=r"petit_menec.*not 'small'"):
        trainer(tmp_path, Config(**dict(TINY, board="small")))


def test_a_second_run_on_the_folder_is_refused_at_once(tmp_path):
    with trainer(tmp_path, Config(**TINY, iterations=1)) as t:
        with pytest.raises(CarnacError, match="in use by another run"):
            trainer(tmp_path, Config(**TINY, iterations=1))
        t.run()
    with trainer(tmp_path, iterations=2) as again:  # released: the run resumes
        assert again.iteration == 1


def test_the_log_comes_back_from_the_checkpoint(tmp_path):
    with trainer(tmp_path, Config(**dict(TINY, iterations=2, eval_every=0))) as t:
        t.run()
    log = tmp_path / "log.txt"
    lines = log.read_text().splitlines()
    log.write_text(lines[0] + "\n")  # as if killed between the checkpoint and the log
    with trainer(tmp_path) as t:
        assert log.read_text().splitlines() == lines


def _checkpoint(tmp_path):
    with trainer(tmp_path, Config(**dict(TINY, iterations=1, eval_every=0))) as t:
        t.run()
    return tmp_path / "checkpoint.pt"


def test_a_checkpoint_that_would_run_code_is_refused_without_running_it(tmp_path):
    import os
    import pickle

    path = _checkpoint(tmp_path)
    marker = tmp_path / "ran"

    class Evil:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    path.write_bytes(pickle.dumps({"format": "carnac-train-checkpoint", "net": Evil()}))
    with pytest.raises(CarnacError, match=r"checkpoint\.pt is not a checkpoint this carnac_env can read"):
        trainer(tmp_path)
    assert not marker.exists()


def test_malformed_checkpoints_name_the_file_and_the_field(tmp_path):
    path = _checkpoint(tmp_path)
    good = torch.load(path, weights_only=True)

    def broken(change):
        data = dict(good)
        change(data)
        torch.save(data, path)

    def chunk(d):
        return dict(d["replay"]["chunks"][0])

    def grad(t):
        return t.clone().requires_grad_(True)

    def optimizer(d, key, value):
        state = dict(d["optimizer"])
        state["param_groups"] = [dict(g, **{key: value}) for g in state["param_groups"]]
        return state

    def moment(d, change, step=None):
        state = dict(d["optimizer"])
        entries = dict(state["state"])
        first = dict(entries[0])
        first["exp_avg"] = change(first["exp_avg"])
        if step is not None:
            first["step"] = torch.tensor(step)
        entries[0] = first
        state["state"] = entries
        return state

    cases = [
        (lambda d: d.pop("net"), "field 'net'"),
        (lambda d: d.update(config=dict(d["config"], colour="red")), "unknown training settings"),
        (lambda d: d.update(config=dict(d["config"], channels=16)), "field 'net' does not fit"),
        (lambda d: d.update(config=dict(d["config"], buffer=10)), "replay"),
        (lambda d: d.update(rng={"bit_generator": "MT19937"}), "field 'rng'"),
        (lambda d: d.update(torch_rng=torch.zeros(3)), "field 'torch_rng'"),
        (lambda d: d.update(iteration=-1), "field 'iteration'"),
        (lambda d: d.update(iteration=True), "field 'iteration'"),
        (lambda d: d.update(wall=float("nan")), "field 'wall'"),
        (lambda d: d.update(curve="x"), "field 'curve'"),
        (lambda d: d.update(version=1), "version 1"),
        (lambda d: d.update(curve=[{}] * len(d["curve"])), "field 'curve'"),
        (lambda d: d.update(replay={"next": 3}), "field 'replay'"),
        (lambda d: d.update(replay={"chunks": [dict(chunk(d), values=torch.zeros(3))]}), "replay.chunks[0].values"),
        (lambda d: d.update(replay={"chunks": [dict(chunk(d), masks=torch.zeros(3, 2))]}), "replay.chunks[0].masks"),
        (lambda d: d.update(replay={"chunks": [dict(chunk(d), board={"name": "nowhere"})]}), "replay.chunks[0].board"),
        (lambda d: d.update(replay={"chunks": [dict(chunk(d), values=grad(chunk(d)["values"]))]}), "plain tensor"),
        (lambda d: d.update(replay={"chunks": [dict(chunk(d), values=chunk(d)["values"].bfloat16())]}), "bfloat16"),
        (lambda d: d.update(replay={"chunks": [dict(chunk(d), values=chunk(d)["values"].to_sparse())]}), "plain"),
        (lambda d: d.update(replay={"chunks": [dict(chunk(d), values=torch.tensor(0.5))]}), "values"),
        (lambda d: d.update(replay={"chunks": [dict(chunk(d), values=chunk(d)["values"] * float("nan"))]}), "NaN"),
        (lambda d: d.update(optimizer=optimizer(d, "lr", "fast")), "optimizer.param_groups lr"),
        (lambda d: d.update(optimizer=moment(d, lambda m: m[:1])), "optimizer.state[0].exp_avg"),
        (lambda d: d.update(optimizer=moment(d, lambda m: m, step=-1.0)), "optimizer.state[0].step"),
        (lambda d: d.update(rng=dict(d["rng"], state={"state": 2**300, "inc": 1})), "field 'rng'"),
        (lambda d: d.update(steps=2**70), "field 'steps'"),
        (lambda d: d.update(net={k: v * float("nan") for k, v in d["net"].items()}), "NaN or infinite weights"),
    ]
    for change, words in cases:
        broken(change)
        with pytest.raises(CarnacError, match=r"checkpoint\.pt") as info:
            trainer(tmp_path)
        assert words in str(info.value), (words, str(info.value))
    for raw in (b"", b"\x00" * 64, b"PK\x03\x04 truncated"):
        path.write_bytes(raw)
        with pytest.raises(CarnacError, match=r"checkpoint\.pt is not a checkpoint"):
            trainer(tmp_path)
    torch.save([1, 2, 3], path)
    with pytest.raises(CarnacError, match="not a carnac training checkpoint"):
        trainer(tmp_path)


def test_a_fifo_at_checkpoint_pt_is_refused_at_once(tmp_path):
    import os
    import threading

    os.mkfifo(tmp_path / "checkpoint.pt")
    errors: list[BaseException] = []

    def resume():
        try:
            trainer(tmp_path, Config(**TINY)).close()
        except BaseException as err:
            errors.append(err)

    worker = threading.Thread(target=resume, daemon=True)
    worker.start()
    worker.join(60)
    if worker.is_alive():  # it waits for a writer: let it go, then fail
        with open(tmp_path / "checkpoint.pt", "wb"):
            pass
        pytest.fail("reading a FIFO at checkpoint.pt waited for a writer")
    assert len(errors) == 1 and isinstance(errors[0], CarnacError), errors
    assert "cannot read checkpoint" in str(errors[0]) and "FIFO" in str(errors[0])
    assert not (tmp_path / ".carnac.lock").exists()  # the folder's lock was let go


def test_a_diverged_iteration_is_refused_before_the_network_is_played_or_saved(tmp_path):
    with trainer(tmp_path, Config(**dict(TINY, iterations=2, eval_every=0))) as t:
        t.run_iteration()
        train_step = t.train_step

        def poisoned():
            loss = train_step()
            with torch.no_grad():
                next(iter(t.net.parameters())).fill_(float("nan"))
            return loss

        t.train_step = poisoned
        saved = (tmp_path / "checkpoint.pt").read_bytes()
        with pytest.raises(CarnacError, match=r"training diverged in iteration 2: the network's weight \S+ is NaN"):
            t.run_iteration()
    assert (tmp_path / "checkpoint.pt").read_bytes() == saved  # iteration 1 is what the folder keeps
    assert len((tmp_path / "log.txt").read_text().splitlines()) == 1


def test_mutated_checkpoints_load_or_are_refused_cleanly(tmp_path_factory):
    """Hypothesis flips, cuts and splices bytes of a real checkpoint: every result either
    resumes (the mutation hit padding) or is a CarnacError naming the file, never another
    exception, and nothing in the file runs."""
    hypothesis = pytest.importorskip("hypothesis")
    from hypothesis import strategies as st

    folder = tmp_path_factory.mktemp("fuzz")
    path = _checkpoint(folder)
    good = path.read_bytes()

    @hypothesis.settings(max_examples=40, deadline=None, derandomize=True)
    @hypothesis.given(
        st.lists(st.tuples(st.integers(0, len(good) - 1), st.integers(0, 255)), min_size=1, max_size=8),
        st.integers(0, len(good)),
    )
    def check(flips, cut):
        data = bytearray(good[: max(cut, 1)] if cut < len(good) // 2 else good)
        for where, value in flips:
            data[where % len(data)] = value
        path.write_bytes(bytes(data))
        try:
            trainer(folder).close()  # resumed: the mutation changed nothing that is read
        except CarnacError as err:
            assert "checkpoint.pt" in str(err)

    check()


def test_command_line(tmp_path, capsys):
    args = ["--out", str(tmp_path), "--iterations", "1", "--no-progress"]
    for key, value in TINY.items():
        args += [f"--{key.replace('_', '-')}", str(value)]
    assert run(args) == 0
    assert "iteration 1" in capsys.readouterr().out
    assert run(["--out", str(tmp_path), "--iterations", "2", "--no-progress"]) == 0
    assert "resuming" in capsys.readouterr().out
    assert len((tmp_path / "log.txt").read_text().splitlines()) == 2
    # a resumed run keeps its settings: one given that differs is refused, not silently ignored
    # (the same value, the iteration limit and the evaluation settings may be given)
    before = (tmp_path / "log.txt").read_text()
    refused = ["--out", str(tmp_path), "--iterations", "3", "--no-progress", "--lr", "0.5", "--selfplay-backend",
               "onnx-int8", "--games", str(TINY["games"]), "--eval-every", "0"]  # fmt: skip
    assert run(refused) == 2
    err = capsys.readouterr().err
    assert "cannot change on resume" in err and "--lr 0.5" in err and "--selfplay-backend onnx-int8" in err
    assert "--games" not in err and "--eval-every" not in err
    assert (tmp_path / "log.txt").read_text() == before


def test_sigterm_stops_between_iterations_and_the_run_resumes(tmp_path):
    import signal
    import subprocess
    import sys
    import time

    args = ["--out", str(tmp_path), "--iterations", "1000", "--no-progress", "--eval-every", "0"]
    for key, value in TINY.items():
        if key not in ("eval_every",):
            args += [f"--{key.replace('_', '-')}", str(value)]
    code = f"import sys; from carnac_env.cli import main; sys.exit(main(['train', *{args!r}]))"
    proc = subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.PIPE, text=True)
    log = tmp_path / "log.txt"
    deadline = time.monotonic() + 240
    while not (log.exists() and log.read_text().count("\n") >= 2) and time.monotonic() < deadline:
        time.sleep(0.2)  # wait for two finished iterations (the file is written whole, atomically)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=240)
    assert proc.returncode == 143, err
    assert "Traceback" not in err and "run the same command again to resume" in err
    with trainer(tmp_path, iterations=3) as again:
        done = again.iteration
        assert done >= 2 and len(again.curve) == done
        again.run()
        assert again.iteration == max(3, done)


def test_init_from_a_model_of_another_board(tmp_path):
    with trainer(tmp_path / "petit", Config(**TINY, iterations=1)) as t:
        t.run()
    source = tmp_path / "petit" / "model.npz"
    with trainer(tmp_path / "small", Config(**dict(TINY, board="small", ownership=0.5), init=str(source))) as small:
        for name, value in load(source).params.items():
            np.testing.assert_array_equal(small.net.state_dict()[name].numpy(), value)
    with pytest.raises(CarnacError, match="architecture"):
        trainer(tmp_path / "wide", Config(**dict(TINY, channels=16), init=str(source)))


def test_output_piped_into_a_reader_that_quit_stops_quietly(tmp_path):
    """``python -m carnac_env.train ... | head -1``: the reader is gone before the trainer prints;
    the run still ends with its checkpoint written, exit 0, and no BrokenPipeError traceback."""
    import subprocess
    import sys

    args = [sys.executable, "-m", "carnac_env.train", "--out", str(tmp_path), "--iterations", "1", "--no-progress"]
    for key, value in TINY.items():
        args += [f"--{key.replace('_', '-')}", str(value)]
    child = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    child.stdout.close()  # the reader quits before the first line
    err = child.stderr.read().decode()
    assert child.wait(timeout=300) == 0, err
    assert "Traceback" not in err and "BrokenPipeError" not in err, err
    assert (tmp_path / "checkpoint.pt").is_file()


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
    with trainer(tmp_path, Config(**dict(TINY, iterations=1))) as t:
        t.run_iteration()
        samples, _ = greedy_games(
            make_board("petit_menec"), t._shard("greedy", TINY["games"], 0), np.random.default_rng(0)
        )
        (held,) = t.replay.chunks
        np.testing.assert_array_equal(held.samples.observations, samples.observations)
        np.testing.assert_array_equal(held.samples.policies, samples.policies)
        assert t.replay.size == len(samples)


def test_shards_split_the_games_and_play_the_same_on_local_workers(tmp_path):
    from carnac_env.train.workers import LocalPlayers, shard_players

    with trainer(tmp_path / "here", Config(**SHARDED)) as here:
        here.run()
    assert here.curve[0]["kind"] == "greedy" and here.curve[1]["kind"] == "selfplay"
    assert here.games_played == 2 * TINY["games"]
    with shard_players(workers=2) as players, trainer(tmp_path / "there", Config(**SHARDED), players=players) as there:
        assert isinstance(players, LocalPlayers) and players.workers == 2
        there.run()
    assert_same_run(here, there)
    assert there.cpu > 0
    # the same settings with one shard give another run (the split is part of the settings)
    with trainer(tmp_path / "one", Config(**dict(SHARDED, selfplay_shards=1))) as one:
        one.run()
    assert one.replay.size != here.replay.size or not np.array_equal(
        one.replay.chunks[0].samples.observations, here.replay.chunks[0].samples.observations
    )


def test_a_resumed_run_may_change_its_workers(tmp_path):
    from carnac_env.train.workers import shard_players

    with trainer(tmp_path / "a", Config(**dict(SHARDED, iterations=3))) as straight:
        straight.run()
    with trainer(tmp_path / "b", Config(**SHARDED)) as first:
        first.run()
    with shard_players(workers=2) as players, trainer(tmp_path / "b", iterations=3, players=players) as resumed:
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
            trainer(tmp_path / "t", Config(**dict(TINY, selfplay_shards=shards)))
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
        "from carnac_env.models import load\n"
        "from carnac_env.core.boards import make_board\n"
        "from carnac_env.train.selfplay import Shard, timed_shard\n"
        "import carnac_env.train.workers\n"
        "net = load('carnac_env/models/specialists/petit_menec.npz')\n"
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
    with trainer(tmp_path / "o") as t:
        assert t.config.selfplay_shards == 2


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

    with trainer(tmp_path / "here", Config(**SHARDED)) as here:
        here.run()
    with shard_players(workers=2) as players, trainer(tmp_path / "there", Config(**SHARDED), players=players) as there:
        there.run_iteration()
        workers = multiprocessing.active_children()
        assert workers
        os.kill(workers[0].pid, signal.SIGKILL)  # a worker is lost between iterations
        there.run_iteration()
    assert_same_run(here, there)
    assert not multiprocessing.active_children()  # the workers stop with the block


def test_export_writes_the_saved_runs_network_and_trains_nothing(tmp_path, capsys):
    with trainer(tmp_path / "run", Config(**dict(TINY, iterations=2, eval_every=0))) as t:
        t.run()
    out = tmp_path / "run"
    (out / "checkpoint.pt").unlink()  # from resume.pt alone, as a committed run's folder holds
    file = tmp_path / "net.npz"
    assert run(["--out", str(out), "--export", str(file)]) == 0
    assert "at iteration 2" in capsys.readouterr().out
    exported, latest = load(file), load(out / "model.npz")
    assert exported.header["training"]["iteration"] == 2
    for name, value in latest.params.items():
        assert np.array_equal(exported.params[name], value)
    assert not (out / "checkpoint.pt").exists()  # nothing was trained
    assert run(["--out", str(tmp_path / "empty"), "--export", str(tmp_path / "x.npz")]) == 2
    assert "holds no checkpoint.pt or resume.pt" in capsys.readouterr().err
    assert not (tmp_path / "x.npz").exists()


def test_a_run_on_a_custom_board_spec_trains_and_evaluates_there(tmp_path):
    """carnac train --board 5x5:megaliths=8 (the one board syntax): the run plays, trains and
    evaluates on that board, and its model's header states the board's rules."""
    out = tmp_path / "run"
    argv = ["--board", "5x5:megaliths=8", "--out", str(out), "--iterations", "1", "--games", "4", "--sims", "4"]
    assert run([*argv, "--train-steps", "5", "--eval-every", "1", "--eval-games", "2", "--eval-sims", "0"]) == 0
    rules = load(out / "model.npz").header["board"]
    assert (rules["rows"], rules["cols"], rules["megaliths"]) == (5, 5, 8)
    assert "vs_greedy" in (out / "curve.csv").read_text().splitlines()[0]
