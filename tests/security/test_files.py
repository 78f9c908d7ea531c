"""carnac_env._files: atomic writes, durable appends and the folder lock, against a hostile folder,
a full disk and a second run (issue 22 findings 3, 4 and 9)."""

from __future__ import annotations

import csv
import io
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from _mounts import read_only_copy, small_tmpfs

from carnac_env import _files
from carnac_env.errors import CarnacError


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


# --------------------------------------------------------------------------- atomic writes
def test_write_bytes_text_json_round_trip_and_leave_no_temporary_file(tmp_path):
    _files.write_bytes(tmp_path / "a.bin", b"\x00\x01")
    _files.write_text(tmp_path / "b.txt", "é\n")
    _files.write_json(tmp_path / "c.json", {"x": [1, 2]})
    assert (tmp_path / "a.bin").read_bytes() == b"\x00\x01"
    assert (tmp_path / "b.txt").read_bytes() == "é\n".encode()
    assert (tmp_path / "c.json").read_text() == '{\n  "x": [\n    1,\n    2\n  ]\n}\n'
    assert _leftovers(tmp_path) == []


def test_written_files_get_the_usual_permissions(tmp_path):
    umask = os.umask(0o022)
    try:
        _files.write_text(tmp_path / "a.txt", "x")
    finally:
        os.umask(umask)
    assert (tmp_path / "a.txt").stat().st_mode & 0o777 == 0o644


def test_a_link_planted_at_the_target_is_replaced_not_followed(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    (tmp_path / "arena.json").symlink_to(victim)
    _files.write_text(tmp_path / "arena.json", "new")
    assert victim.read_text() == "precious"
    assert not (tmp_path / "arena.json").is_symlink() and (tmp_path / "arena.json").read_text() == "new"


def test_a_link_planted_at_the_temporary_name_is_never_opened(tmp_path, monkeypatch):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    names = iter(["planted", "planted", "fresh"])
    monkeypatch.setattr(_files.secrets, "token_hex", lambda n: next(names))
    (tmp_path / ".out.json.planted.tmp").symlink_to(victim)
    _files.write_text(tmp_path / "out.json", "data")
    assert victim.read_text() == "precious"
    assert (tmp_path / "out.json").read_text() == "data"
    assert (tmp_path / ".out.json.planted.tmp").is_symlink()  # left alone, not ours


def test_the_old_fixed_temporary_names_are_not_used(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    for name in ("arena.json.tmp", "results.json.tmp", "games.jsonl.tmp"):
        (tmp_path / name).symlink_to(victim)
    for name in ("arena.json", "results.json", "games.jsonl"):
        _files.write_text(tmp_path / name, "x\n")
    assert victim.read_text() == "precious"


def test_a_failing_writer_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "model.npz"
    target.write_bytes(b"old")
    with pytest.raises(ZeroDivisionError), _files.writing(target) as handle:
        handle.write(b"half a file")
        1 / 0  # noqa: B018
    assert target.read_bytes() == b"old"
    assert _leftovers(tmp_path) == []


def test_an_os_error_in_the_writer_names_the_file(tmp_path):
    target = tmp_path / "x.bin"
    full = pytest.raises(CarnacError, match=rf"cannot write {re.escape(str(target))}: No space left on device")
    with full, _files.writing(target):
        raise OSError(28, "No space left on device")
    assert list(tmp_path.iterdir()) == []


def test_missing_folder_and_folder_at_target_are_refused_with_the_name(tmp_path):
    with pytest.raises(CarnacError, match=r"cannot write .*nowhere/a\.json: No such file"):
        _files.write_json(tmp_path / "nowhere" / "a.json", {})
    (tmp_path / "dir").mkdir()
    with pytest.raises(CarnacError, match=r"cannot write .*dir: it is a folder, not a regular file"):
        _files.write_text(tmp_path / "dir", "x")
    assert _leftovers(tmp_path) == []


def test_writers_that_take_a_handle(tmp_path):
    from PIL import Image

    with _files.writing(tmp_path / "a.npz") as handle:
        np.savez(handle, w=np.arange(3, dtype=np.float32))
    assert np.load(tmp_path / "a.npz")["w"].tolist() == [0.0, 1.0, 2.0]
    with _files.writing(tmp_path / "a.png") as handle:
        Image.new("RGB", (2, 2), (255, 0, 0)).save(handle, format="PNG")
    assert Image.open(tmp_path / "a.png").getpixel((0, 0)) == (255, 0, 0)
    with _files.writing(tmp_path / "a.csv", text=True, newline="") as handle:
        csv.writer(handle).writerows([["step", "loss"], [1, 0.5]])
    assert (tmp_path / "a.csv").read_bytes() == b"step,loss\r\n1,0.5\r\n"


def test_if_changed_leaves_an_identical_file_alone(tmp_path):
    target = tmp_path / "r.json"
    assert _files.write_json(target, {"a": 1}) is True
    before = target.stat().st_ino
    assert _files.write_json(target, {"a": 1}, if_changed=True) is False
    assert target.stat().st_ino == before
    assert _files.write_json(target, {"a": 2}, if_changed=True) is True
    assert target.stat().st_ino != before


def test_if_changed_does_not_trust_a_link_with_the_same_contents(tmp_path):
    (tmp_path / "elsewhere").write_text("same")
    (tmp_path / "r.txt").symlink_to(tmp_path / "elsewhere")
    assert _files.write_text(tmp_path / "r.txt", "same", if_changed=True) is True
    assert not (tmp_path / "r.txt").is_symlink()


# --------------------------------------------------------------------------- appends
def test_append_line_creates_and_appends_durably(tmp_path):
    path = tmp_path / "games.jsonl"
    _files.append_line(path, "one")
    with _files.appending(path) as out:
        out.line("two")
        out.line("three")
    assert path.read_text() == "one\ntwo\nthree\n"


@pytest.mark.parametrize("dangling", [True, False])
def test_append_refuses_a_link_dangling_or_not(tmp_path, dangling):
    victim = tmp_path / "victim.txt"
    if not dangling:
        victim.write_text("precious\n")
    (tmp_path / "games.jsonl").symlink_to(victim)
    with pytest.raises(CarnacError, match=r"games\.jsonl: it is a symbolic link"):
        _files.append_line(tmp_path / "games.jsonl", "line")
    assert victim.exists() is not dangling and (dangling or victim.read_text() == "precious\n")


def test_append_and_truncate_refuse_a_fifo_without_blocking(tmp_path):
    os.mkfifo(tmp_path / "games.jsonl")
    with pytest.raises(CarnacError, match="not a regular file"):
        _files.append_line(tmp_path / "games.jsonl", "x")
    with pytest.raises(CarnacError, match="not a regular file"):
        _files.truncate(tmp_path / "games.jsonl", 0)


def test_truncate_cuts_a_file_and_refuses_a_link(tmp_path):
    (tmp_path / "g").write_bytes(b"abcdef")
    _files.truncate(tmp_path / "g", 2)
    assert (tmp_path / "g").read_bytes() == b"ab"
    (tmp_path / "link").symlink_to(tmp_path / "g")
    with pytest.raises(CarnacError, match="symbolic link"):
        _files.truncate(tmp_path / "link", 0)
    assert (tmp_path / "g").read_bytes() == b"ab"


# --------------------------------------------------------------------------- full disk
def test_a_full_disk_leaves_the_old_file_and_no_temporary_and_names_the_file(tmp_path):
    with small_tmpfs(tmp_path / "disk") as disk:
        target = disk / "replay.html"
        target.write_text("old page")
        with pytest.raises(CarnacError, match=rf"cannot write {re.escape(str(target))}: No space left on device"):
            _files.write_bytes(target, b"x" * 200_000)
        assert target.read_text() == "old page"
        assert sorted(p.name for p in disk.iterdir()) == ["replay.html"]
        full = pytest.raises(CarnacError, match=r"games\.jsonl: No space left on device")
        with full, _files.appending(disk / "games.jsonl") as out:
            for _ in range(100):
                out.line("y" * 4000)


# --------------------------------------------------------------------------- the folder lock
def test_a_second_lock_on_a_folder_is_refused_at_once_and_names_the_folder(tmp_path):
    out = tmp_path / "out"
    with _files.lock_folder(out, "arena") as lock:
        assert lock.held and (out / _files.LOCK_NAME).is_file()
        busy = rf"{re.escape(str(out))} is in use by another run \(arena, process {os.getpid()}"
        with pytest.raises(_files.FolderBusyError, match=busy), _files.lock_folder(out, "evaluate"):
            pass
    assert not (out / _files.LOCK_NAME).exists()
    with _files.lock_folder(out, "arena"):
        pass


def test_the_lock_removes_the_folders_it_created_when_left_empty(tmp_path):
    with _files.lock_folder(tmp_path / "a" / "b"):
        assert (tmp_path / "a" / "b").is_dir()
    assert not (tmp_path / "a").exists()
    with _files.lock_folder(tmp_path / "c"):
        (tmp_path / "c" / "arena.json").write_text("{}")
    assert sorted(p.name for p in (tmp_path / "c").iterdir()) == ["arena.json"]


def test_the_lock_refuses_a_file_in_place_of_the_folder_and_a_link_as_lock_file(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(CarnacError, match="is not a folder"), _files.lock_folder(tmp_path / "file"):
        pass
    (tmp_path / "out").mkdir()
    (tmp_path / "victim").write_text("precious")
    (tmp_path / "out" / _files.LOCK_NAME).symlink_to(tmp_path / "victim")
    with pytest.raises(CarnacError, match="symbolic link"), _files.lock_folder(tmp_path / "out"):
        pass
    assert (tmp_path / "victim").read_text() == "precious"


HOLDER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from carnac_env import _files
    with _files.lock_folder(sys.argv[1], "arena"):
        Path(sys.argv[2]).write_text("held")
        time.sleep(600)
    """
)


def _hold_in_another_process(out: Path, ready: Path) -> subprocess.Popen:
    child = subprocess.Popen([sys.executable, "-c", HOLDER, str(out), str(ready)])
    deadline = time.monotonic() + 60
    while not ready.exists():
        assert child.poll() is None, "the lock holder died"
        assert time.monotonic() < deadline, "the lock holder did not start"
        time.sleep(0.02)
    return child


def test_two_processes_the_second_is_refused_and_a_killed_holder_never_blocks(tmp_path):
    out = tmp_path / "out"
    child = _hold_in_another_process(out, tmp_path / "ready")
    try:
        busy = rf"in use by another run \(arena, process {child.pid}"
        with pytest.raises(_files.FolderBusyError, match=busy), _files.lock_folder(out, "arena"):
            pass
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    assert (out / _files.LOCK_NAME).exists()  # left by the kill
    with _files.lock_folder(out, "arena") as lock:
        assert lock.held
    assert not (out / _files.LOCK_NAME).exists()


def test_a_read_only_folder_is_yielded_unlocked(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "results.json").write_text("{}\n")
    with read_only_copy(tmp_path / "src", tmp_path / "ro") as ro:
        with _files.lock_folder(ro, "arena") as lock:
            assert not lock.held
        with pytest.raises(CarnacError, match="cannot write"):
            _files.write_text(ro / "results.json", "x")
        assert _files.write_text(ro / "results.json", "{}\n", if_changed=True) is False


def test_messages_carry_no_traceback_types(tmp_path):
    buffer = io.StringIO()
    try:
        _files.write_text(tmp_path / "missing" / "x", "y")
    except CarnacError as err:
        buffer.write(str(err))
    assert "Errno" not in buffer.getvalue() and "missing/x" in buffer.getvalue()
