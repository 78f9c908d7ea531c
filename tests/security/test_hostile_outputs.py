"""Outputs that cannot destroy (issue 49, items 1, 5 and 11): a device node, a FIFO, a link to
one or a folder at an output path is refused by name and left as it was; ``-`` is standard
output; temporaries of a killed writer are removed by the next write of the same target (never
a live writer's); a render too big to hold is refused before anything is drawn."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from _paths import ROOT

from carnac_env import _files
from carnac_env.core.boards import make_board
from carnac_env.core.game import GameState
from carnac_env.core.record import GameRecord
from carnac_env.errors import CarnacError


# --------------------------------------------------------------------------- hostile paths
def _device(folder: Path) -> Path:
    """A character device like /dev/null (1, 3), made inside ``folder`` (never the real /dev)."""
    node = folder / "null"
    try:
        os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except (PermissionError, OSError) as err:
        pytest.skip(f"cannot make a device node here ({err}); needs root or CAP_MKNOD")
    return node


def _fifo(folder: Path) -> Path:
    fifo = folder / "pipe"
    os.mkfifo(fifo)
    return fifo


def _link_to_device(folder: Path) -> Path:
    link = folder / "link"
    link.symlink_to(_device(folder))
    return link


def _folder(folder: Path) -> Path:
    planted = folder / "results.json"
    planted.mkdir()
    return planted


HOSTILE = {"device": _device, "fifo": _fifo, "link to a device": _link_to_device, "folder": _folder}


def _kind(path: Path) -> tuple[int, int]:
    """What is at ``path`` (the link itself for a link), and what it points to."""
    return stat.S_IFMT(os.lstat(path).st_mode), stat.S_IFMT(os.stat(path).st_mode)


WRITERS = {
    "write_text": lambda p: _files.write_text(p, "x"),
    "write_bytes": lambda p: _files.write_bytes(p, b"x"),
    "write_json if_changed": lambda p: _files.write_json(p, {"a": 1}, if_changed=True),
    "writing": lambda p: _files.writing(p).__enter__(),
    "append_line": lambda p: _files.append_line(p, "x"),
    "check_output": lambda p: _files.check_output(p),
}


@pytest.mark.parametrize("writer", WRITERS)
@pytest.mark.parametrize("hostile", HOSTILE)
def test_an_output_that_is_not_a_regular_file_is_refused_by_name_and_left_as_it_was(tmp_path, hostile, writer):
    path = HOSTILE[hostile](tmp_path)
    before = _kind(path)
    with pytest.raises(CarnacError, match=rf"cannot write {path}: it is .*(device|FIFO|folder|symbolic link)"):
        WRITERS[writer](path)
    assert _kind(path) == before
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_a_planted_folder_is_named_not_a_file_descriptor(tmp_path):
    """``results.json``/``card.json`` planted as folders gave ``cannot use 4: Is a directory``."""
    for name in ("results.json", "card.json"):
        (tmp_path / name).mkdir()
        with pytest.raises(CarnacError, match=rf"cannot write {tmp_path / name}: it is a folder"):
            _files.write_json(tmp_path / name, {"games": 1}, if_changed=True)
    assert _files.same_bytes(tmp_path / "card.json", b"") is False


def test_a_link_to_a_regular_file_is_still_replaced_never_written_through(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    (tmp_path / "out.svg").symlink_to(victim)
    _files.write_text(tmp_path / "out.svg", "<svg/>")
    assert victim.read_text() == "precious"
    assert not (tmp_path / "out.svg").is_symlink() and (tmp_path / "out.svg").read_text() == "<svg/>"


def test_a_model_export_to_a_device_is_refused(tmp_path):
    """``train --export FILE`` writes with carnac_env.models.save, which goes through _files."""
    from carnac_env.models import cached, model_path, save

    node = _device(tmp_path)
    with pytest.raises(CarnacError, match=rf"cannot write {node}: it is a character device"):
        save(cached(model_path("small")), node)
    assert stat.S_ISCHR(os.lstat(node).st_mode)


# --------------------------------------------------------------------------- standard output
def test_dash_is_standard_output_and_a_failed_writer_writes_nothing(tmp_path, monkeypatch, capfd):
    monkeypatch.chdir(tmp_path)
    _files.write_text("-", "one\n")
    _files.write_json("-", {"a": 1})
    with _files.writing("-", text=True, newline="") as handle:
        handle.write("three\r\n")
    with pytest.raises(ZeroDivisionError), _files.writing("-") as handle:
        handle.write(b"half")
        1 / 0  # noqa: B018
    assert capfd.readouterr().out == 'one\n{\n  "a": 1\n}\nthree\r\n'
    assert list(tmp_path.iterdir()) == []  # no file called "-"


# --------------------------------------------------------------------------- temporaries
WRITER = textwrap.dedent(
    """
    import os, signal, sys, time
    from pathlib import Path
    from carnac_env import _files
    with _files.writing(sys.argv[1]) as handle:
        handle.write(b"x" * 100_000)
        handle.flush()
        Path(sys.argv[2]).write_text("writing")
        if sys.argv[3] == "die":
            os.kill(os.getpid(), signal.SIGKILL)
        time.sleep(120)
    """
)


def _start_writer(target: Path, flag: Path, how: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    child = subprocess.Popen([sys.executable, "-c", WRITER, str(target), str(flag), how], env=env)
    deadline = time.monotonic() + 60
    while not flag.exists() and child.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert flag.exists(), "the writer never started writing"
    return child


def _temporaries(folder: Path, name: str) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(f".{name}.") and p.name.endswith(".tmp"))


def test_temporaries_of_a_killed_writer_are_removed_by_the_next_write_of_that_target(tmp_path):
    target = tmp_path / "checkpoint.pt"
    child = _start_writer(target, tmp_path / "flag", "die")
    assert child.wait() == -signal.SIGKILL
    left = _temporaries(tmp_path, "checkpoint.pt")
    assert len(left) == 1 and left[0].startswith(f".checkpoint.pt.{child.pid}.")
    other = tmp_path / f".model.npz.{child.pid}.0123456789abcdef.tmp"  # another target's: not this write's
    other.write_bytes(b"y")
    _files.write_bytes(target, b"new")
    assert _temporaries(tmp_path, "checkpoint.pt") == []
    assert target.read_bytes() == b"new" and other.exists()


def test_a_live_writers_temporary_is_never_removed(tmp_path):
    target = tmp_path / "model.npz"
    child = _start_writer(target, tmp_path / "flag", "live")
    try:
        live = _temporaries(tmp_path, "model.npz")
        assert len(live) == 1
        _files.write_bytes(target, b"mine")
        assert _temporaries(tmp_path, "model.npz") == live
    finally:
        child.kill()
        child.wait()
    _files.write_bytes(target, b"again")  # now its writer is dead: removed
    assert _temporaries(tmp_path, "model.npz") == []


def test_stale_temporaries_are_removed_only_when_regular_files_of_the_right_form(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(dead.stdout)
    stale = tmp_path / f".log.txt.{pid}.00112233445566ff.tmp"
    stale.write_text("half a log")
    old = tmp_path / ".log.txt.aabbccddeeff0011.tmp"  # the form before pids, untouched for long
    old.write_text("old")
    os.utime(old, (time.time() - 2 * _files.LEGACY_TEMPORARY_AGE,) * 2)
    recent = tmp_path / ".log.txt.ffeeddccbbaa0099.tmp"  # that form, recent: perhaps a live old writer
    recent.write_text("recent")
    link = tmp_path / f".log.txt.{pid}.0000000000000000.tmp"
    link.symlink_to(tmp_path / "victim")
    odd = tmp_path / ".log.txt.planted.tmp"
    odd.write_text("not ours")
    _files.write_text(tmp_path / "log.txt", "{}\n")
    assert not stale.exists() and not old.exists()
    assert recent.exists() and link.is_symlink() and odd.exists()


# --------------------------------------------------------------------------- CLI paths
def _small_record(folder: Path) -> Path:
    board = make_board("small")
    state, actions = GameState(board), []
    for _ in range(6):
        action = int(state.legal_actions()[0])
        actions.append(action)
        state.apply(action)
    path = folder / "game.json"
    GameRecord.from_actions(board, actions).save(path)
    return path


@pytest.mark.parametrize("option", ["--png", "--svg", "--html"])
@pytest.mark.parametrize("hostile", ["device", "fifo", "link to a device"])
def test_analysis_refuses_a_hostile_output_before_the_review(tmp_path, capsys, option, hostile):
    from carnac_env.cli import main

    path = HOSTILE[hostile](tmp_path)
    before = _kind(path)
    assert main(["analyse", str(_small_record(tmp_path)), option, str(path)]) == 2
    assert f"cannot write {path}: it is" in capsys.readouterr().err
    assert _kind(path) == before


@pytest.mark.parametrize("option", ["--html", "--gif"])
@pytest.mark.parametrize("hostile", HOSTILE)
def test_replay_refuses_a_hostile_output(tmp_path, capsys, option, hostile):
    from carnac_env.cli import main

    path = HOSTILE[hostile](tmp_path)
    before = _kind(path)
    assert main(["replay", str(_small_record(tmp_path)), option, str(path)]) == 2
    assert f"cannot write {path}: it is" in capsys.readouterr().err
    assert _kind(path) == before


@pytest.mark.parametrize("hostile", ["device", "fifo", "link to a device"])
def test_play_refuses_a_hostile_save_before_the_game(tmp_path, capsys, monkeypatch, hostile):
    from carnac_env.cli import main

    monkeypatch.chdir(tmp_path)  # the old code wrote a file called "-" here
    path = HOSTILE[hostile](tmp_path)
    before = _kind(path)
    assert main(["play", "--board", "small", "--opponent", "random", "--save", str(path)]) == 2
    assert f"--save {path}: cannot write {path}: it is" in capsys.readouterr().err
    assert _kind(path) == before
    assert main(["play", "--board", "small", "--opponent", "random", "--save", "-"]) == 2
    assert "--save -: the game itself is shown on standard output" in capsys.readouterr().err


def test_replay_html_to_standard_output(tmp_path, capfd):
    from carnac_env.cli import main

    assert main(["replay", str(_small_record(tmp_path)), "--html", "-"]) == 0
    out, err = capfd.readouterr()
    assert out.startswith("<!DOCTYPE html>") and out.rstrip().endswith("</html>")
    assert "wrote -" in err
    assert main(["replay", str(_small_record(tmp_path)), "--html", "-", "--gif", "-"]) == 2
    assert "only one output can go to standard output" in capfd.readouterr().err


def test_replay_gif_to_standard_output(tmp_path, capfd):
    from carnac_env.cli import main

    assert main(["replay", str(_small_record(tmp_path)), "--gif", "-"]) == 0
    out = capfd.readouterr().out
    assert out.startswith("GIF89a")


# --------------------------------------------------------------------------- bounded renders
def _big_record() -> GameRecord:
    """A legal finished game on a 64 x 64 custom board: a few kilobytes of moves whose frames at
    the default cell would take gigabytes."""
    board = make_board("custom", rows=64, cols=64, megaliths=127)
    state, actions = GameState(board), []
    while not state.is_over:
        action = int(state.legal_actions()[-1])
        actions.append(action)
        state.apply(action)
    return GameRecord.from_actions(board, actions)


@pytest.fixture
def no_drawing(monkeypatch):
    """Any drawing fails the test: a refused render must be refused before it draws."""
    from carnac_env.render.image import ImageRenderer

    def drew(*args, **kwargs):
        raise AssertionError("a frame was drawn before the size was checked")

    monkeypatch.setattr(ImageRenderer, "draw_image", drew)


def test_a_64x64_record_is_refused_as_a_gif_before_any_frame_is_drawn(tmp_path, capsys, no_drawing):
    from carnac_env.cli import main
    from carnac_env.render.animate import MAX_ANIMATION_BYTES

    record = _big_record()
    path = tmp_path / "big.json"
    record.save(path)
    assert path.stat().st_size < 64_000
    assert main(["replay", str(path), "--gif", str(tmp_path / "out.gif")]) == 2
    err = capsys.readouterr().err
    cap = f"{MAX_ANIMATION_BYTES / 2**20:,.0f} MiB"
    assert f"{len(record.moves) + 1} frames of" in err and f"above the cap of {cap}" in err
    assert "MAX_ANIMATION_BYTES" in err and "a cell of " in err and "--html" in err
    assert not (tmp_path / "out.gif").exists()


def test_the_suggested_cell_fits_and_one_more_does_not(no_drawing):
    import re

    from carnac_env.render.animate import MAX_ANIMATION_BYTES, animation_bytes, check_animation_size

    record = _big_record()
    with pytest.raises(CarnacError, match=r"a cell of (\d+) pixels or less fits") as refused:
        check_animation_size(record)
    cell = int(re.search(r"a cell of (\d+)", str(refused.value)).group(1))
    assert animation_bytes(record, cell) <= MAX_ANIMATION_BYTES < animation_bytes(record, cell + 1)
    check_animation_size(record, cell)


def test_an_mp4_of_the_64x64_record_is_refused_too(tmp_path, no_drawing):
    pytest.importorskip("imageio_ffmpeg")
    from carnac_env.render.animate import write_animation

    with pytest.raises(CarnacError, match="MAX_ANIMATION_BYTES"):
        write_animation(_big_record(), tmp_path / "out.mp4")
    assert list(tmp_path.iterdir()) == []


def test_a_frame_above_the_pixel_cap_is_refused_before_drawing(no_drawing):
    from carnac_env.render.animate import check_animation_size
    from carnac_env.render.image import MAX_FRAME_PIXELS, ImageRenderer

    board = make_board("custom", rows=64, cols=64, megaliths=127)
    with pytest.raises(CarnacError, match=rf"above the cap of {MAX_FRAME_PIXELS:,} pixels"):
        ImageRenderer(board, cell=80)
    short = GameRecord.from_actions(board, [])
    with pytest.raises(CarnacError, match=r"a frame of the animation .* above the cap .* a cell of \d+ pixels"):
        check_animation_size(short, cell=80)
