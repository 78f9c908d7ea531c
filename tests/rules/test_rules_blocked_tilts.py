"""Blocked tilts, on every engine (carnac-rules.md, "Orientation and tilting": both covered
squares must be on the board and empty; any megalith, standing or lying, blocks)."""

from __future__ import annotations

import pytest
from _engines import Engine
from _rule_helpers import LETTERS, STEPS, E, N, S, W, assert_rejected, place_a, sq, tilt_a

from carnac_env.core.game import STANDING


@pytest.mark.parametrize(
    ("r", "c", "d"),
    [
        (0, 2, N),  # on the north edge
        (1, 2, N),  # one square in from it: the second square would be off the board
        (4, 2, S),
        (3, 2, S),
        (2, 4, E),
        (2, 3, E),
        (2, 0, W),
        (2, 1, W),
    ],
)
def test_tilt_blocked_by_the_edge(engine: Engine, r: int, c: int, d: int) -> None:
    state = engine.new("custom", rows=5, cols=5)
    state.apply(place_a(state, r, c, 0))
    assert d not in state.tilt_targets()
    assert tilt_a(state, d) not in state.legal_actions()
    assert_rejected(state, tilt_a(state, d), f"tilt {LETTERS[d]}", "would leave the board")


def test_centre_of_5x5_tilts_everywhere_and_two_in_from_edge_is_enough(engine: Engine) -> None:
    state = engine.new("custom", rows=5, cols=5)
    state.apply(place_a(state, 2, 2, 0))
    assert sorted(state.tilt_targets()) == [N, E, S, W]
    state = engine.new("custom", rows=5, cols=5)
    state.apply(place_a(state, 0, 0, 0))
    assert sorted(state.tilt_targets()) == [E, S]


@pytest.mark.parametrize("d", [N, E, S, W])
@pytest.mark.parametrize("distance", [1, 2])
@pytest.mark.parametrize("kind", ["standing", "lying"])
def test_tilt_blocked_by_a_piece(engine: Engine, d: int, distance: int, kind: str) -> None:
    """Any megalith on either of the two squares a tilt would cover blocks it."""
    rows = ["." * 7 for _ in range(7)]
    dr, dc = STEPS[d]
    r, c = 3 + distance * dr, 3 + distance * dc
    grid = [list(row) for row in rows]
    if kind == "standing":
        grid[r][c] = "W"
    else:
        # a lying pair perpendicular to the tilt, so it covers exactly one of the two squares
        pr, pc = (r, c + 1) if dc == 0 else (r + 1, c)
        grid[r][c] = grid[pr][pc] = "r"
    state = engine.from_diagram("custom", ["".join(g) for g in grid], rows=7, cols=7)
    state.apply(place_a(state, 3, 3, 0))
    assert d not in state.tilt_targets()
    assert sorted(state.tilt_targets()) == sorted(set(range(4)) - {d})
    blocked_name = f"{'abcdefg'[c]}{r + 1}"
    assert_rejected(state, tilt_a(state, d), f"tilt {LETTERS[d]}", blocked_name, "not empty")


def test_a_tilt_blocked_by_a_megalith_placed_earlier_in_the_same_game(engine: Engine) -> None:
    """The blocking megaliths need not come from a diagram: a standing one declined and a
    lying one tilted earlier block later tilts just the same."""
    state = engine.new("custom", rows=5, cols=5)
    state.apply(place_a(state, 0, 2, 0))  # c1; White tilts it south onto c2, c3
    state.apply(tilt_a(state, S))
    state.apply(place_a(state, 2, 0, 0))  # White places a3: east would cover b3 and c3 (lying)
    assert sorted(state.tilt_targets()) == [N, S]
    state.apply(tilt_a(state, N))  # Red tilts it onto a2, a1
    state.apply(place_a(state, 4, 2, 0))  # Red places c5: north would cover c4 and c3 (lying)
    assert sorted(state.tilt_targets()) == [E, W]
    assert_rejected(state, tilt_a(state, N), "tilt N", "c3", "not empty")


def test_emptied_origin_square_can_be_placed_on_again(engine: Engine) -> None:
    state = engine.new("custom", rows=5, cols=5)
    state.apply(place_a(state, 2, 2, 0))
    state.apply(tilt_a(state, E))
    origin = sq(state, 2, 2)
    assert state.kinds[origin] == 0 and state.cells[origin] == 0
    assert state.empty == 25 - 2
    assert place_a(state, 2, 2, 3) in state.legal_actions()
    state.apply(place_a(state, 2, 2, 3))  # White places there (the tilter places next)
    assert state.kinds[origin] == STANDING


def test_illegal_tilt_off_the_board_and_blocked(engine: Engine) -> None:
    state = engine.from_diagram("medium", [".R........"] + ["." * 10] * 6)
    state.apply(place_a(state, 0, 0, 0))  # a1: off the board N and W, b1 blocks E
    assert sorted(state.tilt_targets()) == [S]
    assert_rejected(state, tilt_a(state, N), "tilt N", "leave the board")
    assert_rejected(state, tilt_a(state, W), "tilt W", "leave the board")
    assert_rejected(state, tilt_a(state, E), "tilt E", "b1")
