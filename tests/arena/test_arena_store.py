"""The arena's folder: settings kept with the games, every stored line checked, runs never mixed,
settings checked before anything is written, and SIGTERM stopping the workers."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _held import start_held

from carnac_env.arena import (
    MAX_ARENA_GAMES,
    MAX_GAMES_PER_PAIR,
    MAX_WORKERS,
    ArenaStore,
    run_arena,
    schedule,
)
from carnac_env.core.boards import make_board
from carnac_env.errors import CarnacError

AGENTS = ["random", "greedy"]
SETTINGS = {"board": "petit_menec", "games": 4, "seed": 3, "progress": False, "echo": lambda _: None}


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file of a folder and its bytes."""
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())} if folder.exists() else {}


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished arena (petit_menec, random vs greedy, 4 games)."""
    out = tmp_path_factory.mktemp("finished")
    run_arena(AGENTS, out, **SETTINGS)
    return out


def copy_of(finished: Path, tmp_path: Path) -> Path:
    out = tmp_path / "copy"
    out.mkdir()
    for name, data in snapshot(finished).items():
        (out / name).write_bytes(data)
    return out


def test_settings_keep_board_rules_agents_and_version(finished: Path) -> None:
    from carnac_env import __version__

    settings = json.loads((finished / "arena.json").read_text())
    assert settings == {
        "board": "petit_menec",
        "rules": make_board("petit_menec").rules(),
        "agents": AGENTS,
        "games_per_pair": 4,
        "seed": 3,
        "carnac_env": __version__,
    }
    for line in (finished / "games.jsonl").read_text().splitlines():
        record = json.loads(line)
        assert record["board"] == "petit_menec" and record["rules"] == settings["rules"]


def test_a_finished_arena_reruns_to_the_same_bytes(finished: Path, tmp_path: Path) -> None:
    out = copy_of(finished, tmp_path)
    before = snapshot(out)
    run_arena(AGENTS, out, **SETTINGS)
    assert snapshot(out) == before


def test_games_without_their_settings_are_refused(finished: Path, tmp_path: Path) -> None:
    """The issue's case: small-board games, arena.json removed, a medium arena into the same folder."""
    out = copy_of(finished, tmp_path)
    (out / "arena.json").unlink()
    before = snapshot(out)
    with pytest.raises(CarnacError, match=r"arena\.json is missing"):
        run_arena(AGENTS, out, **{**SETTINGS, "board": "medium"})
    with pytest.raises(CarnacError, match=r"arena\.json is missing"):
        run_arena(AGENTS, out, **SETTINGS)  # the same settings too: the games cannot be checked
    assert snapshot(out) == before


@pytest.mark.parametrize("text", [b"{not json", b"", b"\xff\xfe{\x00}\x00", b"[1, 2]", b"[" * 100000])
def test_a_corrupt_settings_file_is_an_error_never_rewritten(finished: Path, tmp_path: Path, text: bytes) -> None:
    out = copy_of(finished, tmp_path)
    (out / "arena.json").write_bytes(text)
    before = snapshot(out)
    with pytest.raises(CarnacError, match=r"arena\.json is not an arena's settings"):
        run_arena(AGENTS, out, **SETTINGS)
    assert snapshot(out) == before


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"board": "small"}, "board: 'petit_menec' there, 'small' now"),
        ({"board": make_board("petit_menec", last_tilt=False)}, "rules"),
        ({"seed": 4}, "seed: 3 there, 4 now"),
        ({"games": 5}, "games_per_pair"),
    ],
)
def test_other_settings_are_refused(finished: Path, tmp_path: Path, change: dict, words: str) -> None:
    out = copy_of(finished, tmp_path)
    before = snapshot(out)
    with pytest.raises(CarnacError, match="other settings") as caught:
        run_arena(AGENTS, out, **{**SETTINGS, **change})
    assert words in str(caught.value)
    assert snapshot(out) == before


def test_another_package_version_is_refused(finished: Path, tmp_path: Path) -> None:
    out = copy_of(finished, tmp_path)
    settings = json.loads((out / "arena.json").read_text())
    settings["carnac_env"] = "0.0.1"
    (out / "arena.json").write_text(json.dumps(settings, indent=2) + "\n")
    with pytest.raises(CarnacError, match=r"carnac_env: '0\.0\.1' there"):
        run_arena(AGENTS, out, **SETTINGS)


def _edit_line(out: Path, number: int, edit) -> None:
    lines = (out / "games.jsonl").read_text().splitlines()
    record = json.loads(lines[number - 1])
    edit(record)
    lines[number - 1] = json.dumps(record, separators=(",", ":"))
    (out / "games.jsonl").write_text("".join(line + "\n" for line in lines))


def _flip_winner(record: dict) -> None:
    winner = record["result"]["winner"]
    record["result"]["winner"] = 0 if winner is None else 1 - winner


@pytest.mark.parametrize(
    ("edit", "words"),
    [
        (_flip_winner, "differs from the replayed"),
        (lambda r: r["result"].update(scores=[0, 0]), "differs from the replayed"),
        (lambda r: r.update(result=None), "no result"),
        (lambda r: r.pop("result"), "no result"),
        (lambda r: r.update(moves=r["moves"][:-1]), "not over"),
        (lambda r: r.update(moves=["a1 Rns", "z9 Rns"]), "move 2"),
        (lambda r: r.update(board="small", rules=make_board("small").rules()), "on board 'small'"),
        (lambda r: r["rules"].update(last_tilt=False), "last_tilt"),
        (lambda r: r.update(agents=r["agents"][::-1]), "field 'agents'"),
        (lambda r: r.update(game=True), "field 'game' is True"),
        (lambda r: r.update(version=True), "version"),
        (lambda r: r.update(seats={}), "field 'seats'"),
    ],
)
def test_a_bad_stored_line_is_refused_with_its_number(finished: Path, tmp_path: Path, edit, words: str) -> None:
    out = copy_of(finished, tmp_path)
    _edit_line(out, 2, edit)
    before = snapshot(out)
    with pytest.raises(CarnacError, match=r"games\.jsonl line 2") as caught:
        run_arena(AGENTS, out, **SETTINGS)
    assert words in str(caught.value)
    assert snapshot(out) == before  # nothing played, nothing rewritten


def test_a_bad_last_line_with_a_newline_is_refused_too(finished: Path, tmp_path: Path) -> None:
    out = copy_of(finished, tmp_path)
    _edit_line(out, 4, _flip_winner)
    with pytest.raises(CarnacError, match=r"games\.jsonl line 4"):
        run_arena(AGENTS, out, **SETTINGS)


def test_a_non_utf8_line_is_refused_with_its_number(finished: Path, tmp_path: Path) -> None:
    out = copy_of(finished, tmp_path)
    lines = (out / "games.jsonl").read_bytes().splitlines(keepends=True)
    lines[1] = lines[1].replace(b'"random"', b'"r\xe9ndom"', 1)
    (out / "games.jsonl").write_bytes(b"".join(lines))
    before = snapshot(out)
    with pytest.raises(CarnacError, match=r"games\.jsonl line 2 is not UTF-8"):
        run_arena(AGENTS, out, **SETTINGS)
    assert snapshot(out) == before


def test_a_torn_last_line_is_still_dropped_and_replayed(finished: Path, tmp_path: Path) -> None:
    out = copy_of(finished, tmp_path)
    data = (finished / "games.jsonl").read_bytes()
    (out / "games.jsonl").write_bytes(data[: len(data) - 40])
    (out / "results.json").unlink()
    run_arena(AGENTS, out, **SETTINGS)
    assert snapshot(out) == snapshot(finished)


def test_load_games_checks_records_against_the_board(finished: Path) -> None:
    store = ArenaStore(finished)
    expected = {g.key: g for g in schedule(AGENTS, 4, 3)}
    assert len(store.load_games(expected, make_board("petit_menec"))) == 4
    with pytest.raises(CarnacError, match="on board 'petit_menec'"):
        store.load_games(expected, make_board("small"))


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"seed": -1}, "seed must be at least 0, got -1"),
        ({"seed": 2**63}, "at most"),
        ({"seed": True}, "whole number"),
        ({"seed": 1.5}, "whole number"),
        ({"games": 10**23}, f"at most {MAX_GAMES_PER_PAIR}"),
        ({"games": "4"}, "whole number"),
        ({"workers": 10**9}, f"at most {MAX_WORKERS}"),
        ({"workers": 0}, "at least 1"),
        ({"agents": "random,greedy"}, "list of agent spec strings"),
        ({"agents": [f"mcts:sims={n}" for n in range(1, 50)], "games": 1000}, f"at most {MAX_ARENA_GAMES}"),
    ],
)
def test_bad_settings_are_refused_before_anything_is_written(tmp_path: Path, change: dict, words: str) -> None:
    kwargs = {"agents": AGENTS, "out": tmp_path / "new", **SETTINGS, **change}
    with pytest.raises(CarnacError) as caught:
        run_arena(**kwargs)
    assert words in str(caught.value)
    assert not (tmp_path / "new").exists()


def test_an_out_that_is_not_a_folder_is_refused(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.write_text("x")
    with pytest.raises(CarnacError, match="not a folder"):
        run_arena(AGENTS, plain, **SETTINGS)
    with pytest.raises(CarnacError, match="cannot create the output folder"):
        run_arena(AGENTS, plain / "below", **SETTINGS)
    assert plain.read_text() == "x"


def test_sigterm_stops_the_workers_and_keeps_finished_games(tmp_path: Path) -> None:
    out = tmp_path / "out"
    command = [
        *(sys.executable, "-m", "carnac_env.cli", "arena", "--board", "petit_menec"),
        *("--agents", "random,mcts:sims=60", "--games", "40", "--workers", "2", "--out", str(out), "--no-progress"),
    ]
    # the arena stores 2 games, then waits (tests/_held.py): SIGTERM always lands mid-run
    process = start_held(command, 2, tmp_path / "held", stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    games = out / "games.jsonl"
    process.send_signal(signal.SIGTERM)  # the main process only, as `kill PID` does
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 143, stderr
    assert b"Traceback" not in stderr
    # the workers are gone too: nothing is left in the arena's process group
    deadline = time.monotonic() + 30
    alive = True
    while alive and time.monotonic() < deadline:
        try:
            os.killpg(process.pid, 0)
            time.sleep(0.05)
        except ProcessLookupError:
            alive = False
    assert not alive, "worker processes outlived the arena"
    lines = games.read_bytes()
    assert lines.endswith(b"\n")
    expected = {g.key: g for g in schedule(["random", "mcts:sims=60"], 40, 0)}
    kept = ArenaStore(out).load_games(expected, make_board("petit_menec"))
    assert len(kept) == 2
    assert not (out / "results.json").exists()


def test_a_sigterm_whose_exception_was_lost_still_stops_the_loop_at_its_next_step() -> None:
    """Python drops an exception raised in a finalizer or a weakref callback ("Exception ignored
    in ..."), and SIGTERM's can land there: the handler also records the signal, which
    check_terminated turns into ArenaTerminated between a loop's steps (seen: a training run that
    went on after SIGTERM, its exception printed and dropped inside a WeakSet callback)."""
    seen: list = []
    outer, sys.unraisablehook = sys.unraisablehook, seen.append
    try:
        _lost_sigterm_stops(seen)
    finally:
        sys.unraisablehook = outer


def _lost_sigterm_stops(seen: list) -> None:
    import weakref

    from carnac_env.arena.runner import ArenaTerminated, check_terminated, sigterm_as_interrupt

    class Thing:
        pass

    with sigterm_as_interrupt():
        check_terminated()  # nothing yet
        thing = Thing()
        # the signal arrives while a weakref callback runs, and its exception is dropped there
        ref = weakref.ref(thing, lambda _: os.kill(os.getpid(), signal.SIGTERM))
        del thing
        assert ref() is None  # the loop would go on here
        with sigterm_as_interrupt():  # a block nested in this one keeps the record
            pass
        with pytest.raises(ArenaTerminated):
            check_terminated()
    check_terminated()  # the outermost block's end forgets it
    assert seen == []  # the dropped ArenaTerminated printed nothing (the record stands for it)
    weakref.ref(Thing(), lambda _: 1 / 0)  # outside the block, another dropped exception is reported
    assert [type(u.exc_value) for u in seen] == [ZeroDivisionError]
