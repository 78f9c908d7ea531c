"""Hostile record files and command lines: every one a RecordError (or `carnac: error:`, exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from carnac_env.cli import main
from carnac_env.core.boards import make_board
from carnac_env.core.record import MAX_MOVE_CHARS, MAX_RECORD_BYTES, GameRecord
from carnac_env.errors import RecordError

GOOD = GameRecord.from_actions(make_board("petit_menec"), [0, 36 * 4 + 4, 4 * 14]).to_json()


def carnac(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().err


BAD_TEXTS = {
    "utf16": GOOD.encode("utf-16"),
    "latin1": GOOD.replace("petit_menec", "petit_m\u00e9nec").encode("latin-1"),
    "nested": b"[" * 100_000 + b"]" * 100_000,
    "nested_moves": ('{"board": "small", "moves": ' + "[" * 50_000 + "]" * 50_000 + "}").encode(),
    "long_move": json.dumps({"board": "small", "moves": ["1" * 5000]}).encode(),
    "superscript_move": json.dumps({"board": "small", "moves": ["\u00b2"]}).encode(),
    "escape_move": json.dumps({"board": "small", "moves": ["a1 Rns\x1b[31m"]}).encode(),
    "version_true": GOOD.replace('"version":1', '"version":true').encode(),
    "too_many_moves": json.dumps({"board": "petit_menec", "moves": ["decline"] * 29}).encode(),
    "board_list": json.dumps({"board": ["small"], "moves": []}).encode(),
    "huge": b" " * (MAX_RECORD_BYTES + 1) + GOOD.encode(),
}


@pytest.mark.parametrize("name", sorted(BAD_TEXTS))
def test_bad_record_texts_raise_record_error(tmp_path: Path, name: str) -> None:
    text = BAD_TEXTS[name]
    with pytest.raises(RecordError):
        GameRecord.from_json(text)
    path = tmp_path / "bad.json"
    path.write_bytes(text)
    with pytest.raises(RecordError, match=r"bad\.json"):
        GameRecord.load(path)
    with pytest.raises(RecordError, match=r"bad\.json"):
        GameRecord.load(path, line=1)


def test_move_text_limit_names_the_move() -> None:
    with pytest.raises(RecordError, match=f"move 1 .*at most {MAX_MOVE_CHARS} characters"):
        GameRecord.from_json(json.dumps({"board": "small", "moves": ["1" * 5000]}))


def test_version_must_be_the_number_1() -> None:
    assert GameRecord.from_json(GOOD).replay().is_over is False
    for version in ("true", "1.0", '"1"', "2"):
        with pytest.raises(RecordError, match="version"):
            GameRecord.from_json(GOOD.replace('"version":1', f'"version":{version}'))


def test_folders_devices_and_line_numbers(tmp_path: Path) -> None:
    with pytest.raises(RecordError, match=r"cannot read .*: it is a folder"):
        GameRecord.load(tmp_path)
    with pytest.raises(RecordError, match="it is a character device, not a regular file"):  # never read
        GameRecord.load("/dev/zero")
    with pytest.raises(RecordError, match="it is a character device, not a regular file"):
        GameRecord.load("/dev/zero", line=1)
    big = tmp_path / "big.json"
    big.write_bytes(b" " * (MAX_RECORD_BYTES + 10))
    with pytest.raises(RecordError, match="larger than a game record"):
        GameRecord.load(big)
    path = tmp_path / "games.jsonl"
    path.write_text(GOOD + "\n\n" + GOOD + "\n")
    assert GameRecord.load(path, line=2).moves == GameRecord.from_json(GOOD).moves
    for line in (0, 3, -1):
        with pytest.raises(RecordError, match=f"line {line} does not exist"):
            GameRecord.load(path, line=line)


def test_a_non_utf8_line_of_a_jsonl_file(tmp_path: Path) -> None:
    path = tmp_path / "games.jsonl"
    path.write_bytes(GOOD.encode() + b"\n" + b'{"board": "sm\xe9ll"}\n')
    assert GameRecord.load(path, line=1).board.name == "petit_menec"
    with pytest.raises(RecordError, match="not UTF-8"):
        GameRecord.load(path, line=2)


@pytest.mark.parametrize("name", sorted(BAD_TEXTS))
def test_replay_of_a_bad_record_is_a_clean_cli_error(capsys, tmp_path: Path, name: str) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(BAD_TEXTS[name])
    code, err = carnac(capsys, "replay", str(path), "--all")
    assert code == 2 and err.startswith("carnac: error: ") and "bad.json" in err


@pytest.mark.parametrize("target", [".", "/dev/zero"])
def test_replay_of_a_folder_or_device(capsys, target: str) -> None:
    code, err = carnac(capsys, "replay", target, "--all")
    assert code == 2 and err.startswith("carnac: error: ")


def test_replay_of_a_non_utf8_line_in_games_jsonl(capsys, tmp_path: Path) -> None:
    path = tmp_path / "games.jsonl"
    path.write_bytes(b'{"board": "sm\xe9ll"}\n')
    code, err = carnac(capsys, "replay", str(path), "--all")
    assert code == 2 and err.startswith("carnac: error: ") and "not UTF-8" in err


@pytest.mark.parametrize(
    ("options", "words"),
    [
        (["--seed", "-1"], "seed must be at least 0, got -1"),
        (["--seed", str(2**64)], "seed must be at most"),
        (["--games", str(10**23)], "games per pair must be at most"),
        (["--workers", str(10**9)], "workers must be at most"),
        (["--out", "{file}"], "is not a folder"),
        (["--out", "{file}/below"], "cannot create the output folder"),
    ],
)
def test_arena_settings_are_cli_errors_before_any_game(capsys, tmp_path: Path, options: list[str], words: str) -> None:
    plain = tmp_path / "plain"
    plain.write_text("x")
    options = [o.replace("{file}", str(plain)) for o in options]
    if "--out" not in options:
        options += ["--out", str(tmp_path / "out")]
    code, err = carnac(
        capsys, "arena", "--board", "petit_menec", "--agents", "random,greedy", "--no-progress", *options
    )
    assert code == 2 and err.startswith("carnac: error: ") and words in err, err
    assert not (tmp_path / "out").exists()
    assert plain.read_text() == "x"


def test_arena_resume_over_a_non_utf8_line_is_a_cli_error(capsys, tmp_path: Path) -> None:
    out = tmp_path / "out"
    argv = ["arena", "--board", "petit_menec", "--agents", "random,greedy", "--games", "2", "--workers", "1"]
    argv += ["--out", str(out), "--no-progress"]
    assert carnac(capsys, *argv)[0] == 0
    data = (out / "games.jsonl").read_bytes()
    (out / "games.jsonl").write_bytes(b"\xff" + data)
    code, err = carnac(capsys, *argv)
    assert code == 2 and err.startswith("carnac: error: ") and "line 1 is not UTF-8" in err
