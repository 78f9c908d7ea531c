"""`carnac play` and `carnac replay` as a person meets them: bad input asked again, Ctrl-C and
an unwritable --save, refusals in player words, the running score, wrapped status lines,
colours readable on light terminals, and replays that cannot drive the terminal."""

from __future__ import annotations

import argparse
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from carnac_env.cli import build_parser, cmd_play
from carnac_env.core.boards import make_board
from carnac_env.core.game import GameState
from carnac_env.core.notation import parse_action
from carnac_env.core.record import GameRecord
from carnac_env.render.ansi import cannot_tilt_note, printable, refusal, render_text, status_lines


def carnac(*args: str, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "carnac_env.cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NO_COLOR": "1"},
    )


def test_default_board_is_medium():
    assert build_parser().parse_args(["play"]).board == "medium"


def test_odd_numbers_are_asked_again_not_a_traceback(tmp_path: Path):
    save = tmp_path / "g.json"
    script = "²\n" + "9" * 5000 + "\n٣\nc3 Rns\nquit\n"
    done = carnac("play", "--board", "small", "--opponent", "random", "--save", str(save), stdin=script)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout.count("Not a move:") == 3
    assert GameRecord.load(save).moves[0] == "c3 Rns"  # the game went on after the bad lines


def test_the_hint_for_a_bad_move_is_printed_whole(tmp_path: Path):
    done = carnac(
        "play", "--board", "small", "--opponent", "random", "--save", str(tmp_path / "g.json"), stdin="xyz\nquit\n"
    )
    said = " ".join(done.stdout.split("Not a move:")[1].split())  # the hint, its wrapped lines joined
    assert "'tilt N' (N, E, S or W) or 'decline'. Type 'moves' to list the legal moves." in said
    assert "...." not in said


def test_refusals_speak_of_players_and_moves(tmp_path: Path):
    done = carnac(
        "play", "--board", "small", "--opponent", "random", "--save", str(tmp_path / "g.json"), stdin="tilt S\nquit\n"
    )
    assert "Red cannot tilt south: there is no megalith to tilt: Red must place" in done.stdout
    assert "player_0" not in done.stdout.split("Red (you) >")[1]
    state = GameState("small")
    state.apply(parse_action(state.board, "a1 Rns", 0))  # in the corner: no tilt north or west
    why = refusal(state, parse_action(state.board, "tilt N", 1))
    assert why.startswith("White cannot tilt north: a megalith on a1 tilted north would leave the board")
    assert refusal(state, parse_action(state.board, "decline", 1)) is None


class Interrupting(io.StringIO):
    """Input that is interrupted (as by Ctrl-C) once its lines run out."""

    def readline(self, *args: object) -> str:
        line = super().readline(*args)
        if not line:
            raise KeyboardInterrupt
        return line


def play_args(save: Path, **kw: object) -> argparse.Namespace:
    return build_parser().parse_args(
        ["play", "--board", "small", "--opponent", "random", "--save", str(save), "--no-color"]
        + [f"--{k}={v}" for k, v in kw.items()]
    )


def test_ctrl_c_saves_the_game_so_far(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    save = tmp_path / "interrupted.json"
    status = cmd_play(play_args(save), stdin=Interrupting("c3 Rns\n"))
    out = capsys.readouterr().out
    assert status == 130
    assert f"record of the game so far saved to {save}" in out
    record = GameRecord.load(save)
    assert record.moves[0] == "c3 Rns" and record.result is None


def test_unwritable_save_is_refused_before_the_game(tmp_path: Path):
    missing = tmp_path / "no" / "such" / "g.json"
    done = carnac("play", "--board", "small", "--opponent", "random", "--save", str(missing), stdin="c3 Rns\n")
    assert done.returncode == 2
    assert done.stderr.startswith("carnac: error: --save") and "does not exist" in done.stderr
    assert "You play" not in done.stdout
    done = carnac("play", "--board", "small", "--save", str(tmp_path), stdin="")
    assert done.returncode == 2 and "folder" in done.stderr


def test_a_placement_that_cannot_tilt_is_announced():
    board = make_board("custom", rows=1, cols=2, megaliths=2, min_dolmen=1)
    before = GameState(board)
    after = before.copy()
    after.apply(0)
    assert cannot_tilt_note(before, 0, after) == (
        "The megalith on a1 cannot be tilted (no room on any side): White places next."
    )
    state = GameState("small")
    tiltable = state.copy()
    tiltable.apply(4 * 18)
    assert cannot_tilt_note(state, 4 * 18, tiltable) is None


def test_status_shows_the_running_score_and_wraps_at_words():
    state = GameState.from_diagram("petit_menec", ["RRR...", "......", "....W.", "......", "......", "......"])
    lines = status_lines(state, width=40)
    assert any(line.startswith("Dolmens now: Red 1 (3), White 0: Red") for line in lines)
    state = GameState("medium")
    state.apply(parse_action(state.board, "e4 Rns", 0))  # four tilts: a long line of options
    words = set(" ".join(status_lines(state, width=None)).split())
    for width in (40, 60, 110):
        wrapped = status_lines(state, width=width)
        assert all(len(line) <= width for line in wrapped)
        assert set(" ".join(wrapped).split()) == words  # no word broken in two


def test_white_is_readable_on_light_terminals():
    state = GameState.from_diagram("petit_menec", ["RW....", "......", "......", "......", "......", "......"])
    text = render_text(state, color=True)
    assert "\x1b[1;97m" not in text  # bright white letters vanish on a white background
    assert "\x1b[1;30;107mW" in text  # black on white instead


def test_replay_escapes_control_characters_of_the_record(tmp_path: Path):
    state = GameState("petit_menec")
    state.apply(parse_action(state.board, "c3 Rns", 0))
    record = GameRecord.from_actions(state.board, [parse_action(state.board, "c3 Rns", 0)])
    record.meta["agents"] = ["\x1b[2J\x1b[31mevil", "b\x07"]
    path = tmp_path / "r.json"
    record.save(path)
    done = carnac("replay", str(path), "--all", "--no-color")
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout and "\x07" not in done.stdout
    assert "\\x1b[2J\\x1b[31mevil" in done.stdout
    assert printable("ok\x9b") == "ok\\x9b"


def test_replay_gif_into_a_missing_folder_is_a_clean_error(tmp_path: Path):
    record = GameRecord.from_actions(make_board("petit_menec"), [4 * 14])
    path = tmp_path / "r.json"
    record.save(path)
    done = carnac("replay", str(path), "--gif", str(tmp_path / "missing" / "r.gif"))
    assert done.returncode == 2
    assert done.stderr.startswith("carnac: error:") and "does not exist" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("text", ["²", "٣", "9" * 5000, "0" * 12])
def test_notation_refuses_odd_numbers_with_the_package_error(text: str):
    from carnac_env.errors import CarnacError

    with pytest.raises(CarnacError, match=r"action|digits"):
        parse_action(make_board("small"), text, 0)
