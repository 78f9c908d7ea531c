"""The trainer's files under hostile conditions (issue 49): a kill -9 between the writes of an
iteration, a full disk, and checkpoints whose numbers are NaN or infinite or whose texts are huge.

The checkpoint is the record: after any kill, a resume (even one with no iteration left to run)
leaves ``resume.pt``, ``model.npz``, ``log.txt``, ``curve.csv`` and ``curve.json`` in step with
it. A full disk is the package's error naming the file, never torch's ``unexpected pos``.
"""

from __future__ import annotations

import csv
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from _frameworks import require

torch = require("torch")

from _mounts import small_tmpfs  # noqa: E402
from _training import TINY  # noqa: E402

from carnac_env.errors import CarnacError  # noqa: E402
from carnac_env.models import load  # noqa: E402
from carnac_env.train.curve import write_curve  # noqa: E402
from carnac_env.train.trainer import Config, Trainer  # noqa: E402

#: Two iterations of seconds, no evaluation (so no best.npz and no eval-model.npz).
SETTINGS = dict(TINY, eval_every=0, iterations=2)
#: The files an iteration writes after checkpoint.pt, each derived from it.
DERIVED = ("resume.pt", "model.npz", "log.txt", "curve.csv", "curve.json")

#: A run of SETTINGS in folder argv[1] that kills itself (SIGKILL) right after the second write
#: of the file named argv[2] (the second iteration's) has been renamed into place: every write
#: goes through _files.writing, which this script wraps; the product has no hook for it.
KILL_SCRIPT = """
import os, signal, sys, json
from contextlib import contextmanager
from pathlib import Path
from carnac_env import _files
from carnac_env.train.trainer import Config, Trainer

out, name, settings = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
original, seen = _files.writing, []

@contextmanager
def writing(path, **kwargs):
    with original(path, **kwargs) as handle:
        yield handle
    if Path(path).name == name:
        seen.append(path)
        if len(seen) == 2:
            os.kill(os.getpid(), signal.SIGKILL)

_files.writing = writing
with Trainer(out, Config(**settings), progress=False) as trainer:
    trainer.run()
sys.exit("never killed: the run wrote %s %d times" % (name, len(seen)))
"""


def trainer(out, config=None, **kwargs):
    return Trainer(out, config, progress=False, **kwargs)


def saved(path: Path) -> dict:
    return torch.load(path, map_location="cpu", weights_only=True)


def iterations_in(folder: Path) -> dict[str, int]:
    """The iteration each file of ``folder`` holds."""
    found = {"checkpoint.pt": saved(folder / "checkpoint.pt")["iteration"]}
    found["resume.pt"] = saved(folder / "resume.pt")["iteration"] if (folder / "resume.pt").exists() else 0
    found["model.npz"] = load(folder / "model.npz").header["training"]["iteration"]
    found["log.txt"] = len((folder / "log.txt").read_text().splitlines())
    with open(folder / "curve.csv", newline="") as handle:
        found["curve.csv"] = len(list(csv.DictReader(handle)))
    found["curve.json"] = len(json.loads((folder / "curve.json").read_text()))
    return found


def assert_in_step(folder: Path) -> None:
    """Every derived file of ``folder`` holds the checkpoint's iteration, network and curve."""
    record = saved(folder / "checkpoint.pt")
    assert iterations_in(folder) == dict.fromkeys(("checkpoint.pt", *DERIVED), record["iteration"])
    resume = saved(folder / "resume.pt")
    assert "replay" not in resume and resume["curve"] == record["curve"]
    for name, value in record["net"].items():
        assert torch.equal(resume["net"][name], value), name
    assert json.loads((folder / "curve.json").read_text()) == record["curve"]
    assert [json.loads(line) for line in (folder / "log.txt").read_text().splitlines()] == record["curve"]
    with open(folder / "curve.csv", newline="") as handle:
        assert [int(row["iteration"]) for row in csv.DictReader(handle)] == [r["iteration"] for r in record["curve"]]


# ---------------------------------------------------------------- kill -9 between the writes
@pytest.mark.parametrize(
    "killed_after",
    # the case in the quick suite; the later kill points (a subprocess each) with the slow ones
    ["checkpoint.pt", *(pytest.param(name, marks=pytest.mark.slow) for name in ("resume.pt", "model.npz", "log.txt"))],
)
def test_a_resume_with_no_iteration_left_mends_what_a_kill_left_behind(tmp_path, killed_after):
    """Case 9: kill -9 right after the second iteration's ``killed_after`` is written, then a
    resume with no iteration left: every file is the checkpoint's (resume.pt, the file meant to
    be committed, among them), not one iteration behind for good."""
    out = tmp_path / "run"
    child = subprocess.run(
        [sys.executable, "-c", KILL_SCRIPT, str(out), killed_after, json.dumps(SETTINGS)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert child.returncode == -signal.SIGKILL, child.stderr
    order = ("checkpoint.pt", *DERIVED)
    written = order[: order.index(killed_after) + 1]
    before = iterations_in(out)
    assert before == {name: 2 if name in written else 1 for name in order}  # the kill left the rest behind
    with trainer(out, iterations=2) as again:
        assert again.iteration == 2
        assert again.run() == []  # nothing left to play
    assert_in_step(out)
    with trainer(out, iterations=3) as more:  # and the run goes on from there
        more.run()
    assert_in_step(out)
    assert saved(out / "checkpoint.pt")["iteration"] == 3


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> dict[str, Path]:
    """A run of two iterations (``run``) and its checkpoint after the first (``first``)."""
    root = tmp_path_factory.mktemp("finished")
    with trainer(root / "run", Config(**dict(SETTINGS, iterations=1))) as t:
        t.run()
    shutil.copy(root / "run" / "checkpoint.pt", root / "first.pt")
    with trainer(root / "run", iterations=2) as t:
        t.run()
    return {"run": root / "run", "first": root / "first.pt"}


def copy_of(finished: dict[str, Path], tmp_path: Path) -> Path:
    out = tmp_path / "run"
    shutil.copytree(finished["run"], out)
    return out


def test_a_folder_in_step_is_left_alone(finished, tmp_path):
    """A resume of a folder whose files are in step rewrites none of them (same inode: no rename)."""
    out = copy_of(finished, tmp_path)
    names = [n for n in (*DERIVED, "curve.png") if (out / n).exists()]
    inodes = {n: (out / n).stat().st_ino for n in names}
    with trainer(out, iterations=2) as t:
        assert t.run() == []
    assert {n: (out / n).stat().st_ino for n in names} == inodes


def test_missing_files_come_back_from_the_checkpoint(finished, tmp_path):
    out = copy_of(finished, tmp_path)
    for name in DERIVED:
        (out / name).unlink()
    with trainer(out, iterations=2):
        pass
    assert_in_step(out)


def test_a_resume_pt_ahead_of_the_checkpoint_is_refused_and_kept(finished, tmp_path):
    """resume.pt is written after checkpoint.pt, so no kill leaves it ahead: one that is (say a
    newer resume.pt pulled from elsewhere beside an old checkpoint) is not overwritten."""
    out = copy_of(finished, tmp_path)
    shutil.copy(finished["first"], out / "checkpoint.pt")
    kept = {p.name: p.read_bytes() for p in out.iterdir()}
    with pytest.raises(CarnacError, match=r"resume\.pt holds iteration 2, ahead of .*checkpoint\.pt \(iteration 1\)"):
        trainer(out, iterations=5)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == kept  # resume.pt and config.json among them


# ---------------------------------------------------------------- a full disk
def test_a_full_disk_names_the_checkpoint_not_torchs_unexpected_pos(tmp_path):
    """Case 7 on a real full disk (a 64 KiB tmpfs; skipped where it cannot be mounted): the run
    stops with ``cannot write DIR/checkpoint.pt: No space left on device`` and leaves no
    checkpoint and no temporary file."""
    with small_tmpfs(tmp_path / "full", size="64k") as out:
        with trainer(out, Config(**SETTINGS)) as t, pytest.raises(CarnacError) as caught:
            t.run()
        message = str(caught.value)
        assert message == f"cannot write {out / 'checkpoint.pt'}: No space left on device", message
        assert sorted(p.name for p in out.iterdir()) == ["config.json"]  # the lock released, nothing torn


def test_a_file_size_limit_is_a_clear_error_of_the_command(tmp_path):
    """Case 7 with RLIMIT_FSIZE (SIGXFSZ ignored, so a write past the limit fails with EFBIG):
    ``carnac train`` says which file it could not write and why (the OS's reason, "File too
    large"), exits 2, prints no traceback and leaves no checkpoint. Several limits, since where
    the write fails decides whether torch or Python's file reports it (torch's "unexpected pos"
    came out at 64 KiB and 100 kB before the fix)."""
    limits = (16_384, 65_536, 100_000)
    settings = [f"--{key.replace('_', '-')}={value}" for key, value in SETTINGS.items() if key != "iterations"]
    code = (
        "import resource, signal, sys\n"
        "from carnac_env.cli import main\n"
        "import carnac_env.train.trainer\n"  # imported before the limit
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "hard = resource.getrlimit(resource.RLIMIT_FSIZE)[1]\n"
        f"for limit in {limits!r}:\n"
        "    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))\n"
        f"    status = main(['train', '--out', {str(tmp_path)!r} + f'/{{limit}}', '--iterations=1', '--no-progress', "
        f"*{settings!r}])\n"
        "    resource.setrlimit(resource.RLIMIT_FSIZE, (hard, hard))\n"
        "    print(f'{limit} exit {status}', flush=True)\n"
    )
    child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert child.returncode == 0, child.stderr
    assert "Traceback" not in child.stderr and "unexpected pos" not in child.stderr, child.stderr
    assert child.stdout.splitlines() == [f"{limit} exit 2" for limit in limits], child.stdout
    for limit in limits:
        out = tmp_path / str(limit)
        assert f"carnac: error: train: cannot write {out / 'checkpoint.pt'}: File too large" in child.stderr
        assert sorted(p.name for p in out.iterdir()) == ["config.json"]  # no checkpoint, no temporary file


# ---------------------------------------------------------------- NaN, inf and huge texts in a checkpoint
HUGE = "x" * 2_000_000


def _row(n: int, **change):
    def mutate(d):
        d["curve"] = [dict(r) for r in d["curve"]]
        d["curve"][n].update(change)

    return mutate


def _many_fields(d):
    d["curve"] = [dict(r) for r in d["curve"]]
    d["curve"][0].update({f"f{i}": i for i in range(2000)})


def _config(**change):
    def mutate(d):
        d["config"] = dict(d["config"], **change)

    return mutate


def _group(**change):
    def mutate(d):
        d["optimizer"] = dict(d["optimizer"])
        d["optimizer"]["param_groups"] = [dict(g, **change) for g in d["optimizer"]["param_groups"]]

    return mutate


def _moment(d):
    d["optimizer"] = dict(d["optimizer"])
    d["optimizer"]["state"] = dict(d["optimizer"]["state"])
    first = dict(d["optimizer"]["state"][0])
    first["exp_avg"] = first["exp_avg"] * float("nan")
    d["optimizer"]["state"][0] = first


def _renamed(d):
    d["curve"] = [dict(r) for r in d["curve"]]
    d["curve"][0][HUGE] = 1


HOSTILE = [
    (_row(0, loss=math.nan), r"field 'curve' row 1: 'loss'=nan; expected a finite number"),
    (_row(1, loss=math.inf), r"field 'curve' row 2: 'loss'=inf; expected a finite number"),
    (_row(1, lr=-math.inf), r"field 'curve' row 2: 'lr'=-inf"),
    (_row(0, games=10**30), r"field 'curve' row 1: 'games'=1000000000000000000000000000000"),
    (_row(0, games=True), r"field 'curve' row 1: 'games'=True"),
    (_row(0, kind=HUGE), r"field 'curve' row 1: 'kind'='xxx.*\(2000002 characters\); expected .* at most 1000"),
    (_renamed, r"field 'curve' row 1 has the name 'xxx.*\(2000002 characters\)"),
    (_many_fields, r"field 'curve' row 1 is not a mapping of 1 to 1000 names"),
    (_row(0, iteration=2), r"field 'curve' row 1: 'iteration'=2; expected 1"),
    (_config(init=HUGE), r"field 'config': training setting init is 2000000 characters long; expected at most 4096"),
    (_config(lr=math.nan), r"field 'config': training setting lr=nan"),
    (_config(c=math.inf), r"field 'config': training setting c=inf"),
    (_group(eps=math.nan), r"field optimizer.param_groups eps=nan"),
    (_group(betas=(0.9, math.inf)), r"field optimizer.param_groups betas=inf"),
    (_group(lr=[0.001]), r"field optimizer.param_groups lr=\[0.001\]"),
    (_moment, r"field optimizer.state\[0\].exp_avg holds NaN or infinite values"),
]


@pytest.mark.parametrize("source", ["checkpoint.pt", "resume.pt"])
@pytest.mark.parametrize(("change", "words"), HOSTILE, ids=[w[:40] for _, w in HOSTILE])
def test_non_finite_numbers_and_huge_texts_are_refused_naming_the_file_and_the_field(
    finished, tmp_path, source, change, words
):
    """Case 10: a NaN or infinity in any number of a checkpoint (or of resume.pt, read when there
    is no checkpoint.pt), or a text beyond the bounds, is refused with the file and the field
    named; nothing is written (curve.json keeps being JSON), the message never copies the text."""
    out = copy_of(finished, tmp_path)
    if source == "resume.pt":
        (out / "checkpoint.pt").unlink()
    path = out / source
    data = saved(path)
    change(data)
    torch.save(data, path)
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    with pytest.raises(CarnacError) as caught:
        trainer(out, iterations=2)
    message = str(caught.value)
    assert message.startswith(f"{path}: ") and re.search(words, message), message
    assert len(message) < 600
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before
    json.loads((out / "curve.json").read_text())


def test_curve_json_is_never_written_with_nan(tmp_path):
    """The curve writers refuse a NaN rather than write ``NaN``, which is not JSON."""
    config = Config(**SETTINGS)
    with pytest.raises(ValueError, match="not JSON compliant"):
        write_curve(tmp_path, [{"iteration": 1, "games": 4, "loss": math.nan}], config)
    assert os.listdir(tmp_path) == []  # refused before any file is written
