"""The seven named boards, custom boards, and clear errors for impossible ones (from the rules table)."""

from __future__ import annotations

import pytest

from carnac_env.core import BOARDS, Board, GameState, make_board
from carnac_env.core.boards import MAX_SIDE
from carnac_env.errors import CarnacError

# name: (rows, cols, megaliths, min_dolmen), copied from the table in carnac-rules.md
RULES_TABLE = {
    "small": (5, 8, 28, 3),
    "medium": (7, 10, 28, 3),
    "large": (9, 14, 28, 3),
    "kermario": (5, 20, 56, 3),
    "kerlescan": (7, 10, 28, 5),
    "le_menec": (12, 16, 56, 3),
    "petit_menec": (6, 6, 14, 3),
}


def test_exactly_the_seven_named_boards() -> None:
    assert set(BOARDS) == set(RULES_TABLE)


@pytest.mark.parametrize("name", sorted(RULES_TABLE))
def test_named_board_sizes(name: str) -> None:
    rows, cols, megaliths, min_dolmen = RULES_TABLE[name]
    board = make_board(name)
    assert (board.name, board.rows, board.cols, board.megaliths, board.min_dolmen) == (
        name,
        rows,
        cols,
        megaliths,
        min_dolmen,
    )
    assert board.last_tilt is True  # boardspace.net's rule is the default
    assert board.squares == rows * cols
    assert board.num_actions == rows * cols * 4 + 5
    state = GameState(name)
    assert state.supply == megaliths and state.empty == rows * cols
    assert len(state.legal_actions()) == rows * cols * 4


def test_default_board_is_medium() -> None:
    assert make_board() == BOARDS["medium"]
    assert GameState().board == BOARDS["medium"]


def test_named_board_with_last_tilt_off_keeps_its_name() -> None:
    board = make_board("small", last_tilt=False)
    assert board.name == "small" and board.last_tilt is False
    assert (board.rows, board.cols, board.megaliths) == (5, 8, 28)


def test_named_board_with_changed_size_becomes_custom() -> None:
    board = make_board("medium", megaliths=40)
    assert board.name == "custom" and board.megaliths == 40 and (board.rows, board.cols) == (7, 10)
    assert make_board("medium", megaliths=28) == BOARDS["medium"]


def test_custom_board() -> None:
    board = make_board("custom", rows=3, cols=30, megaliths=12, min_dolmen=4, last_tilt=False)
    assert board.rules() == {"rows": 3, "cols": 30, "megaliths": 12, "min_dolmen": 4, "last_tilt": False}
    assert board.num_actions == 3 * 30 * 4 + 5
    assert make_board(board) is board
    assert make_board("custom", **board.rules()) == board


def test_custom_board_defaults() -> None:
    board = make_board("custom", rows=4, cols=4)
    assert (board.megaliths, board.min_dolmen, board.last_tilt) == (28, 3, True)


def test_smallest_board_plays() -> None:
    state = GameState("custom", rows=1, cols=1, megaliths=1, min_dolmen=1)
    state.apply(0)
    assert state.is_over
    assert state.result().dolmens == ((1,), ())
    assert state.result().winner == 0


def test_board_is_immutable() -> None:
    board = make_board("medium")
    with pytest.raises(AttributeError):
        board.rows = 3  # type: ignore[misc]


def test_a_pickled_board_keeps_its_rules_and_read_only_arrays() -> None:
    """As sent to an arena's worker processes: writeable arrays there would make numba compile
    every engine function again instead of loading what the warm-up cached."""
    import pickle

    for board in (make_board("medium"), make_board("custom", rows=4, cols=5, megaliths=6, last_tilt=False)):
        copy = pickle.loads(pickle.dumps(board))
        assert copy == board and copy.rules() == board.rules() and copy.name == board.name
        assert not any(array.flags.writeable for array in copy.arrays)
        assert all((a == b).all() for a, b in zip(copy.arrays, board.arrays, strict=True))


@pytest.mark.parametrize(
    ("rules", "fragment"),
    [
        ({"rows": 0, "cols": 5}, "0 x 5"),
        ({"rows": 4, "cols": 0}, "4 x 0"),
        ({"rows": -2, "cols": 5}, "-2"),
        ({"rows": 4, "cols": 4, "megaliths": 0}, "megaliths=0"),
        ({"rows": 4, "cols": 4, "megaliths": -3}, "megaliths=-3"),
        ({"rows": 4, "cols": 4, "min_dolmen": 0}, "min_dolmen=0"),
        ({"rows": 4, "cols": 4, "min_dolmen": -1}, "min_dolmen=-1"),
    ],
)
def test_impossible_custom_boards(rules: dict, fragment: str) -> None:
    with pytest.raises(CarnacError) as info:
        make_board("custom", **rules)
    assert fragment in str(info.value)
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize(
    ("rules", "fragment"),
    [
        ({"megaliths": 0}, "megaliths=0"),
        ({"min_dolmen": 0}, "min_dolmen=0"),
        ({"rows": 0}, "0 x 10"),
    ],
)
def test_impossible_changes_to_a_named_board(rules: dict, fragment: str) -> None:
    with pytest.raises(CarnacError, match=fragment):
        make_board("medium", **rules)


@pytest.mark.parametrize(
    ("rules", "fragment"),
    [
        ({"rows": 3.0, "cols": 4}, "rows=3.0"),
        ({"rows": "3", "cols": 4}, "rows='3'"),
        ({"rows": True, "cols": 4}, "rows=True"),
        ({"rows": 3, "cols": 4, "megaliths": None}, "megaliths=None"),
        ({"rows": 3, "cols": 4, "min_dolmen": 2.5}, "min_dolmen=2.5"),
        ({"rows": 3, "cols": 4, "last_tilt": "yes"}, "last_tilt='yes'"),
        ({"rows": 3, "cols": 4, "last_tilt": 1}, "last_tilt=1"),
    ],
)
def test_wrong_types(rules: dict, fragment: str) -> None:
    with pytest.raises(CarnacError) as info:
        make_board("custom", **rules)
    assert fragment in str(info.value)


def test_unknown_option_names_the_option_and_the_choices() -> None:
    with pytest.raises(CarnacError) as info:
        make_board("medium", colums=5)
    message = str(info.value)
    assert "'colums'" in message
    for option in ("rows", "cols", "megaliths", "min_dolmen", "last_tilt"):
        assert option in message


@pytest.mark.parametrize("name", ["huge", "Medium", "", "kermário"])
def test_unknown_board_names_the_board_and_the_choices(name: str) -> None:
    with pytest.raises(CarnacError) as info:
        make_board(name)
    message = str(info.value)
    assert repr(name) in message
    for known in RULES_TABLE:
        assert known in message


@pytest.mark.parametrize("bad", [None, 7, ("medium",), ["small"]])
def test_board_of_the_wrong_type(bad: object) -> None:
    with pytest.raises(CarnacError) as info:
        make_board(bad)  # type: ignore[arg-type]
    assert repr(bad) in str(info.value)


def test_supply_too_large_for_the_int8_observation() -> None:
    with pytest.raises(CarnacError, match="megaliths=200"):
        make_board("custom", rows=20, cols=20, megaliths=200)
    assert make_board("custom", rows=20, cols=20, megaliths=127).megaliths == 127


def test_dolmen_larger_than_the_board_is_refused() -> None:
    with pytest.raises(CarnacError, match="min_dolmen=10"):
        make_board("custom", rows=3, cols=3, min_dolmen=10)


def test_custom_needs_rows_and_cols() -> None:
    with pytest.raises(CarnacError, match="rows and cols"):
        make_board("custom")
    with pytest.raises(CarnacError, match="cols"):
        make_board("custom", rows=4)


def test_game_state_rejects_the_same_mistakes() -> None:
    with pytest.raises(CarnacError, match="'huge'"):
        GameState("huge")
    with pytest.raises(CarnacError, match="megaliths=0"):
        GameState("small", megaliths=0)


def test_board_constructed_directly_is_validated() -> None:
    with pytest.raises(CarnacError, match="min_dolmen=0"):
        Board("mine", 3, 3, 5, 0)


@pytest.mark.parametrize(("rows", "cols"), [(65, 4), (4, 65), (100_000, 100_000), (10**30, 2)])
def test_boards_larger_than_the_limit_fail_at_once(rows: int, cols: int) -> None:
    """A huge custom board is refused before any table is built (it would take gigabytes)."""
    with pytest.raises(CarnacError, match=rf"{rows} x {cols} board is too large.*<= {MAX_SIDE}"):
        make_board("custom", rows=rows, cols=cols)
    assert make_board("custom", rows=MAX_SIDE, cols=MAX_SIDE, megaliths=127).squares == MAX_SIDE**2


def test_board_arrays_match_the_tuples() -> None:
    """Board.arrays (for the compiled engines) and the tuples (for Python) are the same tables."""
    for board in [*BOARDS.values(), make_board("custom", rows=1, cols=5), make_board("custom", rows=3, cols=1)]:
        arrays = board.arrays
        assert arrays.tilt_squares.shape == (board.squares, 4, 2) and arrays.neighbours.shape == (board.squares, 4)
        for square in range(board.squares):
            for direction in range(4):
                pair = board.tilt_squares[square][direction]
                expected = (-1, -1) if pair is None else pair
                assert tuple(arrays.tilt_squares[square, direction]) == expected
            assert tuple(int(o) for o in arrays.neighbours[square] if o >= 0) == board.neighbours[square]
        edges = {(s, o) for s in range(board.squares) for o in board.neighbours[s] if o > s}
        assert {tuple(e) for e in arrays.edges.tolist()} == edges and len(arrays.edges) == len(edges)
        assert not arrays.tilt_squares.flags.writeable


# --------------------------------------------------------------------------- board specs
@pytest.mark.parametrize(
    ("spec", "rules"),
    [
        ("medium", ("medium", 7, 10, 28, 3, True)),
        (" small ", ("small", 5, 8, 28, 3, True)),
        ("medium:last_tilt=0", ("medium", 7, 10, 28, 3, False)),
        ("kerlescan:megaliths=20", ("custom", 7, 10, 20, 5, True)),
        ("7x9", ("custom", 7, 9, 28, 3, True)),
        ("7x9:megaliths=30,min_dolmen=4,last_tilt=0", ("custom", 7, 9, 30, 4, False)),
        ("64x64:megaliths=127", ("custom", 64, 64, 127, 3, True)),
        ("1x4:megaliths=9, last_tilt = true", ("custom", 1, 4, 9, 3, True)),
    ],
)
def test_a_board_spec_names_its_board_and_reads_back(spec: str, rules: tuple) -> None:
    from carnac_env.core import board_spec, parse_board

    board = parse_board(spec)
    assert (board.name, board.rows, board.cols, board.megaliths, board.min_dolmen, board.last_tilt) == rules
    assert make_board(spec) == board  # every --board goes through make_board
    assert parse_board(board_spec(board)) == board


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ("7x99", "cols=99; expected a whole number in 1..64"),
        ("0x9", "rows=0; expected a whole number in 1..64"),
        ("7x9:megaliths=128", "megaliths=128; expected a whole number in 1..127"),
        ("7x9:megaliths=٣", "megaliths='٣'; expected a whole number in 1..127 in ASCII digits"),
        ("7x9:min_dolmen=64", "min_dolmen=64 can never be reached on a 7 x 9 board"),
        ("7x9:rows=3", "unknown option 'rows'; expected any of megaliths, min_dolmen, last_tilt"),
        ("7x9:megaliths", "'megaliths' is not option=value"),
        ("7x9:megaliths=3,megaliths=4", "option 'megaliths' is given twice"),
        ("7x9:last_tilt=maybe", "last_tilt='maybe'; expected 0 or 1"),
        ("mediun:last_tilt=0", "unknown board 'mediun'"),
        ("mediun", "unknown board 'mediun'; expected one of small"),
        ("7x9" + ",x" * 200, "expected at most 200"),
    ],
)
def test_a_bad_board_spec_names_the_bad_part_and_the_limit(spec: str, words: str) -> None:
    with pytest.raises(CarnacError) as raised:
        make_board(spec)
    assert words in str(raised.value), str(raised.value)


def test_board_specs_of_equal_rules_are_equal_and_named_boards_keep_their_names() -> None:
    from carnac_env.core import board_spec

    assert [board_spec(BOARDS[name]) for name in BOARDS] == list(BOARDS)
    assert board_spec(make_board("custom", rows=7, cols=10)) == "7x10:megaliths=28,min_dolmen=3"
    assert board_spec(make_board("le_menec", last_tilt=False)) == "le_menec:last_tilt=0"


def test_a_list_of_board_specs_splits_where_a_new_board_starts() -> None:
    from carnac_env.core.boards import split_boards

    assert split_boards("small, 7x9:megaliths=30,min_dolmen=4,le_menec:last_tilt=0,5x5") == [
        "small",
        "7x9:megaliths=30,min_dolmen=4",
        "le_menec:last_tilt=0",
        "5x5",
    ]
    assert split_boards(" , ,") == []
