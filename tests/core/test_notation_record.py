"""Move notation (square names, placements, tilts, declines) and game records."""

from __future__ import annotations

import json

import pytest

from carnac_env.core import BOARDS, GameState, make_board
from carnac_env.core.notation import action_to_text, parse_action, parse_square, square_name
from carnac_env.core.record import GameRecord
from carnac_env.errors import CarnacError, NotationError, RecordError

MEDIUM = BOARDS["medium"]
BASE = 7 * 10 * 4  # first tilt action on the medium board


# --------------------------------------------------------------------------- round trips
@pytest.mark.parametrize("name", sorted(BOARDS))
def test_every_action_round_trips_for_both_movers(name: str) -> None:
    board = BOARDS[name]
    for mover in (0, 1):
        texts = set()
        for action in range(board.num_actions):
            text = action_to_text(board, action, mover)
            assert parse_action(board, text, mover) == action, (name, mover, action, text)
            texts.add(text)
        assert len(texts) == board.num_actions  # no two actions share a text


def test_round_trip_on_a_wide_custom_board() -> None:
    board = make_board("custom", rows=2, cols=30)
    for mover in (0, 1):
        for action in range(board.num_actions):
            assert parse_action(board, action_to_text(board, action, mover), mover) == action


# --------------------------------------------------------------------------- squares
def test_a1_is_the_north_west_corner() -> None:
    assert square_name(MEDIUM, 0) == "a1"
    assert parse_square(MEDIUM, "a1") == 0
    assert square_name(MEDIUM, 9) == "j1"  # north-east
    assert square_name(MEDIUM, 10) == "a2"  # one row south of a1
    assert square_name(MEDIUM, 69) == "j7"  # south-east
    assert parse_square(MEDIUM, "c4") == 3 * 10 + 2


def test_multi_letter_columns_on_a_30_column_board() -> None:
    board = make_board("custom", rows=3, cols=30)
    assert [square_name(board, c) for c in (0, 25, 26, 27, 29)] == ["a1", "z1", "aa1", "ab1", "ad1"]
    assert parse_square(board, "aa3") == 2 * 30 + 26
    assert parse_square(board, "AD2") == 30 + 29
    names = {square_name(board, s) for s in range(board.squares)}
    assert len(names) == board.squares


def test_square_off_the_board() -> None:
    with pytest.raises(NotationError) as info:
        parse_square(MEDIUM, "k1")
    assert "'k1'" in str(info.value) and "7 x 10" in str(info.value)
    with pytest.raises(NotationError, match="8"):
        parse_square(MEDIUM, "a8")
    with pytest.raises(NotationError, match="not a square"):
        parse_square(MEDIUM, "4c")


# --------------------------------------------------------------------------- placements and colours
def test_placement_text_uses_absolute_colours() -> None:
    c4 = (3 * 10 + 2) * 4
    # Red (mover 0): o=0 own colour red on top, N/S faces red.
    assert action_to_text(MEDIUM, c4 + 0, 0) == "c4 Rns"
    assert action_to_text(MEDIUM, c4 + 1, 0) == "c4 Wns"
    assert action_to_text(MEDIUM, c4 + 2, 0) == "c4 Rew"
    assert action_to_text(MEDIUM, c4 + 3, 0) == "c4 Wew"
    # White (mover 1): bit 0 clear means White's own colour on top.
    assert action_to_text(MEDIUM, c4 + 0, 1) == "c4 Wns"
    assert action_to_text(MEDIUM, c4 + 1, 1) == "c4 Rns"
    assert action_to_text(MEDIUM, c4 + 2, 1) == "c4 Wew"
    assert action_to_text(MEDIUM, c4 + 3, 1) == "c4 Rew"


def test_placement_text_matches_what_the_board_shows() -> None:
    """'c4 Rns' means red on top and red after a tilt north or south, for either mover."""
    for mover in (0, 1):
        for text, top, ns in (("c4 Rns", 1, 1), ("c4 Rew", 1, 2), ("c4 Wns", 2, 2), ("c4 Wew", 2, 1)):
            state = GameState.from_diagram("medium", ["." * 10] * 7, to_act=mover)
            state.apply(parse_action(MEDIUM, text, mover))
            square = 3 * 10 + 2
            assert state.cells[square] == top
            targets = state.tilt_targets()
            assert targets[0][2] == targets[2][2] == ns
            assert targets[1][2] == targets[3][2] == 3 - ns


def test_tilts_and_decline() -> None:
    for mover in (0, 1):
        assert [action_to_text(MEDIUM, BASE + d, mover) for d in range(5)] == [
            "tilt N",
            "tilt E",
            "tilt S",
            "tilt W",
            "decline",
        ]


# --------------------------------------------------------------------------- leniency
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("C4 RNS", (3 * 10 + 2) * 4),
        ("  c4   rns ", (3 * 10 + 2) * 4),
        ("c4Rns", (3 * 10 + 2) * 4),
        ("c4 Wew", (3 * 10 + 2) * 4 + 3),
        ("tilt north", BASE),
        ("Tilt East", BASE + 1),
        ("TILT  s", BASE + 2),
        ("tilt west", BASE + 3),
        ("tiltw", BASE + 3),
        ("Decline", BASE + 4),
        (" DECLINE ", BASE + 4),
        ("17", 17),
    ],
)
def test_parser_leniency(text: str, expected: int) -> None:
    assert parse_action(MEDIUM, text, 0) == expected


# --------------------------------------------------------------------------- malformed
@pytest.mark.parametrize(
    ("text", "fragments"),
    [
        ("", ["''", "expected"]),
        ("hello", ["'hello'", "c4 Rns", "tilt N", "decline"]),
        ("c4", ["'c4'", "colour", "c4 Rns"]),
        ("c4 Rxx", ["'c4 Rxx'", "expected"]),
        ("c4 Gns", ["'c4 Gns'", "expected"]),
        ("tilt up", ["'tilt up'", "expected"]),
        ("tilt", ["'tilt'", "expected"]),
        ("k1 Rns", ["'k1 Rns'", "not on the 7 x 10 board"]),
        ("a8 Wew", ["'a8 Wew'", "not on"]),
        ("a0 Rns", ["'a0 Rns'", "not on"]),
        ("285", ["'285'", "0..284"]),
    ],
)
def test_malformed_move_strings(text: str, fragments: list[str]) -> None:
    with pytest.raises(NotationError) as info:
        parse_action(MEDIUM, text, 0)
    for fragment in fragments:
        assert fragment in str(info.value), (fragment, str(info.value))


@pytest.mark.parametrize("bad", [None, 5, b"c4 Rns"])
def test_non_string_move(bad: object) -> None:
    with pytest.raises(NotationError, match="string"):
        parse_action(MEDIUM, bad, 0)  # type: ignore[arg-type]


def test_bad_mover_and_action() -> None:
    with pytest.raises(NotationError, match="mover"):
        parse_action(MEDIUM, "c4 Rns", 2)
    with pytest.raises(NotationError, match="mover"):
        action_to_text(MEDIUM, 0, -1)
    with pytest.raises(NotationError, match="285"):
        action_to_text(MEDIUM, 285, 0)
    with pytest.raises(NotationError, match="-1"):
        action_to_text(MEDIUM, -1, 0)


# --------------------------------------------------------------------------- records
MOVES = ["c4 Rns", "tilt N", "e5 Wew", "decline", "e6 Wns", "tilt E", "a1 Rew"]


def _finished_record() -> GameRecord:
    """A full game on petit_menec: Red places, White always declines, placements in order."""
    state = GameState("petit_menec")
    actions = []
    while not state.is_over:
        legal = state.legal_actions()
        action = legal[-1] if state.phase == 1 else legal[(len(actions) * 7) % len(legal)]
        actions.append(action)
        state.apply(action)
    return GameRecord.from_actions(state.board, actions, {"agents": ["random", "random"], "seed": 3})


def test_record_json_round_trip_and_replay() -> None:
    record = _finished_record()
    assert record.result is not None
    text = record.to_json()
    assert "\n" not in text
    again = GameRecord.from_json(text)
    assert again == record
    assert again.meta == {"agents": ["random", "random"], "seed": 3}
    data = json.loads(text)
    assert data["agents"] == ["random", "random"] and data["seed"] == 3  # meta at top level
    assert data["board"] == "petit_menec" and data["moves"] == record.moves
    final = again.replay()
    assert final.is_over and final.result() == record.result
    state = GameState("petit_menec")
    for action in again.actions():
        state.apply(action)
    assert state == final


def test_unfinished_record() -> None:
    record = GameRecord(MEDIUM, list(MOVES))
    state = record.replay()
    assert not state.is_over and state.supply == 28 - 4
    data = json.loads(record.to_json())
    assert data["result"] is None
    assert GameRecord.from_json(record.to_json()).replay() == state


def test_record_from_actions_uses_notation() -> None:
    state = GameState("medium")
    actions = []
    for text in MOVES:
        action = parse_action(MEDIUM, text, state.to_act)
        actions.append(action)
        state.apply(action)
    record = GameRecord.from_actions(MEDIUM, actions)
    assert record.moves == MOVES
    assert record.result is None


def test_record_with_custom_rules(tmp_path) -> None:
    board = make_board("custom", rows=2, cols=2, megaliths=3, last_tilt=False)
    record = GameRecord(board, ["a1 Rns", "b1 Wns", "a2 Rns"])
    state = record.replay()
    assert state.is_over
    record.result = state.result()
    path = tmp_path / "game.json"
    record.save(path)
    loaded = GameRecord.load(path)
    assert loaded.board == board and loaded.board.last_tilt is False
    assert loaded.replay() == state
    lines = tmp_path / "games.jsonl"
    lines.write_text(record.to_json() + "\n" + _finished_record().to_json() + "\n")
    assert GameRecord.load(lines, line=2).board.name == "petit_menec"
    with pytest.raises(RecordError, match="line 3"):
        GameRecord.load(lines, line=3)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("{not json", "must be JSON"),
        ("[1, 2]", "JSON object"),
        ('{"moves": []}', "'board' is missing"),
        ('{"board": "medium"}', "'moves' is missing"),
        ('{"board": "huge", "moves": []}', "'huge'"),
        ('{"board": 7, "moves": []}', "board"),
        ('{"board": "medium", "moves": "c4 Rns"}', "'moves' must be a list"),
        ('{"board": "medium", "moves": [1, 2]}', "'moves' must be a list"),
        ('{"board": "medium", "rules": [], "moves": []}', "'rules' must be an object"),
        ('{"board": "medium", "rules": {"megaliths": 0}, "moves": []}', "megaliths=0"),
        ('{"board": "medium", "rules": {"colour": 1}, "moves": []}', "'colour'"),
        ('{"board": "medium", "moves": [], "result": 5}', "'result'"),
        ('{"board": "medium", "moves": [], "result": {"winner": 2, "dolmens": [[], []], "scores": [0, 0]}}', "winner"),
        ('{"board": "medium", "moves": [], "result": {"winner": 0, "dolmens": [[3]], "scores": [0, 0]}}', "dolmens"),
        ('{"board": "medium", "moves": [], "result": {"winner": 0, "dolmens": [[], []], "scores": "x"}}', "scores"),
        ('{"board": "medium", "moves": [], "result": {"winner": 0, "dolmens": [[], []], "extra": 1}}', "scores"),
        (
            '{"board": "medium", "moves": [], "result": {"winner": true, "dolmens": [[], []], "scores": [0, 0]}}',
            "winner",
        ),
        ('{"format": "chess", "board": "medium", "moves": []}', "'chess'"),
        ('{"version": 9, "board": "medium", "moves": []}', "version"),
    ],
)
def test_malformed_records(text: str, fragment: str) -> None:
    with pytest.raises(RecordError) as info:
        GameRecord.from_json(text)
    assert fragment in str(info.value), str(info.value)
    assert isinstance(info.value, CarnacError)


def test_illegal_move_in_a_record_names_its_number() -> None:
    record = GameRecord(MEDIUM, ["c4 Rns", "tilt N", "c3 Wns"])  # c3 is covered by the tilt
    with pytest.raises(RecordError) as info:
        record.replay()
    message = str(info.value)
    assert "move 3" in message and "'c3 Wns'" in message and "c3" in message and "lying" in message
    with pytest.raises(RecordError, match="move 3"):
        record.actions()


def test_unparsable_move_in_a_record_names_its_number() -> None:
    record = GameRecord(MEDIUM, ["c4 Rns", "wobble"])
    with pytest.raises(RecordError, match=r"move 2 \('wobble'\)"):
        record.replay()


def test_wrong_stored_result() -> None:
    record = _finished_record()
    data = record.to_dict()
    true_winner = data["result"]["winner"]
    data["result"]["winner"] = 0 if true_winner != 0 else 1
    with pytest.raises(RecordError, match="differs from the replayed"):
        GameRecord.from_dict(data).replay()
    data = record.to_dict()
    data["result"]["scores"] = [999, 999]
    with pytest.raises(RecordError, match="differs"):
        GameRecord.from_dict(data).replay()


def test_result_on_an_unfinished_game() -> None:
    data = GameRecord(MEDIUM, list(MOVES)).to_dict()
    data["result"] = {"winner": None, "dolmens": [[], []], "scores": [0, 0]}
    with pytest.raises(RecordError, match="not over"):
        GameRecord.from_dict(data).replay()


def test_from_actions_rejects_an_illegal_action() -> None:
    with pytest.raises(RecordError, match="move 2"):
        GameRecord.from_actions(MEDIUM, [0, 0])
