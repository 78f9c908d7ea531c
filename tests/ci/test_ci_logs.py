"""CI's bookkeeping (.ci/carnac_ci.py): which tests are still waiting for a venv that can run them.

The matrix runs the quick suite (main), then the slow tests (slow), then one venv per framework,
each running what the entries before it skipped. A test that needs PyTorch and is marked slow
first appears in the slow entry's log; it must still reach the train entry.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from _paths import ROOT


def _carnac_ci():
    spec = importlib.util.spec_from_file_location("carnac_ci", ROOT / ".ci" / "carnac_ci.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _logs(tmp_path: Path, *logs: dict) -> list[str]:
    paths = []
    for index, log in enumerate(logs):
        path = tmp_path / f"{index}.json"
        path.write_text(json.dumps(log))
        paths.append(str(path))
    return paths


def test_a_test_first_skipped_in_a_later_entry_is_pending(tmp_path: Path) -> None:
    ci = _carnac_ci()
    torch = "torch is not installed: the train extra"
    main = {"t.py::quick": ["passed", ""], "t.py::quick_torch": ["skipped", torch]}
    slow = {"t.py::slow": ["passed", ""], "t.py::slow_torch": ["skipped", torch]}
    assert ci.pending(_logs(tmp_path, main, slow)) == {"t.py::quick_torch": torch, "t.py::slow_torch": torch}
    train = {"t.py::quick_torch": ["passed", ""], "t.py::slow_torch": ["skipped", "tianshou is not installed"]}
    assert ci.pending(_logs(tmp_path, main, slow, train)) == {"t.py::slow_torch": "tianshou is not installed"}


def test_a_skipped_module_leaves_the_list_when_its_tests_run_and_keeps_those_that_skip(tmp_path: Path) -> None:
    ci = _carnac_ci()
    main = {"tests/test_x.py": ["skipped", "torch is not installed"]}
    train = {"tests/test_x.py::a": ["passed", ""], "tests/test_x.py::b": ["skipped", "ray is not installed"]}
    assert ci.pending(_logs(tmp_path, main, train)) == {"tests/test_x.py::b": "ray is not installed"}
    assert ci.pending(_logs(tmp_path, main)) == {"tests/test_x.py": "torch is not installed"}
    # A test that ran once does not come back because a later entry skipped it.
    again = {"tests/test_x.py::a": ["skipped", "torch is not installed"]}
    assert "tests/test_x.py::a" not in ci.pending(_logs(tmp_path, main, train, again))


def test_the_readme_test_command_is_what_ci_runs_and_its_time_is_measured() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert 'pip install -e ".[test]" && pytest -m "not slow" -n auto\n' in readme
    assert '"$py" -m pip install --quiet -e ".[test]"' in ci and 'args=(-m "not slow" -n auto)' in ci
    assert "args=(-m slow -n auto)" in ci
    # Each set-up command states a measured time with the command that measures it.
    for only in ("arena", "tests"):
        assert f": python benchmarks/readme_commands.py --only {only}\n" in readme


def test_a_pending_test_whose_module_skips_here_is_asked_for_by_its_file() -> None:
    # pytest stops with a usage error (exit 4) when asked for a test of a module that skips as a
    # whole: the rllib entry's skips in tests/envs/test_openspiel.py reached the jax entry, which has
    # no pyspiel, that way.
    ci = _carnac_ci()
    collected = {"tests/test_a.py::x", "tests/test_a.py::y[1]"}
    asked = ["tests/test_a.py::x", "tests/test_b.py::u", "tests/test_b.py::v", "tests/test_a.py::y[2]"]
    asked.append("tests/test_c.py")
    assert ci.runnable(asked, collected) == ["tests/test_a.py::x", "tests/test_b.py", "tests/test_c.py"]


def test_runnable_collects_with_this_python(tmp_path: Path) -> None:
    ci = _carnac_ci()
    (tmp_path / "test_here.py").write_text("def test_one():\n    pass\n")
    (tmp_path / "test_gone.py").write_text("import pytest\npytest.importorskip('no_such_module_xyz')\n")
    collected = ci._collected([str(tmp_path / "test_here.py"), str(tmp_path / "test_gone.py")])
    assert [n.rsplit("::", 1)[1] for n in collected] == ["test_one"]


def test_a_crash_leaves_the_test_it_was_in_and_every_threads_traceback(tmp_path: Path) -> None:
    """A pytest that dies from a signal writes nothing to its log; .ci/run prints LOG.running (the
    test) and LOG.crash (faulthandler's tracebacks, which pytest's capture would otherwise hide)."""
    (tmp_path / "test_crash.py").write_text(
        "import os, threading, time\n"
        "def test_fine():\n    pass\n"
        "def test_dies_in_compiled_code():\n"
        "    threading.Thread(target=time.sleep, args=(30,), daemon=True).start()\n"
        "    os.abort()\n"
    )
    log = tmp_path / "entry.json"
    env = {**os.environ, "CARNAC_CI_LOG": str(log), "PYTHONPATH": str(ROOT / ".ci")}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "carnac_ci", "-p", "no:cacheprovider", "test_crash.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == -signal.SIGABRT, (run.returncode, run.stdout, run.stderr)
    assert (tmp_path / "entry.json.running").read_text() == "test_crash.py::test_dies_in_compiled_code\n"
    crash = (tmp_path / "entry.json.crash").read_text()
    assert "Fatal Python error: Aborted" in crash and 'test_crash.py", line 6 in test_dies_in_compiled_code' in crash
    assert "threading.py" in crash  # the other thread's stack too
    ci = (ROOT / ".ci" / "run").read_text()
    assert 'cat "$log.crash"' in ci and 'cat "$log.running"' in ci


def _xdist_project(tmp_path: Path) -> None:
    """Two modules that skip through the same helper line (one skip location and reason, which
    pytest-xdist forwards once), and a module with tests."""
    (tmp_path / "helper.py").write_text(
        "import pytest\ndef need():\n    pytest.skip('torch is not installed', allow_module_level=True)\n"
    )
    for name in ("test_one.py", "test_two.py"):
        (tmp_path / name).write_text("import helper\nhelper.need()\ndef test_x():\n    pass\n")
    (tmp_path / "test_fine.py").write_text("def test_a():\n    pass\ndef test_b():\n    pass\n")


def test_under_xdist_every_skipped_module_reaches_the_log(tmp_path: Path) -> None:
    import pytest

    pytest.importorskip("xdist")
    _xdist_project(tmp_path)
    log = tmp_path / "entry.json"
    env = {**os.environ, "CARNAC_CI_LOG": str(log), "PYTHONPATH": f"{ROOT / '.ci'}{os.pathsep}{tmp_path}"}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-n", "2", "-p", "carnac_ci", "-p", "no:cacheprovider"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    outcomes = json.loads(log.read_text())
    assert outcomes["test_one.py"] == ["skipped", "torch is not installed"]
    assert outcomes["test_two.py"] == ["skipped", "torch is not installed"]
    assert outcomes["test_fine.py::test_a"] == ["passed", ""] and outcomes["test_fine.py::test_b"] == ["passed", ""]
    assert _carnac_ci().pending([str(log)]) == {n: "torch is not installed" for n in ("test_one.py", "test_two.py")}


def test_under_xdist_a_worker_crash_leaves_its_test_and_tracebacks(tmp_path: Path) -> None:
    import pytest

    pytest.importorskip("xdist")
    (tmp_path / "test_crash.py").write_text("import os\ndef test_dies_in_compiled_code():\n    os.abort()\n")
    log = tmp_path / "entry.json"
    env = {**os.environ, "CARNAC_CI_LOG": str(log), "PYTHONPATH": str(ROOT / ".ci")}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-n", "2", "-p", "carnac_ci", "-p", "no:cacheprovider", "test_crash.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 1, (run.returncode, run.stdout, run.stderr)  # xdist reports the crash as a failure
    crashes = [p for p in tmp_path.glob("entry.json.crash.gw*") if p.read_text()]
    assert len(crashes) == 1 and "Fatal Python error: Aborted" in crashes[0].read_text()
    running = crashes[0].with_name(crashes[0].name.replace(".crash.", ".running."))
    assert running.read_text() == "test_crash.py::test_dies_in_compiled_code\n"
    ci = (ROOT / ".ci" / "run").read_text()
    assert "worker_crash" in ci


def test_the_version_entries_split_the_quick_suite_between_them() -> None:
    """python-oldest and python-newest each run half of the quick suite: every test folder is in
    exactly one half (a new folder joins python-oldest), and the every-module import test in both."""
    carnac_ci = _carnac_ci()
    oldest, newest = carnac_ci.version_half("oldest", ROOT), carnac_ci.version_half("newest", ROOT)
    folders = {f"tests/{p.name}" for p in (ROOT / "tests").iterdir() if p.is_dir() and any(p.glob("test_*.py"))}
    halves = [p for p in oldest + newest if not p.endswith(".py")]
    assert sorted(halves) == sorted(folders), "each test folder in exactly one half"
    assert set(carnac_ci.NEWEST_FOLDERS) <= {f.removeprefix("tests/") for f in folders}, "a stale name"
    assert "tests/ci/test_imports.py" in oldest and "tests/ci" in newest
    assert (
        {"tests/rules", "tests/batch", "tests/core"} <= set(oldest)
        and {"tests/cli", "tests/serve"} <= set(newest)
        and "tests/arena" in oldest
    )
