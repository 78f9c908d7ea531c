"""The arena on Ray (a real local Ray with 2 CPUs): the same files as a --workers run, resume,
a lost worker retried, a clear error for a wrong address, and Ray never imported unasked."""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from _frameworks import require
from _paths import ROOT

from carnac_env.arena import run_arena
from carnac_env.errors import CarnacError

AGENTS = ["random", "greedy", "mcts:sims=10"]
SETTINGS = {"board": "petit_menec", "games": 4, "seed": 7, "progress": False, "echo": lambda _: None}


def files(folder: Path) -> dict[str, bytes]:
    return {name: (folder / name).read_bytes() for name in ("arena.json", "games.jsonl", "results.json")}


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[object]:
    """A local Ray with 2 CPUs; its workers import this checkout and tests/ (for the agent below)."""
    ray = require("ray", "the ray extra")
    path = os.pathsep.join([str(ROOT), str(ROOT / "tests")])
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        logging_level=logging.ERROR,
        log_to_driver=False,
        runtime_env={"env_vars": {"PYTHONPATH": path}},
    )
    yield ray
    ray.shutdown()


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("workers")
    run_arena(AGENTS, out, workers=2, **SETTINGS)
    return out


def test_ray_gives_the_same_files_as_workers(ray_cluster: object, reference: Path, tmp_path: Path) -> None:
    run_arena(AGENTS, tmp_path, ray="local", **SETTINGS)
    assert files(tmp_path) == files(reference)


def test_ray_resumes_an_interrupted_arena(ray_cluster: object, reference: Path, tmp_path: Path) -> None:
    lines = (reference / "games.jsonl").read_bytes().splitlines(keepends=True)
    (tmp_path / "arena.json").write_bytes((reference / "arena.json").read_bytes())
    (tmp_path / "games.jsonl").write_bytes(lines[5] + lines[0] + lines[9] + lines[3][:50])  # a torn last line
    run_arena(AGENTS, tmp_path, ray="local", **SETTINGS)
    assert files(tmp_path) == files(reference)


def test_a_lost_worker_is_retried(ray_cluster: object, tmp_path: Path) -> None:
    marker = tmp_path / "died"
    agents = ["random", f"_ray_agents.DiesOnce:marker={marker}"]
    on_ray = tmp_path / "ray"
    run_arena(agents, on_ray, ray="local", **SETTINGS)
    assert marker.exists()  # a worker process ended mid-game, and Ray played that game again
    locally = tmp_path / "local"
    run_arena(agents, locally, workers=1, **SETTINGS)
    assert files(on_ray) == files(locally)


def test_a_wrong_address_is_a_clear_error(tmp_path: Path) -> None:
    require("ray", "the ray extra")
    with socket.socket() as probe:  # a port where nothing listens
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    for address, words in [(f"127.0.0.1:{port}", "no Ray cluster answers"), ("not-an-address", "not HOST:PORT")]:
        with pytest.raises(CarnacError, match=words):
            run_arena(AGENTS, tmp_path / "out", ray=address, **SETTINGS)
        assert not (tmp_path / "out").exists()


def test_ray_is_never_imported_unasked(tmp_path: Path) -> None:
    code = (
        "import sys, carnac_env.arena, carnac_env.cli; "
        "from carnac_env.arena import run_arena; "
        f"run_arena(['random', 'greedy'], {str(tmp_path)!r}, board='petit_menec', games=1, progress=False, "
        "echo=lambda _: None); "
        "assert 'ray' not in sys.modules, 'ray was imported'"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr


def test_without_ray_the_error_names_the_extra(tmp_path: Path) -> None:
    code = (
        "import sys; sys.modules['ray'] = None; from carnac_env.cli import main; "
        f"sys.exit(main(['arena', '--board', 'petit_menec', '--ray', '--out', {str(tmp_path / 'o')!r}]))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 2
    assert "carnac-env[ray]" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "o").exists()
