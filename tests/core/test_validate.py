"""The one check of a position (carnac_env.core.validate) and the positions built from diagrams.

``validate`` is what ``from_diagram``, ``BatchGame.set_state``, the random playout and the
JAX engine's ``from_core`` all use, so it is tested here from the rules: every position that
play reaches passes; breaking any one fact of a position is refused, naming the field, and
changes nothing. ``from_diagram`` refuses what is not a diagram (numbers, bytes, None as
rows; a float or bool supply or player) with a clear error, and pairs the lying squares of
boards of any size without recursion.
"""

from __future__ import annotations

import itertools
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from carnac_env.core import BOARDS, GameState, make_board, validate
from carnac_env.core.diagram import pair_lying_squares
from carnac_env.core.game import LYING, OVER, PLACE, RESPOND, STANDING
from carnac_env.errors import CarnacError

EMPTY_SMALL = ["." * 8] * 5


def played(board: str, seed: int, moves: int | None = None) -> list[GameState]:
    """Every position of one random game (to its end, or ``moves`` moves)."""
    rng = np.random.default_rng(seed)
    state = GameState(board)
    out = [state.copy()]
    while not state.is_over and (moves is None or len(out) <= moves):
        state.apply(state.legal_action_at(rng.random()))
        out.append(state.copy())
    return out


# --------------------------------------------------------------------------- what play reaches passes
@pytest.mark.parametrize("board", list(BOARDS))
def test_every_position_of_random_games_is_valid(board: str) -> None:
    for seed in range(3):
        positions = played(board, seed)
        for state in positions:
            validate(state)
        assert positions[-1].phase == OVER


def test_last_tilt_off_and_a_full_board_are_valid() -> None:
    rng = np.random.default_rng(1)
    for rules in ({"last_tilt": False}, {"rows": 2, "cols": 2, "megaliths": 9}):
        state = GameState("custom", **{"rows": 4, "cols": 4, **rules})
        while not state.is_over:
            validate(state)
            state.apply(state.legal_action_at(rng.random()))
        validate(state)


# --------------------------------------------------------------------------- each broken fact is refused
def _responding() -> GameState:
    state = GameState("small")
    state.apply(4 * 20)  # a1 row 2: a megalith awaiting a response
    assert state.phase == RESPOND
    return state


def _with_lying() -> GameState:
    state = GameState("small")
    state.apply(4 * 20)
    state.apply(state.board.squares * 4 + 1)  # tilted east
    assert state.lying
    return state


BROKEN = [
    ("phase", lambda s: setattr(s, "phase", 3), "phase"),
    ("phase is a bool", lambda s: setattr(s, "phase", True), "phase"),
    ("to_act", lambda s: setattr(s, "to_act", 2), "to_act"),
    ("to_act a float", lambda s: setattr(s, "to_act", 1.0), "to_act"),
    ("supply negative", lambda s: setattr(s, "supply", -1), "supply"),
    ("supply too large", lambda s: setattr(s, "supply", 29), "supply"),
    ("supply a float", lambda s: setattr(s, "supply", 27.0), "supply"),
    ("empty miscounted", lambda s: setattr(s, "empty", s.empty - 1), "empty"),
    ("cells too short", lambda s: setattr(s, "cells", s.cells[:-1]), "cells"),
    ("cells as bytes", lambda s: setattr(s, "cells", bytes(s.cells)), "cells"),
    ("a cell of 3", lambda s: s.cells.__setitem__(0, 3), r"cells\[0\]=3"),
    ("colour without a megalith", lambda s: s.cells.__setitem__(5, 1), "square 5"),
    ("lying not a list", lambda s: setattr(s, "lying", None), "lying"),
    ("a lying pair too many", lambda s: s.lying.append((30, 31)), "lying"),
    ("pending outside respond", lambda s: setattr(s, "pending", 3), "pending"),
    ("pending colour outside respond", lambda s: setattr(s, "pending_colour", 1), "pending"),
]


@pytest.mark.parametrize(("name", "breaking", "fragment"), BROKEN, ids=[b[0] for b in BROKEN])
def test_a_broken_position_is_refused_by_name_and_unchanged(name, breaking, fragment) -> None:
    state = _with_lying()
    breaking(state)
    before = {field: getattr(state, field) for field in GameState._FIELDS}
    snapshot = {k: (v.copy() if hasattr(v, "copy") else v) for k, v in before.items()}
    with pytest.raises(CarnacError, match=fragment):
        validate(state)
    assert {field: getattr(state, field) for field in GameState._FIELDS} == snapshot


RESPOND_BROKEN = [
    ("pending off the board", lambda s: setattr(s, "pending", 40), "pending"),
    ("pending on an empty square", lambda s: setattr(s, "pending", 0), "pending"),
    ("pending colour 3", lambda s: setattr(s, "pending_colour", 3), "pending_colour"),
    ("pending colour a bool", lambda s: setattr(s, "pending_colour", True), "pending_colour"),
]


@pytest.mark.parametrize(("name", "breaking", "fragment"), RESPOND_BROKEN, ids=[b[0] for b in RESPOND_BROKEN])
def test_a_broken_pending_megalith_is_refused(name, breaking, fragment) -> None:
    state = _responding()
    breaking(state)
    with pytest.raises(CarnacError, match=fragment):
        validate(state)


def test_lying_pairs_must_be_adjacent_lying_squares_of_one_colour_covering_each_once() -> None:
    state = _with_lying()
    (a, b), cols = state.lying[0], state.board.cols
    for pairs, fragment in (
        ([(a, a + 2 * cols)], "adjacent"),  # not neighbours
        ([(a, b), (a, b)], "two lying pairs"),
        ([], "in no lying pair"),
        ([(a, b, 0)], "tuple"),
        ([(a, 99)], "squares of the board"),
    ):
        state.lying = pairs
        with pytest.raises(CarnacError, match=fragment):
            validate(state)


def test_the_place_phase_needs_a_megalith_and_a_square_and_over_needs_the_end_rule() -> None:
    state = GameState("small")
    state.supply = 0
    with pytest.raises(CarnacError, match="supply=0 in the place phase"):
        validate(state)
    state = GameState("small")
    state.phase = OVER  # a fresh board with a full supply has not ended
    with pytest.raises(CarnacError, match="ends only when"):
        validate(state)
    last = GameState.from_diagram("small", EMPTY_SMALL, supply=1, last_tilt=False)
    last.apply(4 * 20)
    assert last.phase == OVER
    validate(last)
    last.phase, last.pending, last.pending_colour = RESPOND, 20, 1  # a response to a final megalith
    with pytest.raises(CarnacError, match="last_tilt=False"):
        validate(last)


def test_more_megaliths_on_the_board_than_left_the_supply_is_refused() -> None:
    state = _with_lying()
    state.supply = state.board.megaliths  # as if none had been placed
    with pytest.raises(CarnacError, match="megaliths on the board"):
        validate(state)


def test_not_a_game_state() -> None:
    for thing in ("medium", None, 3):
        with pytest.raises(CarnacError, match="GameState"):
            validate(thing)


# --------------------------------------------------------------------------- from_diagram's inputs


@pytest.mark.parametrize("supply", [2.5, True, 3.0, "3", np.float64(3)])
def test_from_diagram_refuses_a_supply_that_is_not_a_whole_number(supply) -> None:
    with pytest.raises(CarnacError, match="supply"):
        GameState.from_diagram("small", EMPTY_SMALL, supply=supply)


@pytest.mark.parametrize("to_act", [True, False, 1.0, 2, -1, "1", None])
def test_from_diagram_refuses_a_player_other_than_0_or_1(to_act) -> None:
    with pytest.raises(CarnacError, match="to_act"):
        GameState.from_diagram("small", EMPTY_SMALL, to_act=to_act)


def test_from_diagram_takes_numpy_whole_numbers() -> None:
    state = GameState.from_diagram("small", EMPTY_SMALL, supply=np.int64(5), to_act=np.int8(1))
    assert (state.supply, state.to_act) == (5, 1) and type(state.supply) is int


@pytest.mark.parametrize(
    "diagram", [None, 42, b"........", [b"........"] * 5, [1, 2, 3, 4, 5], ["........", None, "", "", ""], 3.5]
)
def test_from_diagram_refuses_rows_that_are_not_text(diagram) -> None:
    with pytest.raises(CarnacError, match="diagram"):
        GameState.from_diagram("small", diagram)


def test_a_64_by_64_board_of_lying_megaliths_is_a_clear_error_not_a_recursion_error() -> None:
    """2048 lying megaliths are more than any supply (at most 127): a CarnacError saying so,
    after a pairing that keeps its own stack (it used to recurse once per megalith)."""
    start = time.perf_counter()
    with pytest.raises(CarnacError, match="2048 megaliths"):
        GameState.from_diagram("custom", ["r" * 64] * 64, rows=64, cols=64, megaliths=127)
    board = make_board("custom", rows=64, cols=64)
    kinds, cells = bytearray([LYING] * board.squares), bytearray([1] * board.squares)
    pairs = pair_lying_squares(board, cells, kinds)
    assert len(pairs) == 2048 and all(b == a + 1 for a, b in pairs)
    assert time.perf_counter() - start < 30  # generous: a fraction of a second here


def test_a_64_by_64_board_that_needs_south_pairs_pairs_without_recursion() -> None:
    """Rows of odd width: pairing east only fails at every row's end, so the search must pair
    south there; a recursive search would go 2016 levels deep."""
    board = make_board("custom", rows=64, cols=64)
    kinds = bytearray(([LYING] * 63 + [0]) * 64)
    cells = bytearray(1 if k else 0 for k in kinds)
    pairs = pair_lying_squares(board, cells, kinds)
    assert pairs is not None and len(pairs) == 63 * 32
    assert sorted(s for pair in pairs for s in pair) == [s for s in range(board.squares) if kinds[s]]
    assert all(b in (a + 1, a + 64) and b in board.neighbours[a] for a, b in pairs)
    assert any(b == a + 64 for a, b in pairs)


def test_an_unpairable_diagram_is_refused() -> None:
    with pytest.raises(CarnacError, match="partner"):
        GameState.from_diagram("custom", ["r.", ".."], rows=2, cols=2)
    with pytest.raises(CarnacError, match="cannot be paired"):
        GameState.from_diagram("custom", ["rrr", "..."], rows=2, cols=3)


def _perfect_matching_exists(board, cells, kinds) -> bool:
    """Brute force: can the lying squares be split into adjacent pairs of one colour?"""
    lying = [s for s in range(board.squares) if kinds[s] == LYING]

    def solve(rest: tuple[int, ...]) -> bool:
        if not rest:
            return True
        first, others = rest[0], rest[1:]
        for other in others:
            joinable = other in board.neighbours[first] and cells[other] == cells[first]
            if joinable and solve(tuple(x for x in others if x != other)):
                return True
        return False

    return solve(tuple(lying))


@settings(max_examples=300, deadline=None)
@given(rows=st.integers(1, 4), cols=st.integers(1, 4), data=st.data())
def test_pairing_finds_a_pairing_exactly_when_one_exists(rows: int, cols: int, data) -> None:
    board = make_board("custom", rows=rows, cols=cols, min_dolmen=1)
    letters = data.draw(st.lists(st.sampled_from(".rwR"), min_size=rows * cols, max_size=rows * cols))
    cells = bytearray(1 if c in "rR" else 2 if c == "w" else 0 for c in letters)
    kinds = bytearray(LYING if c in "rw" else STANDING if c == "R" else 0 for c in letters)
    pairs = pair_lying_squares(board, cells, kinds)
    assert (pairs is not None) == _perfect_matching_exists(board, cells, kinds)
    if pairs is not None:
        covered = list(itertools.chain.from_iterable(pairs))
        assert sorted(covered) == [s for s in range(board.squares) if kinds[s] == LYING]
        assert all(b in board.neighbours[a] and cells[a] == cells[b] for a, b in pairs)


def test_diagram_positions_are_in_the_place_phase() -> None:
    state = GameState.from_diagram("small", ["rr......", "........", "...W....", "........", "........"])
    assert state.phase == PLACE and state.lying == [(0, 1)] and state.supply == 26
