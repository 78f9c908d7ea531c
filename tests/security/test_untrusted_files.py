"""Files and folders someone else prepared: numbers too long to parse, FIFOs and devices where
a file should be, long or odd model paths, hard links planted in an output folder, an arena
killed with ``kill -9`` (its workers stop too), edited OpenSpiel state strings, notation with
look-alike characters, and what ``carnac train --eval-every 0`` says."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _paths import TESTS

from carnac_env import _files
from carnac_env.arena import ArenaStore, run_arena, schedule
from carnac_env.core.boards import make_board
from carnac_env.core.notation import parse_action, parse_square
from carnac_env.core.record import GameRecord
from carnac_env.errors import CarnacError, NotationError, RecordError

AGENTS = ["random", "greedy"]
SETTINGS = {"board": "petit_menec", "games": 4, "seed": 3, "progress": False, "echo": lambda _: None}
HUGE = "9" * 5000  # int() of more than 4300 digits raises ValueError


def within(seconds: float, call: Callable[[], Any]) -> Any:
    """``call()``'s result or exception, failing the test if it has not returned in ``seconds``
    (a FIFO that hangs the call must fail, not hang the suite)."""
    done: dict[str, Any] = {}

    def target() -> None:
        try:
            done["value"] = call()
        except BaseException as err:  # handed to the test
            done["error"] = err

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        for path in FIFOS:  # let the hung open() go: a writer end opened non-blocking ... or a reader
            try:
                fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
                os.close(fd)
            except OSError:
                pass
        pytest.fail(f"{call} did not return within {seconds} s (it waited on a FIFO)")
    if "error" in done:
        raise done["error"]
    return done.get("value")


FIFOS: list[Path] = []


def fifo(path: Path) -> Path:
    if path.exists() or path.is_symlink():
        path.unlink()
    os.mkfifo(path)
    FIFOS.append(path)
    return path


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("finished")
    run_arena(AGENTS, out, **SETTINGS)
    return out


def copy_of(finished: Path, tmp_path: Path, name: str = "copy") -> Path:
    out = tmp_path / name
    out.mkdir()
    for path in finished.iterdir():
        (out / path.name).write_bytes(path.read_bytes())
    return out


# --------------------------------------------------------------------------- numbers too long
def test_a_5000_digit_number_in_arena_json_is_a_carnac_error(finished, tmp_path):
    out = copy_of(finished, tmp_path)
    settings = json.loads((out / "arena.json").read_text())
    text = json.dumps(settings).replace(f'"seed": {settings["seed"]}', f'"seed": {HUGE}')
    assert HUGE in text
    (out / "arena.json").write_text(text)
    with pytest.raises(CarnacError, match=r"arena\.json is not an arena's settings"):
        run_arena(AGENTS, out, **SETTINGS)


@pytest.mark.parametrize("line", [1, 4])  # a line in the middle, and the last line (with its newline)
def test_a_5000_digit_number_in_games_jsonl_is_a_carnac_error_naming_the_line(finished, tmp_path, line):
    out = copy_of(finished, tmp_path)
    lines = (out / "games.jsonl").read_text().splitlines(keepends=True)
    assert '"game":' in lines[line - 1]
    lines[line - 1] = lines[line - 1].replace('"game":', f'"game":{HUGE},"was":', 1)
    (out / "games.jsonl").write_text("".join(lines))
    expected = {g.key: g for g in schedule(AGENTS, 4, 3)}
    if line == 4:  # a damaged last line is dropped and played again, as a torn one is
        kept = ArenaStore(out).load_games(expected, make_board("petit_menec"))
        assert len(kept) == 3
        return
    with pytest.raises(CarnacError, match=r"games\.jsonl line 1 is not an arena game record"):
        ArenaStore(out).load_games(expected, make_board("petit_menec"))


def test_a_5000_digit_number_in_a_record_or_panel_is_a_carnac_error(tmp_path):
    record = tmp_path / "game.json"
    record.write_text('{"format": "carnac-game", "board": ' + HUGE + "}")
    with pytest.raises(RecordError, match="numbers of a usual size"):
        GameRecord.load(record)
    from carnac_env.evaluate.panel import load_panel

    panel = tmp_path / "panel.json"
    panel.write_text('{"name": ' + HUGE + "}")
    with pytest.raises(CarnacError, match="is not a panel file"):
        load_panel(panel)


# --------------------------------------------------------------------------- FIFOs and devices
def test_a_fifo_at_arena_json_or_games_jsonl_is_refused_at_once(finished, tmp_path):
    for name in ("arena.json", "games.jsonl"):
        out = copy_of(finished, tmp_path, name)
        (out / "results.json").unlink()
        fifo(out / name)
        with pytest.raises(CarnacError, match=rf"cannot read .*{name}: it is a FIFO"):
            within(20, lambda out=out: run_arena(AGENTS, out, **SETTINGS))
        assert not (out / _files.LOCK_NAME).exists()  # the folder's lock was let go


def test_a_fifo_or_a_device_as_panel_record_or_model_is_refused_at_once(tmp_path):
    from carnac_env.agents import make
    from carnac_env.evaluate.panel import load_panel
    from carnac_env.models import load

    pipe = fifo(tmp_path / "pipe.json")
    for path, kind in ((pipe, "a FIFO"), (Path("/dev/zero"), "a character device"), (tmp_path, "a folder")):
        with pytest.raises(CarnacError, match=f"it is {kind}"):
            within(20, lambda path=path: load_panel(Path(path)))
        with pytest.raises(RecordError, match=f"it is {kind}"):
            within(20, lambda path=path: GameRecord.load(path))
    model = fifo(tmp_path / "pipe.npz")
    for path, kind in ((model, "a FIFO"), (Path("/dev/zero"), "a device"), (tmp_path, "a folder")):
        with pytest.raises(CarnacError, match=f"is {kind}, not a regular file"):
            within(20, lambda path=path: load(path))
        with pytest.raises(CarnacError, match=f"is {kind}, not a regular file"):
            within(20, lambda path=path: make(f"az:model={path}"))


def test_the_panel_cli_refuses_a_fifo(tmp_path):
    pipe = fifo(tmp_path / "panel.json")
    argv = ["evaluate", "greedy", "--panel", str(pipe)]
    code = f"import sys; from carnac_env.cli import main; sys.exit(main({argv!r}))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "it is a FIFO" in done.stderr and "Traceback" not in done.stderr


def test_reading_refuses_what_is_not_a_regular_file_and_reads_through_a_link(tmp_path):
    real = tmp_path / "real.txt"
    real.write_bytes(b"data")
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    with _files.reading(link) as handle:
        assert handle.read() == b"data"
    with pytest.raises(CarnacError, match="No such file"), _files.reading(tmp_path / "missing"):
        pass
    with pytest.raises(CarnacError, match="it is a folder"), _files.reading(tmp_path):
        pass


# --------------------------------------------------------------------------- model paths
def test_a_long_or_odd_model_path_is_named_for_what_it_is(tmp_path):
    from carnac_env.agents import make
    from carnac_env.models import load, model_path

    long = "x" * 5000
    for call in (load, model_path, lambda p: make(f"az:model={p}")):
        with pytest.raises(CarnacError, match=r"File name too long") as caught:
            call(long)
        assert "5000 characters" in str(caught.value) and len(str(caught.value)) < 400
    with pytest.raises(CarnacError, match="is a folder, not a regular file"):
        model_path(str(tmp_path))
    with pytest.raises(CarnacError, match="neither a file nor a shipped model"):
        model_path(str(tmp_path / "missing.npz"))
    with pytest.raises(CarnacError, match="does not exist"):
        load(tmp_path / "missing.npz")


# --------------------------------------------------------------------------- hard links
def test_a_hard_link_at_games_jsonl_keeps_its_target_whole(finished, tmp_path):
    """Cutting a torn last line used to truncate the hard link's target, and new games were
    appended to it; now games.jsonl gets a copy of its own first."""
    out = copy_of(finished, tmp_path)
    data = (out / "games.jsonl").read_bytes()
    target = tmp_path / "precious.txt"
    target.write_bytes(data[: len(data) - 40])  # a torn last line, as after a kill
    (out / "games.jsonl").unlink()
    os.link(target, out / "games.jsonl")
    (out / "results.json").unlink()
    before = target.read_bytes()
    run_arena(AGENTS, out, **SETTINGS)
    assert target.read_bytes() == before  # neither cut nor appended to
    assert (out / "games.jsonl").read_bytes() == data and os.stat(out / "games.jsonl").st_nlink == 1


def test_appending_and_truncate_copy_a_hard_linked_file_first(tmp_path):
    target = tmp_path / "target"
    target.write_bytes(b"one\ntwo\n")
    linked = tmp_path / "linked"
    os.link(target, linked)
    _files.append_line(linked, "three")
    assert target.read_bytes() == b"one\ntwo\n" and linked.read_bytes() == b"one\ntwo\nthree\n"
    os.unlink(linked)
    os.link(target, linked)
    _files.truncate(linked, 4)
    assert target.read_bytes() == b"one\ntwo\n" and linked.read_bytes() == b"one\n"


def test_a_hard_link_at_the_lock_file_is_never_written(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    target = tmp_path / "precious.txt"
    target.write_bytes(b"keep me")
    os.link(target, out / _files.LOCK_NAME)
    with _files.lock_folder(out, "arena") as lock:
        assert lock.held
    assert target.read_bytes() == b"keep me"


# --------------------------------------------------------------------------- kill -9
def _children(pid: int) -> set[int]:
    try:
        return {int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()}
    except OSError:
        return set()


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has ended


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads the process tree from Linux's /proc")
def test_arena_workers_stop_when_the_arena_is_killed(tmp_path):
    """After kill -9 of an arena its workers used to play on (about 30 s); now each worker
    ends as soon as its parent is gone, mid-game."""
    marker = tmp_path / "acting"
    slow = f"_slow_agents.Sleeper:seconds=2:marker={marker}"
    tests = str(TESTS)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([tests, os.environ.get("PYTHONPATH", "")])}
    command = [sys.executable, "-m", "carnac_env.cli", "arena", "--board", "petit_menec", "--agents", f"random,{slow}"]
    command += ["--games", "4", "--workers", "2", "--out", str(tmp_path / "out"), "--no-progress"]
    process = subprocess.Popen(
        command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
    )
    try:
        deadline = time.monotonic() + 120
        while not marker.exists():  # a worker is in the middle of a game (each move takes 2 s)
            assert process.poll() is None, process.stderr.read()
            assert time.monotonic() < deadline, "no worker started a game"
            time.sleep(0.05)
        workers = _children(process.pid)
        assert workers
        process.send_signal(signal.SIGKILL)  # the arena only, as `kill -9 PID` does
        process.wait(timeout=30)
        deadline = time.monotonic() + 5  # a game has 10 s of moves left: without the fix they play on
        while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        left = [pid for pid in workers if _alive(pid)]
        assert not left, f"workers {left} outlived the killed arena"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.stderr.close()


# --------------------------------------------------------------------------- OpenSpiel
def test_an_edited_openspiel_state_string_is_refused():
    from _frameworks import require

    pyspiel = require("pyspiel", "the openspiel extra")
    import carnac_env.envs.openspiel  # noqa: F401  (registers python_carnac)

    game = pyspiel.load_game("python_carnac", {"board": "small"})
    state = game.new_initial_state()
    state.apply_action(state.legal_actions()[0])
    text = pyspiel.serialize_game_and_state(game, state)
    again = pyspiel.deserialize_game_and_state(text)[1]  # unedited: the same state, clones too
    assert again.history() == state.history() and again.clone().history() == state.history()
    assert len(again.observation_tensor(0)) == 5 * 8 * 9
    for old, new in (("board=small", "board=le_menec"), ("last_tilt=True", "last_tilt=False")):
        assert old in text
        with pytest.raises(RecordError, match="an edited state string"):
            pyspiel.deserialize_game_and_state(text.replace(old, new))


# --------------------------------------------------------------------------- notation
@pytest.mark.parametrize(
    "text",
    ["a\u0661 Rns", "a1\x00Rns", "a1 Rns\x00", "\x00decline", "\uff41\uff11 Rns", "a1\u00a0Rns", "tilt\u3000N",
     "a1\x1cRns", "decline\n", "\u0663", "a\u00b2 Rns"],
)  # fmt: skip
def test_the_notation_is_ascii_only(text):
    board = make_board("medium")
    with pytest.raises(NotationError, match=r"U\+[0-9A-F]{4}\) at position \d+ is not part of the notation"):
        parse_action(board, text, 0)


def test_the_notation_still_reads_what_it_read():
    board = make_board("medium")
    assert parse_action(board, "  C4rNS ", 0) == parse_action(board, "c4 Rns", 0)
    assert parse_action(board, "tilt\tnorth", 0) == parse_action(board, "tilt N", 0)
    assert parse_action(board, "12", 0) == 12
    with pytest.raises(NotationError, match="not part of the notation"):
        parse_square(board, "c\u0664")
    assert parse_square(board, " c4 ") == parse_square(board, "c4")


# --------------------------------------------------------------------------- train --eval-every 0
@pytest.mark.slow
def test_train_with_eval_every_0_names_no_best_model(tmp_path):
    from _frameworks import require

    require("torch", "the train extra")
    from _training import TINY

    args = ["--out", str(tmp_path), "--iterations", "1", "--no-progress", "--eval-every", "0"]
    for key, value in TINY.items():
        if key not in ("eval_every", "iterations"):
            args += [f"--{key.replace('_', '-')}", str(value)]
    code = f"import sys; from carnac_env.cli import main; sys.exit(main(['train', *{args!r}]))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "best.npz").exists()
    assert "best: none written (no evaluation has run" in done.stdout and "best.npz" not in done.stdout
