"""Self-play shards on Ray actors (a real local Ray with 2 CPUs): the same run as in this
process, a lost actor replaced, a clear error for a wrong address, no PyTorch in the actors."""

from __future__ import annotations

import logging
import os
import signal
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from _frameworks import require
from _paths import ROOT

torch = require("torch")

from _training import SHARDED, assert_same_run  # noqa: E402

from carnac_env.cli import main  # noqa: E402
from carnac_env.train.trainer import Config, Trainer  # noqa: E402
from carnac_env.train.workers import RayPlayers, shard_players  # noqa: E402

TINY = dict(SHARDED)  # two seeded shards: the runs compared are sharded runs


def run(argv: list[str]) -> int:
    """``carnac train ARGV``: the trainer's command line."""
    return main(["train", *argv])


def cli_args(out: Path, **extra: object) -> list[str]:
    args = ["--out", str(out), "--no-progress"]
    for key, value in {**TINY, **extra}.items():
        args += [f"--{key.replace('_', '-')}", str(value)]
    return args


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[object]:
    """A local Ray with 2 CPUs; its workers import this checkout."""
    ray = require("ray", "the ray extra")
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        logging_level=logging.ERROR,
        log_to_driver=False,
        runtime_env={"env_vars": {"PYTHONPATH": str(ROOT)}},
    )
    yield ray
    ray.shutdown()


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Trainer:
    """The run with its two shards played in this process."""
    with Trainer(tmp_path_factory.mktemp("here"), Config(**TINY), progress=False) as trainer:
        trainer.run()
    return trainer


def test_ray_gives_the_same_run_as_this_process(ray_cluster, reference, tmp_path, capsys):
    """`carnac train --ray` on the open session: one shard per CPU (2) by default, same run."""
    args = cli_args(tmp_path)
    shards = args.index("--selfplay-shards")
    del args[shards : shards + 2]
    assert run([*args, "--ray"]) == 0
    assert "self-play: 2 shard(s) per iteration on 2 Ray actors" in capsys.readouterr().out
    with Trainer(tmp_path, None, progress=False) as on_ray:
        assert on_ray.config.selfplay_shards == 2
        assert_same_run(reference, on_ray)


def test_actors_hold_no_pytorch_and_a_lost_one_is_replaced(ray_cluster, reference, tmp_path):
    ray = ray_cluster
    with shard_players(ray="local") as players:
        assert isinstance(players, RayPlayers) and players.workers == 2
        trainer = Trainer(tmp_path, Config(**TINY), progress=False, players=players)
        trainer.close()  # the folder is free for the next run; the object goes on playing here
        trainer.run_iteration()
        assert len(players.actors) == 2
        for actor in players.actors:
            assert not ray.get(actor.__ray_call__.remote(lambda actor: "torch" in __import__("sys").modules))
        pid = ray.get(players.actors[0].__ray_call__.remote(lambda actor: os.getpid()))
        os.kill(pid, signal.SIGKILL)  # the actor's process is lost between iterations
        trainer.run_iteration()
        assert ray.get(players.actors[0].__ray_call__.remote(lambda actor: os.getpid())) != pid
    assert_same_run(reference, trainer)


def test_a_wrong_address_is_a_clear_error(tmp_path, capsys):
    require("ray", "the ray extra")
    with socket.socket() as probe:  # a port where nothing listens
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    for address, words in [(f"127.0.0.1:{port}", "no Ray cluster answers"), ("not-an-address", "not HOST:PORT")]:
        assert run([*cli_args(tmp_path / "out"), "--ray", address]) == 2
        assert words in capsys.readouterr().err
        assert not (tmp_path / "out").exists()
