"""The pytest side of .ci/run: a per-test outcome log and no silent framework skips.

Loaded with ``python -m pytest -p carnac_ci`` (``.ci`` on ``PYTHONPATH``). It writes every
test's outcome (``passed``, ``failed`` or ``skipped`` with the reason) as JSON to the file
named by ``CARNAC_CI_LOG``, and it turns into a failure any skip whose reason says that a
module named in ``CARNAC_REQUIRE`` is missing, whichever way the test skipped
(``tests/_frameworks.require``, ``pytest.importorskip`` or a hand-written check).

``python .ci/carnac_ci.py pending LOG...`` prints the tests still waiting for a venv that
has what they need, one node id a line: those whose last outcome in the logs given (in the
matrix order) is a skip. A test that first appears in a later log (the slow entry runs the
tests the main entry deselects) joins the list when it skips there.
``python .ci/carnac_ci.py runnable ARGS`` rewrites that list (a file) for the venv it runs in:
a test whose module skips as a whole here (its import needs a module this venv lacks) is asked
for by its file instead, as pytest finds no test by that name in a skipped module (it stops with
a usage error, exit 4); the module's skip is then logged under the file, and the test stays
pending for a later entry. Run it with the entry's own Python.
``python .ci/carnac_ci.py unrun MODULES LOG...`` prints those of them whose last skip reason
says that one of MODULES (comma-separated) is missing: tests that no matrix entry ran.
``python .ci/carnac_ci.py half oldest|newest`` prints the test paths that entry runs of the
quick suite (:func:`version_half`).
"""

from __future__ import annotations

import faulthandler
import json
import os
import re
import sys
from pathlib import Path
from typing import IO, Any

#: the wording of a skip for a missing module (require, importorskip, the examples' checks)
MISSING = re.compile(r"not installed|could not import|no module named|\bneeds\b", re.IGNORECASE)

_outcomes: dict[str, list[str]] = {}

#: The test folders of the quick suite that python-newest runs: the floors that face the user's
#: terminal, browser, files and docs (command lines, the server, the window, renders, hostile
#: files, training's command, CI's own), where the standard library's changes land first.
#: python-oldest runs every other folder (the rules, the engines, search, envs, models, agents,
#: arena, evaluation, analysis: where numpy's and numba's wheels meet the oldest interpreter), so
#: a new folder is never left out. The two halves take about the same time. Each quick test runs
#: twice in the matrix: in main on the README's Python, and on the oldest or the newest one.
NEWEST_FOLDERS = ("ci", "cli", "docs", "play", "render", "security", "serve", "train")
#: Tests both version entries run whatever their half: every module of the package imports there.
BOTH_HALVES = ("tests/ci/test_imports.py",)


def required() -> list[str]:
    return [m.strip() for m in os.environ.get("CARNAC_REQUIRE", "").split(",") if m.strip()]


def names_missing(reason: str, modules: list[str]) -> list[str]:
    """The modules of ``modules`` that ``reason`` says are missing."""
    if not MISSING.search(reason):
        return []
    return [m for m in modules if re.search(rf"(?<![\w.]){re.escape(m)}(?![\w])", reason)]


def _reason(report: Any) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


def _record(nodeid: str, outcome: str, reason: str = "") -> None:
    previous = _outcomes.get(nodeid)
    if previous and previous[0] in ("failed", "skipped") and outcome == "passed":
        return  # a failed or skipped setup stays the test's outcome
    _outcomes[nodeid] = [outcome, reason]


_files: dict[str, IO[str]] = {}


def _worker(config: Any) -> str | None:
    """The pytest-xdist worker this process is (``gw0``, ...), or None for the main process."""
    workerinput = getattr(config, "workerinput", None)
    return None if workerinput is None else str(workerinput.get("workerid", "gw"))


def pytest_sessionstart(session: Any) -> None:
    """With ``CARNAC_CI_LOG`` set, a crash of the process (SIGABRT, SIGSEGV) leaves its threads'
    tracebacks in LOG.crash and the test it was in in LOG.running, for .ci/run to print: pytest's
    own faulthandler (enabled at configure, replaced here) writes to a descriptor that its output
    capture may have redirected. Under pytest-xdist each worker writes its own pair
    (LOG.crash.gw0, LOG.running.gw0, ...), since a test crashes in a worker. No pytest import:
    .ci/run also runs this file with a bare python3."""
    log = os.environ.get("CARNAC_CI_LOG")
    if log:
        worker = _worker(session.config)
        suffix = "" if worker is None else "." + worker
        _files["crash"] = open(log + ".crash" + suffix, "w", encoding="utf-8")  # noqa: SIM115 (lives as long as the process)
        _files["running"] = open(log + ".running" + suffix, "w", encoding="utf-8")  # noqa: SIM115
        if worker is not None:
            _files["collect"] = open(log + ".collect" + suffix, "w", encoding="utf-8")  # noqa: SIM115
        faulthandler.enable(file=_files["crash"], all_threads=True)


def pytest_runtest_logstart(nodeid: str, location: Any) -> None:
    running = _files.get("running")
    if running is not None:
        running.seek(0)
        running.write(nodeid + "\n")
        running.truncate()
        running.flush()


def pytest_runtest_logreport(report: Any) -> None:
    if report.skipped:
        _record(report.nodeid, "skipped", _reason(report))
    elif report.failed:
        _record(report.nodeid, "failed")
    elif report.when == "call":
        _record(report.nodeid, "passed")


def pytest_collectreport(report: Any) -> None:
    if report.skipped:
        _record(report.nodeid, "skipped", _reason(report))
        worker_log = _files.get("collect")
        if worker_log is not None:
            # pytest-xdist forwards a worker's skipped-module report to the main process only once
            # per distinct skip location and reason, so two modules that skip through the same
            # require("torch") line would leave one of them out of the log (and out of the train
            # entry's list): each worker writes its own, at once, and the main process merges them.
            worker_log.write(json.dumps([report.nodeid, _reason(report)]) + "\n")
            worker_log.flush()


def pytest_sessionfinish(session: Any, exitstatus: int) -> None:
    if _worker(session.config) is not None:
        return  # under pytest-xdist the main process receives every report, and writes the log
    log = os.environ.get("CARNAC_CI_LOG")
    if log:
        _merge_worker_collections(log)
        with open(log, "w", encoding="utf-8") as out:
            json.dump(_outcomes, out, indent=0, sort_keys=True)
    modules = required()
    bad = {
        nodeid: reason
        for nodeid, (outcome, reason) in _outcomes.items()
        if outcome == "skipped" and names_missing(reason, modules)
    }
    if bad:
        print(f"\nCI: CARNAC_REQUIRE={','.join(modules)}, but these tests skipped for a missing module:")
        for nodeid, reason in sorted(bad.items()):
            print(f"  {nodeid}: {reason}")
        session.exitstatus = 1


def _merge_worker_collections(log: str) -> None:
    """The skipped modules that pytest-xdist workers wrote to LOG.collect.gwN, into the log
    (those the main process already has keep their outcome)."""
    import glob

    for path in sorted(glob.glob(glob.escape(log) + ".collect.*")):
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    nodeid, reason = json.loads(line)
                    _outcomes.setdefault(nodeid, ["skipped", reason])


def _load(paths: list[str]) -> list[dict[str, list[str]]]:
    logs = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            logs.append(json.load(f))
    return logs


def pending(paths: list[str]) -> dict[str, str]:
    """Tests whose last outcome in the logs is a skip, with their last reason: skipped where
    they first ran (any log) and not passed (or failed) in a later one."""
    waiting: dict[str, str] = {}
    seen: set[str] = set()
    for log in _load(paths):
        for nodeid, (outcome, reason) in log.items():
            if outcome == "skipped" and nodeid not in seen:  # a test seen for the first time, skipped
                waiting[nodeid] = reason
            seen.add(nodeid)
        for nodeid in list(waiting):
            outcome = log.get(nodeid)
            if outcome is None:  # a skipped module runs as its tests
                children = [o for n, o in log.items() if n.startswith(nodeid + "::")]
                if not children:
                    continue
                skipped = [o for o in children if o[0] == "skipped"]
                outcome = skipped[0] if len(skipped) == len(children) else ["ran", ""]
            if outcome[0] == "skipped":
                waiting[nodeid] = outcome[1]
            else:
                del waiting[nodeid]
    return waiting


def _collected(files: list[str]) -> set[str]:
    """The node ids pytest collects from ``files`` in this interpreter (a module that skips as a
    whole contributes none)."""
    import contextlib
    import io

    import pytest

    class Collect:
        def __init__(self) -> None:
            self.ids: set[str] = set()

        def pytest_collection_modifyitems(self, items: list[Any]) -> None:
            self.ids.update(item.nodeid for item in items)

    collect = Collect()
    with contextlib.redirect_stdout(io.StringIO()):
        pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", *files], plugins=[collect])
    return collect.ids


def runnable(nodeids: list[str], collected: set[str]) -> list[str]:
    """``nodeids`` for this venv: a test that ``collected`` lacks is replaced by its file (once)
    when no test of that file was collected (the module skips here), and left out (it stays
    pending) when its file has other tests here (a parameter this venv does not generate)."""
    files_with_tests = {nodeid.split("::", 1)[0] for nodeid in collected}
    out: list[str] = []
    for nodeid in nodeids:
        file = nodeid.split("::", 1)[0]
        if "::" in nodeid and nodeid not in collected:
            if file in files_with_tests:
                print(f"CI: {nodeid} is not collected in this venv; it stays pending", file=sys.stderr)
                continue
            nodeid = file
        if nodeid not in out:
            out.append(nodeid)
    return out


def version_half(which: str, root: Path) -> list[str]:
    """The test paths (relative to ``root``, the repository) of the quick suite that the
    python-``which`` entry runs (``oldest`` or ``newest``; see :data:`NEWEST_FOLDERS`)."""
    if which not in ("oldest", "newest"):
        raise ValueError(f"expected oldest or newest, got {which!r}")
    folders = sorted(p.name for p in (root / "tests").iterdir() if p.is_dir() and any(p.glob("test_*.py")))
    mine = [f"tests/{name}" for name in folders if (name in NEWEST_FOLDERS) == (which == "newest")]
    return mine + [path for path in BOTH_HALVES if not any(path.startswith(folder + "/") for folder in mine)]


def main(argv: list[str]) -> int:
    if argv[:1] == ["half"] and len(argv) == 2:
        print("\n".join(version_half(argv[1], Path(__file__).resolve().parent.parent)))
        return 0
    if argv[:1] == ["pending"]:
        for nodeid in pending(argv[1:]):
            print(nodeid)
        return 0
    if argv[:1] == ["runnable"] and len(argv) == 2:
        with open(argv[1], encoding="utf-8") as f:
            nodeids = [line.strip() for line in f if line.strip()]
        kept = runnable(nodeids, _collected(sorted({n.split("::", 1)[0] for n in nodeids})))
        with open(argv[1], "w", encoding="utf-8") as f:
            f.writelines(nodeid + "\n" for nodeid in kept)
        return 0
    if argv[:1] == ["unrun"]:
        modules = [m for m in argv[1].split(",") if m]
        unrun = {n: r for n, r in pending(argv[2:]).items() if names_missing(r, modules)}
        for nodeid, reason in sorted(unrun.items()):
            print(f"{nodeid}: {reason}")
        return 1 if unrun else 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
