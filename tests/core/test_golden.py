"""Golden games: recorded games replayed through the AEC env and compared with their stored
playthroughs (board, agent, legal moves and move for every decision, and the result).

If a comparison fails, read the diff: a change in the rules, the notation, the mask or the
renderer shows up there. Rebuild the files with ``python tests/golden/regenerate.py`` only
once a human has checked that every difference is intended.
"""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest
from _paths import TESTS
from _scripts import load_script

from carnac_env.core.record import GameRecord

GOLDEN = TESTS / "golden"
regenerate = load_script("tests/golden/regenerate.py")

RECORDS = sorted(GOLDEN.glob("*.json"))


def test_the_golden_games_are_there() -> None:
    assert {p.stem for p in RECORDS} >= {"declines_medium", "last_tilt_petit_menec", "full_board_small"}


@pytest.mark.parametrize("path", RECORDS, ids=[p.stem for p in RECORDS])
def test_playthrough_matches(path: Path) -> None:
    record = GameRecord.load(path)
    expected = regenerate.playthrough_path(path).read_text(encoding="utf-8")
    actual = regenerate.playthrough(record)
    if actual != expected:
        diff = "\n".join(
            list(
                difflib.unified_diff(
                    expected.splitlines(), actual.splitlines(), f"stored {path.stem}", "replayed now", lineterm=""
                )
            )[:80]
        )
        pytest.fail(f"the replay of {path.name} differs from its stored playthrough:\n{diff}", pytrace=False)


@pytest.mark.parametrize("path", RECORDS, ids=[p.stem for p in RECORDS])
def test_record_replays_to_its_result(path: Path) -> None:
    record = GameRecord.load(path)
    assert record.result is not None
    state = record.replay()  # raises if the stored result differs
    assert state.is_over and state.result() == record.result
    assert GameRecord.from_actions(record.board, record.actions(), record.meta) == record


def _load(name: str) -> GameRecord:
    return GameRecord.load(GOLDEN / f"{name}.json")


def test_declines_game_has_repeated_declines() -> None:
    moves = _load("declines_medium").moves
    runs = [i for i in range(len(moves) - 4) if moves[i + 1] == moves[i + 3] == "decline"]
    assert runs, "no two declines of consecutive placements"
    # White declines three placements in a row at the start: Red placed each of them.
    assert moves[1] == moves[3] == moves[5] == "decline"
    assert moves.count("decline") >= 6


def test_last_tilt_game_ends_with_a_tilt_of_the_last_megalith() -> None:
    record = _load("last_tilt_petit_menec")
    assert record.moves[-1].startswith("tilt")
    state = record.replay()
    assert state.supply == 0
    placements = [m for m in record.moves if m not in ("decline",) and not m.startswith("tilt")]
    assert len(placements) == 14
    # Checked by hand from the final position in the playthrough: White's groups b1-c1-c2-d2-b3-c3
    # (6) and c5-d5-d6-e6 (4); Red's only group of 3 or more is e3-e4-e5. White wins on count.
    assert record.result.dolmens == ((3,), (6, 4))
    assert record.result.winner == 1 and record.result.scores == (103, 206)


def test_full_board_game_ends_with_megaliths_left() -> None:
    record = _load("full_board_small")
    state = record.replay()
    assert state.empty == 0 and state.supply == 3
    assert not record.moves[-1].startswith("tilt") and record.moves[-1] != "decline"
    # Checked by hand: red lying b-c columns (10) + red standing column d (5) = 15; white
    # lying e-f columns (10) + white g-h pairs in rows 2 and 4 (4) = 14, and white column a
    # (5), cut off from the rest by red column b. Two dolmens beat one, however large.
    assert record.result.dolmens == ((15,), (14, 5))
    assert record.result.winner == 1 and record.result.scores == (115, 214)
