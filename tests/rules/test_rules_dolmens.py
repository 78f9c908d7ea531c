"""Dolmens, on every engine (carnac-rules.md, "Scoring"): what each square shows from above,
groups by orthogonal contact of one colour, ``min_dolmen``, and groups that merge when a
megalith is placed, declined or tilted between them.

Each static position is scored twice per engine: loaded from its diagram, and built move by
move from an empty board (:func:`_engines.moves_to`), so that the JAX engine's groups come
from its own merges (it keeps them up to date move by move instead of a flood fill).
"""

from __future__ import annotations

import pytest
from _engines import Dolmens, Engine, moves_to
from _rule_helpers import RED, WHITE, N, decline_a, place_a, sq, tilt_a

from carnac_env.core import GameState
from carnac_env.core.arithmetic import orientation_for


def dolmens(engine: Engine, diagram: str, board: str = "custom", **rules: object) -> Dolmens:
    """Both players' dolmen sizes in a hand-drawn position (a custom board of its size), by
    the engine's scorer: the same whether the position is loaded or built by moves."""
    lines = [line.strip() for line in diagram.strip().splitlines()]
    if board == "custom":
        rules = {"rows": len(lines), "cols": len(lines[0]), **rules}
    game = GameState.from_diagram(board, lines, **rules)
    loaded = engine.load(game).dolmens()
    built = engine.replay(game.board, moves_to(game)).dolmens()
    assert loaded == built, f"{engine.name}: loaded {loaded}, built by moves {built}"
    return built


def test_lying_pair_plus_standing_is_a_dolmen(engine: Engine) -> None:
    assert dolmens(engine, "rrR.\n....") == ((3,), ())
    assert dolmens(engine, "w...\nw...\nW...") == ((), (3,))


def test_a_lying_megalith_shows_its_colour_on_both_squares(engine: Engine) -> None:
    """Two lying megaliths end to end make a group of four; a lying one of the other colour
    between standing ones splits them."""
    assert dolmens(engine, "rrrr.\n.....") == ((4,), ())
    assert dolmens(engine, "RwwRR\n.....") == ((), ())
    assert dolmens(engine, "w.R.\nw.r.\nW.r.") == ((3,), (3,))


def test_group_of_two_is_no_dolmen(engine: Engine) -> None:
    assert dolmens(engine, "RR..\n....\n..WW") == ((), ())
    assert dolmens(engine, "rr..\n....") == ((), ())


def test_diagonal_contact_does_not_connect(engine: Engine) -> None:
    assert dolmens(engine, "R...\n.R..\n..R.") == ((), ())
    assert dolmens(engine, "RR..\n..R.\n....") == ((), ())
    assert dolmens(engine, "RR..\n.RR.\n....") == ((4,), ())


def test_other_colour_splits_groups(engine: Engine) -> None:
    assert dolmens(engine, "RRWRR.\n......") == ((), ())
    assert dolmens(engine, "RRRWRRR\n.......") == ((3, 3), ())


def test_groups_that_wind_round_and_touch_themselves(engine: Engine) -> None:
    """A ring and a spiral are one group each, however the squares were added."""
    assert dolmens(engine, "RRR.\nR.R.\nRRR.\n....") == ((8,), ())
    assert dolmens(engine, "WWWWW\nW...W\nW.W.W\nW.WWW") == ((), (14,))


def test_min_dolmen_five_on_kerlescan(engine: Engine) -> None:
    four = """
    RRRR......
    ..........
    WWWWW.....
    ..........
    ..........
    ..........
    ..........
    """
    assert dolmens(engine, four, board="kerlescan") == ((), (5,))
    assert dolmens(engine, four, board="medium") == ((4,), (5,))


# --------------------------------------------------------------------------- merging groups
def test_placement_merges_two_groups(engine: Engine) -> None:
    state = engine.from_diagram("custom", "RRR.RRR\n.......", rows=2, cols=7)
    assert state.dolmens() == ((3, 3), ())
    state.apply(place_a(state, 0, 3, 0))  # Red puts red on top between the two groups
    assert state.dolmens() == ((7,), ())


def test_tilt_merges_two_groups(engine: Engine) -> None:
    state = engine.from_diagram(
        "custom",
        """
        RRR.RRR
        .......
        .......
        """,
        rows=3,
        cols=7,
        to_act=1,
    )
    assert state.dolmens() == ((3, 3), ())
    # White places d3 with red (the opponent's colour) on top and on the north/south faces.
    state.apply(place_a(state, 2, 3, 1))
    assert state.tilt_targets()[N] == (sq(state, 1, 3), sq(state, 0, 3), RED)
    state.apply(tilt_a(state, N))  # Red tilts it onto d2 and d1: the gap in row 1 closes
    assert state.dolmens() == ((8,), ())


def test_tilt_and_placement_merge_groups(engine: Engine) -> None:
    state = engine.from_diagram(
        "custom",
        """
        RRRR...
        .......
        ...RRR.
        .......
        """,
        rows=4,
        cols=7,
        to_act=1,
    )
    assert state.dolmens() == ((4, 3), ())
    # White places b4: white (own) on top, so bit 0 is 0; the north/south faces are red,
    # not the top colour, so bit 1 is 2.
    state.apply(place_a(state, 3, 1, 2))
    assert state.to_act == 0
    assert state.tilt_targets()[N][2] == RED
    state.apply(tilt_a(state, N))  # Red tilts it onto b3 and b2, which touch b1
    assert state.dolmens() == ((6, 3), ())
    # Red places d2 with red on top: it touches d1 (row-0 group) and d3 (row-2 group). It
    # could tilt east, so White decides; White declines and it stands for good.
    state.apply(place_a(state, 1, 3, 0))
    state.apply(decline_a(state))
    assert state.dolmens() == ((10,), ())


# A megalith falls from ``origin`` towards ``direction`` between groups of red; with
# ``joined`` the dolmens after a red tilt (a white one joins nothing).
MERGES = {
    "two-groups-one-per-landing-square": (
        """
        RRR...
        ......
        ...RRR
        """,
        (1, 1),
        1,
        (8,),
    ),
    "one-group-touching-both-landing-squares": (
        """
        RRRR.
        .....
        """,
        (1, 0),
        1,
        (6,),
    ),
    "three-groups-at-once": (
        """
        RRR.RR.
        ....R..
        ...R...
        ...RR..
        """,
        (1, 1),
        1,
        (11,),
    ),
    "two-pairs-into-one-dolmen": (
        """
        RR...
        .....
        ..RR.
        """,
        (1, 0),
        1,
        (6,),
    ),
    "a-group-along-the-tilt": (
        """
        ..R..
        ..R..
        .....
        .....
        .....
        """,
        (4, 2),
        0,
        (4,),
    ),
}


@pytest.mark.parametrize("build", ["loaded", "by-moves"])
@pytest.mark.parametrize("colour", [RED, WHITE], ids=["red", "white"])
@pytest.mark.parametrize("case", list(MERGES))
def test_a_tilt_merges_groups(engine: Engine, case: str, colour: int, build: str) -> None:
    """The tilted megalith shows its colour on two squares at once; red ones join every red
    group either square touches (each group once), white ones join none. The groups before
    come from the diagram, or (``by-moves``) from the engine's own earlier moves."""
    diagram, (r, c), direction, joined = MERGES[case]
    lines = [line.strip() for line in diagram.strip().splitlines()]
    game = GameState.from_diagram("custom", lines, rows=len(lines), cols=len(lines[0]))
    state = engine.load(game) if build == "loaded" else engine.replay(game.board, moves_to(game))
    before = game.score_now().dolmens[0]
    assert state.dolmens() == (before, ())
    mover = state.to_act
    # the colour on top is the other one: only the tilt shows ``colour``
    shown_by_north_south = colour if direction % 2 == 0 else 3 - colour
    state.apply(place_a(state, r, c, orientation_for(mover, 3 - colour, shown_by_north_south)))
    assert state.tilt_targets()[direction][2] == colour
    state.apply(tilt_a(state, direction))
    assert state.dolmens() == ((joined, ()) if colour == RED else (before, ()))


def test_a_declined_megalith_merges_groups(engine: Engine) -> None:
    """A megalith that could tilt but is declined joins the groups it touches, as it stands."""
    state = engine.from_diagram("custom", "RR.RR\n.....\n.....", rows=3, cols=5)
    state.apply(place_a(state, 0, 2, 0))  # c1: south is open, so White decides
    assert state.phase == 1
    state.apply(decline_a(state))
    assert state.dolmens() == ((5,), ())


def test_the_last_megalith_declined_merges_groups_and_decides(engine: Engine) -> None:
    state = engine.from_diagram("custom", "RR.RR\n.....\n.....\nWWW..", rows=4, cols=5, megaliths=8)
    assert state.supply == 1 and state.dolmens() == ((), (3,))
    state.apply(place_a(state, 0, 2, 0))  # the last megalith, c1: it could tilt south
    state.apply(decline_a(state))
    assert state.is_over and state.dolmens() == ((5,), (3,))
    assert state.winner() == 0 and state.reward(0) == 1 and state.reward(1) == -1
