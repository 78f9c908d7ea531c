"""The end of the game, on every engine (carnac-rules.md, "End of the game"): the supply used
up, the last megalith (tilted, declined, untiltable, ``last_tilt=False``), a full board with
megaliths left, and nothing legal afterwards."""

from __future__ import annotations

import pytest
from _engines import Engine, Position
from _rule_helpers import E, S, assert_rejected, decline_a, place_a, sq, tilt_a

from carnac_env.core.game import LYING, OVER, PLACE, RESPOND, STANDING


def _one_left(engine: Engine, **rules: object) -> Position:
    """Red to place the last megalith on a 5x5 board where c3 is tiltable and a1 is not."""
    return engine.from_diagram(
        "custom",
        """
        .W...
        W....
        .....
        .....
        .....
        """,
        rows=5,
        cols=5,
        megaliths=10,
        supply=1,
        **rules,
    )


def test_last_megalith_tiltable_with_last_tilt_can_be_tilted(engine: Engine) -> None:
    state = _one_left(engine)
    state.apply(place_a(state, 2, 2, 0))
    assert state.supply == 0
    assert state.phase == RESPOND and state.to_act == 1
    state.apply(tilt_a(state, S))
    assert state.is_over and state.legal_actions() == []
    assert state.kinds[sq(state, 3, 2)] == state.kinds[sq(state, 4, 2)] == LYING
    assert state.kinds[sq(state, 2, 2)] == 0


def test_last_megalith_tiltable_with_last_tilt_can_be_declined(engine: Engine) -> None:
    state = _one_left(engine)
    state.apply(place_a(state, 2, 2, 0))
    state.apply(decline_a(state))
    assert state.is_over and state.supply == 0
    assert state.kinds[sq(state, 2, 2)] == STANDING


def test_last_megalith_without_last_tilt_ends_at_once(engine: Engine) -> None:
    state = _one_left(engine, last_tilt=False)
    state.apply(place_a(state, 2, 2, 0))
    assert state.is_over and state.pending == -1
    assert state.kinds[sq(state, 2, 2)] == STANDING
    assert state.legal_actions() == []


@pytest.mark.parametrize("last_tilt", [True, False])
def test_untiltable_last_megalith_ends_at_once(engine: Engine, last_tilt: bool) -> None:
    state = _one_left(engine, last_tilt=last_tilt)
    state.apply(place_a(state, 0, 0, 0))  # boxed in by b1 and a2
    assert state.is_over and state.kinds[0] == STANDING


@pytest.mark.parametrize("last_tilt", [True, False])
def test_the_last_megalith_is_scored_where_it_ends_up(engine: Engine, last_tilt: bool) -> None:
    """The final megalith counts in the result: tilted onto two squares (last_tilt), or
    standing where it was placed (without it), with the rewards of the step that ends."""
    state = engine.from_diagram(
        "custom",
        """
        ..R..
        .....
        .....
        R....
        R....
        """,
        rows=5,
        cols=5,
        megaliths=4,
        supply=1,
        last_tilt=last_tilt,
    )
    # Red places c4, white on top, north/south faces red: bit 0 is 1, bit 1 is 2. South runs
    # off the board and a4 blocks west; north and east are open.
    state.apply(place_a(state, 3, 2, 3))
    if last_tilt:
        assert sorted(state.tilt_targets()) == [0, E]
        state.apply(tilt_a(state, 0))  # White tilts it north onto c3 and c2: red joins c1
        assert state.dolmens() == ((3,), ())
        assert state.reward(0) == 1 and state.reward(1) == -1
    else:
        assert state.dolmens() == ((), ())  # a lone white square, and Red's a4-a5 pair
        assert state.reward(0) == state.reward(1) == 0
    assert state.is_over


def test_game_ends_when_the_supply_is_empty(engine: Engine) -> None:
    state = engine.new("large", megaliths=3)
    for _ in range(3):
        assert not state.is_over
        r, c = 2 * state.supply, 2 * state.supply
        state.apply(place_a(state, r, c, 0))
        state.apply(decline_a(state))
    assert state.is_over and state.supply == 0
    assert state.empty == 9 * 14 - 3
    assert_rejected(state, place_a(state, 8, 8, 0), "game is over")


def test_game_ends_after_a_tilt_of_the_last_megalith_on_a_full_supply(engine: Engine) -> None:
    state = engine.new("petit_menec")
    count = 0
    while not state.is_over:
        legal = state.legal_actions()
        state.apply(legal[0] if state.phase == RESPOND else legal[len(legal) // 2])
        count += 1
    assert state.supply == 0
    assert count <= 2 * 14


FULL_SMALL = """
rrwwrrWR
wwrrwwRW
rrwwrrWR
wwrrwwRW
rrRW.RWR
"""


def test_full_small_board_with_megaliths_left_ends_after_the_filling_placement(engine: Engine) -> None:
    # 13 lying and 13 standing megaliths cover 39 of the 40 squares; 2 are left in the supply.
    state = engine.from_diagram("small", FULL_SMALL, to_act=1)
    assert state.empty == 1 and state.supply == 2
    assert len(state.lying) == 13
    state.apply(place_a(state, 4, 4, 0))
    assert state.is_over and state.supply == 1
    assert state.empty == 0 and state.legal_actions() == []


def test_full_official_small_board_is_reachable_with_megaliths_left(engine: Engine) -> None:
    """The real small board (28 megaliths, 40 squares) can fill up with megaliths left."""
    state = engine.new("small")
    # In each row, tilt east from f (onto g, h), then from d (onto e, f), then from a (onto
    # b, c): 15 lying megaliths; then a and d of each row are filled by 10 standing ones.
    for r in range(5):
        for c0 in (5, 3, 0):
            state.apply(place_a(state, r, c0, 0))
            state.apply(tilt_a(state, E))
    assert len(state.lying) == 15 and state.empty == 10
    while not state.is_over:
        if state.phase == RESPOND:
            state.apply(decline_a(state))
        else:
            state.apply(state.legal_actions()[0])
    assert state.empty == 0
    assert state.supply == 28 - 25
    assert sum(1 for k in state.kinds if k == STANDING) == 10


def test_full_custom_board_ends_with_megaliths_left(engine: Engine) -> None:
    state = engine.from_diagram(
        "custom",
        """
        RW.
        WRW
        """,
        rows=2,
        cols=3,
        megaliths=20,
    )
    assert state.supply == 15
    state.apply(place_a(state, 0, 2, 1))
    assert state.is_over and state.supply == 14 and state.empty == 0
    assert_rejected(state, decline_a(state), "game is over")


def test_last_empty_square_passes_to_the_opponent_then_ends(engine: Engine) -> None:
    state = engine.from_diagram("custom", "R..W", rows=1, cols=4, megaliths=9)
    state.apply(place_a(state, 0, 1, 0))  # a tilt east would need c1 and d1: blocked
    assert state.phase == PLACE and state.to_act == 1
    state.apply(place_a(state, 0, 2, 0))
    assert state.is_over


def test_illegal_everything_after_the_end(engine: Engine) -> None:
    state = engine.from_diagram("custom", "RW.", rows=1, cols=3, megaliths=5)
    state.apply(place_a(state, 0, 2, 0))
    assert state.is_over and state.phase == OVER
    for action in (0, 4 * 3, 4 * 3 + 4, place_a(state, 0, 2, 0)):
        assert_rejected(state, action, "game is over")
