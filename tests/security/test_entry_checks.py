"""Issue 22 findings 8 and 12, and the CLI's one error style: the symmetry and notation
helpers check their arguments, booleans are never numbers or sizes, text from files is shown
with its bidi and zero-width characters escaped, and every CLI mistake reads
``carnac: error: ...``."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from _paths import TESTS

from carnac_env.arena.report import format_table
from carnac_env.core.boards import MAX_SIDE, make_board
from carnac_env.core.notation import action_to_text, parse_action, parse_square, square_name
from carnac_env.core.record import GameRecord
from carnac_env.core.symmetry import symmetries, symmetry, transform_action
from carnac_env.errors import CarnacError, NotationError
from carnac_env.render.ansi import printable

BOARD = make_board("small")


# --------------------------------------------------------------------------- finding 8
@pytest.mark.parametrize("size", [(3000, 3000), (MAX_SIDE + 1, 2), (True, 3), (3, False), (3.0, 3), (0, 3), (2,)])
def test_board_sizes_are_whole_numbers_up_to_max_side_and_refused_at_once(size: tuple) -> None:
    start = time.perf_counter()
    with pytest.raises(CarnacError, match=rf"whole numbers in 1\.\.{MAX_SIDE}"):
        symmetries(size)
    with pytest.raises(CarnacError, match=rf"whole numbers in 1\.\.{MAX_SIDE}"):
        symmetry(size, "identity")
    assert time.perf_counter() - start < 1.0  # refused before any table is built


def test_the_largest_board_size_still_works() -> None:
    flip = symmetry((MAX_SIDE, MAX_SIDE), "rot90")
    assert flip.inverse.action(flip.action(5)) == 5
    assert symmetries((np.int64(4), 4))[0] == "identity"


@pytest.mark.parametrize(
    "actions",
    [[1.0], [float("nan")], [True, False], ["3"], None, np.ones(BOARD.num_actions, dtype=bool), [[1], [1, 2]]],
)
def test_action_array_refuses_anything_but_integers(actions: object) -> None:
    with pytest.raises(CarnacError, match="actions must be an integer array"):
        symmetry(BOARD, "flip_ns").action_array(actions)


def test_action_array_keeps_its_behaviour_on_integers() -> None:
    flip = symmetry(BOARD, "flip_ew")
    actions = np.array([[0, 5], [BOARD.num_actions - 1, 7]], dtype=np.int32)
    assert flip.action_array(actions).tolist() == [[flip.action(int(a)) for a in row] for row in actions]
    assert flip.action_array([]).shape == (0,)


@pytest.mark.parametrize("transform", [["flip_ns"], None, 3, {"a": 1}])
def test_a_transform_that_is_not_a_name_is_refused(transform: object) -> None:
    with pytest.raises(CarnacError, match="unknown transform"):
        symmetry(BOARD, transform)  # type: ignore[arg-type]
    with pytest.raises(CarnacError, match="unknown transform"):
        transform_action(BOARD, 0, transform)  # type: ignore[arg-type]


@pytest.mark.parametrize("action", [1.0, "0", None, True, np.bool_(False), float("nan")])
def test_action_to_text_refuses_what_is_not_an_action(action: object) -> None:
    with pytest.raises(NotationError, match=r"must be a whole number in 0\.\."):
        action_to_text(BOARD, action, 0)  # type: ignore[arg-type]


@pytest.mark.parametrize("mover", [True, 1.0, "0", None, 2])
def test_a_mover_must_be_0_or_1_and_never_a_bool(mover: object) -> None:
    with pytest.raises(NotationError, match="must be 0 \\(Red\\) or 1 \\(White\\)"):
        action_to_text(BOARD, 0, mover)  # type: ignore[arg-type]
    with pytest.raises(NotationError, match="must be 0 \\(Red\\) or 1 \\(White\\)"):
        parse_action(BOARD, "decline", mover)  # type: ignore[arg-type]


@pytest.mark.parametrize("text", [None, 5, b"c4", ["c4"]])
def test_parse_square_refuses_what_is_not_text(text: object) -> None:
    with pytest.raises(NotationError, match="a square name must be a string"):
        parse_square(BOARD, text)  # type: ignore[arg-type]


def test_square_name_refuses_bad_squares_and_the_helpers_still_agree() -> None:
    for bad in (-1, BOARD.rows * BOARD.cols, True, 2.0):
        with pytest.raises(NotationError):
            square_name(BOARD, bad)  # type: ignore[arg-type]
    for square in range(BOARD.rows * BOARD.cols):
        assert parse_square(BOARD, square_name(BOARD, np.int64(square))) == square
    for action in range(BOARD.num_actions):
        for mover in (0, 1, np.int8(1)):
            assert parse_action(BOARD, action_to_text(BOARD, np.int64(action), mover), mover) == action


# --------------------------------------------------------------------------- finding 12
HIDDEN = ["\u202e", "\u202d", "\u2066", "\u2067", "\u2068", "\u2069", "\u200b", "\u200c", "\u200d", "\u200f", "\ufeff"]


@pytest.mark.parametrize("ch", [*HIDDEN, "\u2028", "\x1b", "\x9b", "\x00"])
def test_printable_escapes_bidi_zero_width_and_control_characters(ch: str) -> None:
    shown = printable(f"ab{ch}cd")
    assert ch not in shown and shown.startswith("ab\\") and shown.endswith("cd")
    assert shown.isprintable()


def test_printable_keeps_ordinary_text() -> None:
    assert printable("mcts:sims=200 é 中文 ü") == "mcts:sims=200 é 中文 ü"


def test_a_text_replay_escapes_names_from_the_file(tmp_path: Path) -> None:
    golden = TESTS / "golden" / "last_tilt_petit_menec.json"
    data = json.loads(golden.read_text())
    data["agents"] = ["evil\u202eredaeh", "zero\u200bwidth"]
    path = tmp_path / "g.json"
    path.write_text(json.dumps(data))
    done = subprocess.run(
        [sys.executable, "-m", "carnac_env.cli", "replay", str(path), "--all", "--no-color"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "\u202e" not in done.stdout and "\u200b" not in done.stdout
    assert "evil\\u202eredaeh" in done.stdout and "zero\\u200bwidth" in done.stdout


def test_tables_escape_agent_names() -> None:
    results = {
        "agents": ["a\u202eb", "c"],
        "pairs": [{"a": "a\u202eb", "b": "c", "wins_a": 1, "wins_b": 0, "draws": 0}],
        "standings": {k: {"games": 1, "wins": 0, "draws": 0, "losses": 0} for k in ("a\u202eb", "c")},
        "ratings": {k: {"elo": 0.0, "ci_low": 0.0, "ci_high": 0.0} for k in ("a\u202eb", "c")},
    }
    table = format_table(results)
    assert "\u202e" not in table and "a\\u202eb" in table


def test_mask_in_observation_and_window_are_flags_not_numbers() -> None:
    from carnac_env.envs.aec import raw_env
    from carnac_env.envs.gym import CarnacEnv

    for bad in (1, 0, "yes", None):
        with pytest.raises(CarnacError, match=r"mask_in_observation=.*expected True or False"):
            CarnacEnv(board="petit_menec", mask_in_observation=bad)
    for bad in (1, 0, "no"):
        with pytest.raises(CarnacError, match=r"window=.*expected None \(automatic\), True or False"):
            raw_env(board="petit_menec", window=bad)
    assert CarnacEnv(board="petit_menec", mask_in_observation=np.bool_(True)).mask_in_observation is True


def test_a_record_with_a_huge_number_is_a_record_error() -> None:
    golden = (TESTS / "golden" / "last_tilt_petit_menec.json").read_text().rstrip()
    text = golden[:-1] + ', "seed": ' + "9" * 5000 + "}"  # json.loads alone raises a plain ValueError
    with pytest.raises(CarnacError, match="numbers of a usual size"):
        GameRecord.from_json(text)


# --------------------------------------------------------------------------- one CLI error style
@pytest.mark.parametrize(
    "args",
    [
        ["arena", "--games", "x"],
        ["arena", "--seed", "1.5"],
        ["arena", "--bogus"],
        ["evaluate"],
        ["play", "--seat", "2"],
        ["replay", "--fps", "nan", "missing.json"],
        ["replay", "x.json", "--line", "0"],
        ["train", "--threads", "x", "--out", "o"],
        ["dance"],
    ],
)
def test_every_cli_mistake_is_one_carnac_error_line(tmp_path: Path, args: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "carnac_env.cli", *args], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("carnac: error: "), done.stderr


def test_a_bad_fps_is_refused_by_name(tmp_path: Path) -> None:
    pytest.importorskip("PIL")
    from carnac_env.render.animate import write_animation

    record = GameRecord.from_json((TESTS / "golden" / "last_tilt_petit_menec.json").read_text())
    for fps in (float("nan"), float("inf"), 0, -1, True):
        with pytest.raises(CarnacError, match=r"fps="):
            write_animation(record, tmp_path / "g.gif", fps=fps)
    assert not (tmp_path / "g.gif").exists()
