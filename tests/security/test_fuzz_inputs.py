"""Fuzzing the contract (hypothesis): a record, a records file or a command line is either
accepted or refused with the package's error (`carnac: error:` and exit 2 on the command
line), and a refusal changes nothing on disk. A few seconds in all."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout, suppress
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from carnac_env.arena import MAX_GAMES_PER_PAIR, MAX_SEED, MAX_WORKERS, ArenaSettings, run_arena
from carnac_env.arena.schedule import check_workers
from carnac_env.cli import main
from carnac_env.core.boards import make_board
from carnac_env.core.record import GameRecord
from carnac_env.errors import CarnacError, RecordError

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
BOARD = make_board("petit_menec")
GOOD = GameRecord.from_actions(BOARD, [0, BOARD.squares * 4 + 4, 4 * 14, BOARD.squares * 4 + 1]).to_dict()

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
FIELDS = ["format", "version", "board", "rules", "moves", "result", "agents"]


def accept_or_refuse_record(text: str | bytes) -> None:
    """The record contract: from_json and replay either work or raise RecordError."""
    try:
        record = GameRecord.from_json(text)
        record.replay()
    except RecordError:
        pass


@FUZZ
@given(st.binary(max_size=300))
def test_any_bytes(data: bytes) -> None:
    accept_or_refuse_record(data)


@FUZZ
@given(json_values)
def test_any_json_value(value: object) -> None:
    accept_or_refuse_record(json.dumps(value))


@FUZZ
@given(st.sampled_from(FIELDS), json_values, st.sampled_from(["replace", "delete", "nest"]))
def test_a_good_record_with_one_field_broken(field: str, value: object, how: str) -> None:
    data = json.loads(json.dumps(GOOD))
    if how == "replace":
        data[field] = value
    elif how == "delete":
        data.pop(field, None)
    else:
        data[field] = [[[[data.get(field), value]]]]
    accept_or_refuse_record(json.dumps(data))
    before = json.dumps(data)
    with suppress(RecordError):
        GameRecord.from_dict(data)
    assert json.dumps(data) == before  # the input is never changed


@FUZZ
@given(
    st.lists(st.sampled_from(["a1 Rns", "tilt N", "decline", "f6 Wew", "b2 rEW", "z9 Rns", "7", "", "  ", "tilt"])),
)
def test_any_move_list(moves: list[str]) -> None:
    accept_or_refuse_record(json.dumps({**GOOD, "moves": moves, "result": None}))


@FUZZ
@given(st.binary(max_size=400), st.one_of(st.none(), st.integers(-2, 4)))
def test_any_file_and_line(tmp_path: Path, data: bytes, line: int | None) -> None:
    path = tmp_path / "fuzz.jsonl"
    path.write_bytes(data)
    with suppress(RecordError):
        GameRecord.load(path, line=line).replay()
    assert path.read_bytes() == data


def run_cli(argv: list[str]) -> tuple[int, str]:
    """main() with its output captured; argparse's own refusals (SystemExit 2) included."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as stop:
            code = stop.code
    return code, err.getvalue()


@FUZZ
@given(
    st.binary(max_size=400), st.sampled_from([[], ["--line", "1"], ["--line", "2"], ["--line", "0"], ["--fps", "x"]])
)
def test_replay_any_file(tmp_path: Path, data: bytes, options: list[str]) -> None:
    path = tmp_path / "fuzz.json"
    path.write_bytes(data)
    code, err = run_cli(["replay", str(path), "--all", *options])
    assert code in (0, 2), err
    if code == 2:
        assert "error: " in err and "Traceback" not in err
    assert path.read_bytes() == data


@pytest.fixture(scope="module")
def arena_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("arena")
    run_arena(["random", "greedy"], out, board="petit_menec", games=2, seed=0, progress=False, echo=lambda _: None)
    return out


OPTION_VALUES = {
    "--board": ["petit_menec", "small", "huge", "", "custom"],
    "--agents": ["random,greedy", "greedy,random", "random", "random,bogus", ",,", "mcts:c=nan,random", "a.b,..:x"],
    "--games": ["2", "0", "-1", "1e3", "1" * 30, "²", "3"],
    "--seed": ["0", "-1", "1", str(2**63), "x", "٣"],
    "--workers": ["1", "2", "0", str(10**12), "two"],
}


@FUZZ
@given(st.dictionaries(st.sampled_from(sorted(OPTION_VALUES)), st.integers(0, 6)))
def test_arena_command_lines_never_change_a_finished_arena(arena_folder: Path, chosen: dict[str, int]) -> None:
    before = {p.name: p.read_bytes() for p in sorted(arena_folder.iterdir())}
    argv = ["arena", "--out", str(arena_folder), "--no-progress", "--board", "petit_menec", "--games", "2"]
    for option, index in chosen.items():
        values = OPTION_VALUES[option]
        argv += [option, values[index % len(values)]]
    code, err = run_cli(argv)
    assert code in (0, 2), err
    if code == 2:
        assert "error: " in err and "Traceback" not in err
    after = {p.name: p.read_bytes() for p in sorted(arena_folder.iterdir())}
    assert after == before  # refused, or resumed to the same bytes


@FUZZ
@given(
    st.one_of(st.integers(), st.booleans(), st.floats(), st.text(max_size=3), st.none()),
    st.sampled_from(["games", "seed", "workers"]),
)
def test_arena_settings_of_any_type(value: object, name: str) -> None:
    """A setting is refused with CarnacError, or is a whole number within its documented limit."""
    limits = {"games": (1, MAX_GAMES_PER_PAIR), "seed": (0, MAX_SEED), "workers": (1, MAX_WORKERS)}
    try:
        if name == "workers":
            checked = check_workers(value)
        else:
            settings_ = ArenaSettings.check(["random", "greedy"], "petit_menec", **{"games": 1, "seed": 0, name: value})
            checked = getattr(settings_, name)
    except CarnacError:
        return
    low, high = limits[name]
    assert type(checked) is int and low <= checked <= high and checked == value
