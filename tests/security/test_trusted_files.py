"""Issue 22: output folders and written files that cannot be turned against the user.

Each test is one finding: two runs sharing a folder (3), planted links at the old fixed
temporary names and at games.jsonl (4), a full disk under every writer (9), a finished
arena shown from a read-only folder (11).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from _held import start_held
from _mounts import read_only_copy, small_tmpfs
from _paths import TESTS

from carnac_env import _files
from carnac_env.arena import run_arena
from carnac_env.core.record import GameRecord
from carnac_env.errors import CarnacError

AGENTS = ["random", "greedy"]
SETTINGS = {"board": "petit_menec", "games": 2, "seed": 3, "progress": False, "echo": lambda _: None}


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("finished")
    run_arena(AGENTS, out, **SETTINGS)
    return out


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "carnac_env.cli", *args]


# --------------------------------------------------------------------------- finding 3
def test_a_second_arena_on_a_busy_folder_is_refused_at_once_naming_the_folder(tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = _cli("arena", "--board", "petit_menec", "--agents", "random,greedy", "--games", "6")
    first = [*first, "--workers", "1", "--out", str(out), "--no-progress"]
    holder = start_held(first, 1, tmp_path / "held", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        before = snapshot(out)
        for second in (
            _cli("arena", "--board", "petit_menec", "--agents", "random,greedy", "--games", "6", "--out", str(out)),
            _cli("arena", "--board", "small", "--agents", "random,mcts", "--games", "1", "--out", str(out)),
            _cli("evaluate", "random", "--board", "small", "--games", "1", "--out", str(out)),
        ):
            done = subprocess.run([*second, "--no-progress"], capture_output=True, text=True, timeout=120)
            assert done.returncode == 2, done.stderr
            line = done.stderr.strip().splitlines()[-1]
            assert line.startswith("carnac: error: the output folder ") and str(out) in line
            assert f"in use by another run (arena, process {holder.pid}" in line
            assert snapshot(out) == before
    finally:
        os.killpg(holder.pid, signal.SIGKILL)
        holder.wait()
    # the killed holder's lock never blocks: the same command now finishes the arena
    done = subprocess.run([*first], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert len((out / "games.jsonl").read_text().splitlines()) == 6
    assert not (out / _files.LOCK_NAME).exists()


def test_an_arena_inside_this_process_on_a_locked_folder_is_refused(tmp_path: Path) -> None:
    with _files.lock_folder(tmp_path / "out", "train"):
        with pytest.raises(_files.FolderBusyError, match=r"in use by another run \(train, process"):
            run_arena(AGENTS, tmp_path / "out", **SETTINGS)
        assert os.listdir(tmp_path / "out") == [_files.LOCK_NAME]


# --------------------------------------------------------------------------- finding 4
def test_links_planted_at_the_old_temporary_names_are_never_followed(tmp_path: Path, finished: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    out = tmp_path / "out"
    out.mkdir()
    for name in ("arena.json.tmp", "results.json.tmp", "games.jsonl.tmp", "card.json.tmp"):
        (out / name).symlink_to(victim)
    run_arena(AGENTS, out, **SETTINGS)
    assert victim.read_text() == "precious"
    for name in ("arena.json", "games.jsonl", "results.json"):
        assert (out / name).read_bytes() == (finished / name).read_bytes()


def test_a_dangling_games_link_is_refused_and_creates_nothing_elsewhere(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.jsonl"
    out = tmp_path / "out"
    out.mkdir()
    (out / "games.jsonl").symlink_to(elsewhere)
    with pytest.raises(CarnacError, match=r"games\.jsonl: it is a symbolic link"):
        run_arena(AGENTS, out, **SETTINGS)
    assert not elsewhere.exists()


def test_a_games_link_to_a_real_file_is_never_cut_or_appended(tmp_path: Path, finished: Path) -> None:
    victim = tmp_path / "victim.jsonl"
    lines = (finished / "games.jsonl").read_bytes()
    victim.write_bytes(lines[: len(lines) // 2])  # a torn last line: the arena would cut it
    out = tmp_path / "out"
    out.mkdir()
    (out / "arena.json").write_bytes((finished / "arena.json").read_bytes())
    (out / "games.jsonl").symlink_to(victim)
    with pytest.raises(CarnacError, match="symbolic link"):
        run_arena(AGENTS, out, **SETTINGS)
    assert victim.read_bytes() == lines[: len(lines) // 2]


# --------------------------------------------------------------------------- finding 9
def _record() -> GameRecord:
    return GameRecord.from_json((TESTS / "golden" / "last_tilt_petit_menec.json").read_text())


def fill(disk: Path) -> None:
    """Fill ``disk`` to the last byte (a file of 512-byte blocks, then one of single bytes)."""
    for name, block in (("filler", b"\0" * 512), ("crumbs", b"\0")):
        with open(disk / name, "wb", buffering=0) as handle:
            try:
                while True:
                    handle.write(block)
            except OSError:
                pass


def test_a_full_disk_leaves_no_half_replay_or_record_and_names_the_file(tmp_path: Path) -> None:
    from carnac_env.render.html import write_replay_html

    record = _record()
    with small_tmpfs(tmp_path / "disk", size="64k") as disk:
        fill(disk)
        for target, write in (
            (disk / "replay.html", lambda p: write_replay_html(record, p)),
            (disk / "game.json", record.save),
        ):
            with pytest.raises(CarnacError, match=rf"cannot write {re.escape(str(target))}: No space left"):
                write(target)
        assert sorted(p.name for p in disk.iterdir()) == ["crumbs", "filler"]


def test_a_full_disk_leaves_no_half_gif(tmp_path: Path) -> None:
    pytest.importorskip("PIL")
    from carnac_env.render.animate import write_animation

    with small_tmpfs(tmp_path / "disk", size="64k") as disk:
        fill(disk)
        target = disk / "game.gif"
        with pytest.raises(CarnacError, match=rf"cannot write {re.escape(str(target))}: No space left"):
            write_animation(_record(), target, fps=4)
        assert sorted(p.name for p in disk.iterdir()) == ["crumbs", "filler"]


def test_a_full_disk_during_play_save_prints_the_record_and_names_the_file(tmp_path: Path) -> None:
    with small_tmpfs(tmp_path / "disk", size="64k") as disk:
        fill(disk)
        save = disk / "game.json"
        done = subprocess.run(
            _cli("play", "--board", "petit_menec", "--opponent", "random", "--save", str(save), "--no-color"),
            input="d6 Rns\nquit\n",
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 2, done.stderr
        assert done.stderr.strip().splitlines()[-1].startswith(f"carnac: error: cannot write {save}: No space left")
        kept = GameRecord.from_json(done.stdout.strip().splitlines()[-1])
        assert kept.moves[0] == "d6 Rns"
        assert not save.exists() and sorted(p.name for p in disk.iterdir()) == ["crumbs", "filler"]


def test_a_full_disk_during_an_arena_keeps_the_games_and_names_the_file(tmp_path: Path, finished: Path) -> None:
    with small_tmpfs(tmp_path / "disk", size="12k") as disk:
        out = disk / "out"
        with pytest.raises(CarnacError, match=r"cannot write .*: No space left"):
            run_arena(AGENTS, out, **{**SETTINGS, "games": 40})
        assert not [p.name for p in out.iterdir() if p.name.endswith(".tmp")]
        text = (out / "games.jsonl").read_text()
        complete = text[: text.rfind("\n") + 1]
        assert complete.splitlines() and all(json.loads(line)["result"] for line in complete.splitlines())


# --------------------------------------------------------------------------- finding 11
def test_a_finished_arena_is_shown_again_from_a_read_only_folder(tmp_path: Path, finished: Path) -> None:
    shown: list[str] = []
    with read_only_copy(finished, tmp_path / "ro") as ro:
        results = run_arena(AGENTS, ro, **{**SETTINGS, "echo": shown.append})
        assert snapshot(ro) == snapshot(finished)
    assert results == json.loads((finished / "results.json").read_text())
    assert any("random" in line and "greedy" in line for line in shown)


def test_a_finished_arena_run_again_rewrites_no_file(tmp_path: Path, finished: Path) -> None:
    out = tmp_path / "copy"
    out.mkdir()
    for name, data in snapshot(finished).items():
        (out / name).write_bytes(data)
    inodes = {p.name: p.stat().st_ino for p in out.iterdir()}
    run_arena(AGENTS, out, **SETTINGS)
    assert {p.name: p.stat().st_ino for p in out.iterdir()} == inodes


def test_a_finished_evaluation_is_shown_again_from_a_read_only_folder(tmp_path: Path) -> None:
    from carnac_env.evaluate import PANEL_DIR, evaluate

    data = json.loads((PANEL_DIR / "small-v1.json").read_text())
    data["members"] = data["members"][:2]  # random and greedy: a quick panel
    panel = tmp_path / "quick-v1.json"
    panel.write_text(json.dumps(data))
    out = tmp_path / "ev"
    card = evaluate("random", board="small", panel=panel, games=2, out=out, progress=False, echo=lambda _: None)
    with read_only_copy(out, tmp_path / "ro") as ro:
        again = evaluate("random", board="small", panel=panel, games=2, out=ro, progress=False, echo=lambda _: None)
        assert snapshot(ro) == snapshot(out)
    assert again == card
