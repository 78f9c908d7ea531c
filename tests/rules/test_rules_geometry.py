"""Orientation and tilting, on every engine (carnac-rules.md, "Pieces" and "Orientation and
tilting"): the four upright orientations, the colour each tilt shows, the squares it covers."""

from __future__ import annotations

import pytest
from _engines import Engine
from _rule_helpers import (
    RED,
    STEPS,
    WHITE,
    E,
    N,
    S,
    W,
    block_faces,
    face_up_after_tilt,
    place_a,
    sq,
    tilt_a,
)

from carnac_env.core.game import LYING, PLACE, RESPOND, STANDING

EMPTY_MEDIUM = ["." * 10] * 7


@pytest.mark.parametrize("mover", [0, 1])
@pytest.mark.parametrize("o", [0, 1, 2, 3])
@pytest.mark.parametrize("d", [N, E, S, W])
def test_place_and_tilt_geometry(engine: Engine, mover: int, o: int, d: int) -> None:
    state = engine.from_diagram("medium", EMPTY_MEDIUM, to_act=mover)
    r, c = 3, 4
    faces = block_faces(mover, o)
    state.apply(place_a(state, r, c, o))
    # The top end shows on the square; the megalith stands and the opponent must respond.
    assert state.cells[sq(state, r, c)] == faces["up"]
    assert state.kinds[sq(state, r, c)] == STANDING
    assert state.phase == RESPOND and state.to_act == 1 - mover
    assert state.pending == sq(state, r, c)
    assert sorted(state.tilt_targets()) == [N, E, S, W]
    dr, dc = STEPS[d]
    first, second = sq(state, r + dr, c + dc), sq(state, r + 2 * dr, c + 2 * dc)
    expected = face_up_after_tilt(faces, d)
    assert state.tilt_targets()[d] == (first, second, expected)
    state.apply(tilt_a(state, d))
    assert state.cells[first] == state.cells[second] == expected
    assert state.kinds[first] == state.kinds[second] == LYING
    assert state.cells[sq(state, r, c)] == 0 and state.kinds[sq(state, r, c)] == 0
    assert {frozenset(p) for p in state.lying} == {frozenset((first, second))}
    # Nothing else on the board changed.
    assert sum(1 for k in state.kinds if k) == 2
    # The tilter places next.
    assert state.phase == PLACE and state.to_act == 1 - mover


@pytest.mark.parametrize("mover", [0, 1])
@pytest.mark.parametrize("o", [0, 1, 2, 3])
def test_opposite_tilts_show_the_same_colour_and_axes_differ(engine: Engine, mover: int, o: int) -> None:
    faces = block_faces(mover, o)
    assert face_up_after_tilt(faces, N) == face_up_after_tilt(faces, S)
    assert face_up_after_tilt(faces, E) == face_up_after_tilt(faces, W)
    assert face_up_after_tilt(faces, N) != face_up_after_tilt(faces, E)
    state = engine.from_diagram("medium", EMPTY_MEDIUM, to_act=mover)
    state.apply(place_a(state, 3, 4, o))
    colours = {d: t[2] for d, t in state.tilt_targets().items()}
    assert colours[N] == colours[S] != colours[E] == colours[W]


def test_four_orientations_are_distinct(engine: Engine) -> None:
    """Each mover's 4 orientations give 4 different (top, N/S colour) pairs: all of them."""
    for mover in (0, 1):
        seen = set()
        for o in range(4):
            state = engine.from_diagram("medium", EMPTY_MEDIUM, to_act=mover)
            state.apply(place_a(state, 3, 4, o))
            targets = state.tilt_targets()
            seen.add((state.cells[sq(state, 3, 4)], targets[N][2], targets[E][2]))
        assert len(seen) == 4
        assert {(t, ns) for t, ns, _ in seen} == {(RED, RED), (RED, WHITE), (WHITE, RED), (WHITE, WHITE)}


def test_orientation_bit0_is_relative_to_the_mover(engine: Engine) -> None:
    for mover, own in ((0, RED), (1, WHITE)):
        state = engine.from_diagram("medium", EMPTY_MEDIUM, to_act=mover)
        state.apply(place_a(state, 0, 0, 0))
        assert state.cells[0] == own
        state = engine.from_diagram("medium", EMPTY_MEDIUM, to_act=mover)
        state.apply(place_a(state, 0, 0, 1))
        assert state.cells[0] == 3 - own


def test_red_moves_first(engine: Engine) -> None:
    state = engine.new("medium")
    assert state.to_act == 0 and state.phase == PLACE
    assert state.supply == 28
    assert state.legal_actions() == list(range(7 * 10 * 4))  # every square, every orientation


def test_placing_is_compulsory_and_only_on_empty_squares(engine: Engine) -> None:
    """The player to place has no other move (no tilt, no decline, no pass) and may use any
    empty square in any of the 4 orientations, and no covered one."""
    state = engine.from_diagram("custom", ["R.w", "..w"], rows=2, cols=3, to_act=1)
    assert state.phase == PLACE and state.to_act == 1
    empty = [s for s in range(6) if state.kinds[s] == 0]
    assert empty == [1, 3, 4]
    assert state.legal_actions() == [s * 4 + o for s in empty for o in range(4)]
