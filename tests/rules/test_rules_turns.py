"""The turn structure, on every engine (carnac-rules.md, "Turn structure"): place, then tilt
or decline; repeated declines; no decision for an untiltable megalith; only the megalith
placed last can tilt; lying megaliths never move."""

from __future__ import annotations

import pytest
from _engines import Engine
from _rule_helpers import E, N, S, W, assert_rejected, decline_a, place_a, sq, tilt_a

from carnac_env.core.game import LYING, PLACE, RESPOND, STANDING


def test_repeated_declines(engine: Engine) -> None:
    """After a decline the placer places again and the decliner responds again, without limit."""
    state = engine.new("medium")
    placements = [(1, 1), (3, 3), (5, 5), (1, 7), (3, 8)]
    for i, (r, c) in enumerate(placements):
        assert state.phase == PLACE and state.to_act == 0
        state.apply(place_a(state, r, c, i % 4))
        assert state.phase == RESPOND and state.to_act == 1
        assert decline_a(state) in state.legal_actions()
        state.apply(decline_a(state))
        # the megalith stays standing for the rest of the game
        assert state.kinds[sq(state, r, c)] == STANDING
        assert state.pending == -1
    assert state.supply == 28 - len(placements)
    assert state.to_act == 0 and state.phase == PLACE
    for r, c in placements:
        assert state.kinds[sq(state, r, c)] == STANDING
    assert not state.lying


def test_repeated_declines_by_white_of_whites_placements(engine: Engine) -> None:
    """Declining works the same way round when White places (after a tilt by White): White
    keeps placing, Red keeps declining."""
    state = engine.new("medium")
    state.apply(place_a(state, 0, 0, 0))
    state.apply(tilt_a(state, E))  # White tilts and places next
    for square in (33, 35, 37, 55):
        assert state.phase == PLACE and state.to_act == 1
        state.apply(square * 4 + 3)
        assert state.phase == RESPOND and state.to_act == 0 and state.pending == square
        state.apply(decline_a(state))
    assert state.to_act == 1 and state.supply == 28 - 5


def test_decline_then_white_tilts_the_next_one(engine: Engine) -> None:
    state = engine.new("medium")
    state.apply(place_a(state, 3, 3, 0))
    state.apply(decline_a(state))
    state.apply(place_a(state, 3, 6, 0))  # Red again
    assert state.to_act == 1
    state.apply(tilt_a(state, S))
    assert state.to_act == 1 and state.phase == PLACE  # the tilter (White) places
    assert state.kinds[sq(state, 3, 3)] == STANDING


def test_decline_is_always_allowed_while_responding(engine: Engine) -> None:
    """Whatever tilts are open (one, several), the responder may decline, and the responder
    has no other move than the open tilts and the decline."""
    state = engine.from_diagram("medium", [".R........"] + ["." * 10] * 6)
    state.apply(place_a(state, 0, 0, 0))  # only south is open
    assert state.legal_actions() == [tilt_a(state, S), decline_a(state)]
    state.apply(decline_a(state))
    state.apply(place_a(state, 3, 3, 1))  # all four open
    assert state.legal_actions() == [tilt_a(state, d) for d in (N, E, S, W)] + [decline_a(state)]


def test_untiltable_placement_passes_to_the_opponent(engine: Engine) -> None:
    state = engine.from_diagram(
        "custom",
        """
        .W...
        W.W..
        .W...
        .....
        .....
        """,
        rows=5,
        cols=5,
    )
    state.apply(place_a(state, 1, 1, 0))  # boxed in on all four sides
    assert state.phase == PLACE and state.to_act == 1
    assert state.pending == -1 and state.tilt_targets() == {}
    assert decline_a(state) not in state.legal_actions()
    assert all(a < 100 for a in state.legal_actions())


def test_placement_on_a_2x2_board_is_never_tiltable(engine: Engine) -> None:
    state = engine.new("custom", rows=2, cols=2)
    for expected_mover in (0, 1, 0):
        assert state.to_act == expected_mover and state.phase == PLACE
        state.apply(state.legal_actions()[0])
    state.apply(state.legal_actions()[0])
    assert state.is_over


def test_after_a_tilt_the_tilter_places(engine: Engine) -> None:
    state = engine.new("small")
    state.apply(place_a(state, 2, 3, 0))
    assert state.to_act == 1
    state.apply(tilt_a(state, N))
    assert state.to_act == 1 and state.phase == PLACE
    state.apply(place_a(state, 4, 7, 0))
    assert state.to_act == 0 and state.phase == RESPOND


def test_only_the_last_placed_megalith_can_be_tilted(engine: Engine) -> None:
    state = engine.new("medium")
    state.apply(place_a(state, 3, 3, 0))
    state.apply(decline_a(state))
    # No decision is pending: no tilt at all is legal, for the declined one or any other.
    for d in range(4):
        assert_rejected(state, tilt_a(state, d), "no megalith to tilt")
    state.apply(place_a(state, 3, 6, 0))
    assert state.pending == sq(state, 3, 6)
    # A tilt west moves the new megalith (from g4 onto f4 and e4), never the old one on d4.
    state.apply(tilt_a(state, W))
    assert state.kinds[sq(state, 3, 3)] == STANDING
    assert state.kinds[sq(state, 3, 6)] == 0
    assert state.kinds[sq(state, 3, 5)] == state.kinds[sq(state, 3, 4)] == LYING


def test_lying_megaliths_never_move(engine: Engine) -> None:
    state = engine.new("small")
    state.apply(place_a(state, 2, 2, 0))
    state.apply(tilt_a(state, E))
    lying_cells = {s: (state.cells[s], state.kinds[s]) for s in (sq(state, 2, 3), sq(state, 2, 4))}
    # Play on: whatever happens afterwards, the lying megalith stays where it fell.
    moves = 0
    while not state.is_over:
        state.apply(state.legal_actions()[-1] if state.phase == RESPOND else state.legal_actions()[0])
        moves += 1
        for s, value in lying_cells.items():
            assert (state.cells[s], state.kinds[s]) == value
    assert moves > 10


def test_illegal_place_on_a_standing_megalith(engine: Engine) -> None:
    state = engine.from_diagram("medium", ["R........."] + ["." * 10] * 6)
    assert_rejected(state, place_a(state, 0, 0, 0), "a1", "a1 Rns", "standing")


def test_illegal_place_on_a_lying_megalith(engine: Engine) -> None:
    state = engine.from_diagram("medium", [".ww......."] + ["." * 10] * 6, to_act=1)
    assert_rejected(state, place_a(state, 0, 2, 1), "c1 Rns", "lying")


def test_illegal_place_while_a_tilt_decision_is_pending(engine: Engine) -> None:
    state = engine.new("medium")
    state.apply(place_a(state, 3, 3, 0))
    assert_rejected(state, place_a(state, 5, 5, 0), "f6 Wns", "tilt or decline", "d4")


def test_illegal_tilt_and_decline_when_placing(engine: Engine) -> None:
    state = engine.new("medium")
    assert_rejected(state, tilt_a(state, N), "tilt N", "must place")
    assert_rejected(state, decline_a(state), "decline", "must place")


@pytest.mark.parametrize("bad", [-1, 285, 10**9])
def test_illegal_out_of_range(engine: Engine, bad: int) -> None:
    """Action numbers outside 0..R*C*4+4 (284 on medium) are refused like any illegal one."""
    assert_rejected(engine.new("medium"), bad, "0 to 284")
