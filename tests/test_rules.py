"""Unit tests for every rule of Carnac, written from docs/rules.md and carnac-rules.md.

The expected values here are worked out from the rules text (a megalith as a 1x1x2 block
with coloured faces, the turn structure, the end of the game, dolmens and the tie-break),
not from the core's helper tables: the point is to catch mistakes in the core. Positions
are built by hand with :meth:`GameState.from_diagram`.
"""

from __future__ import annotations

import copy
import pickle

import pytest

from carnac_env.core import GameState, compare_dolmens, score
from carnac_env.core.game import LYING, OVER, PLACE, RESPOND, STANDING
from carnac_env.errors import CarnacError, IllegalActionError

RED, WHITE = 1, 2  # cell values seen from above
N, E, S, W = 0, 1, 2, 3
STEPS = {N: (-1, 0), E: (0, 1), S: (1, 0), W: (0, -1)}
LETTERS = "NESW"


# --------------------------------------------------------------------------- helpers
def sq(state: GameState, r: int, c: int) -> int:
    """Square index of row ``r`` (0 = north) and column ``c`` (0 = west)."""
    return r * state.board.cols + c


def place_a(state: GameState, r: int, c: int, o: int) -> int:
    """The place action from the public encoding: (row*C + col)*4 + o."""
    return (r * state.board.cols + c) * 4 + o


def tilt_a(state: GameState, d: int) -> int:
    return state.board.rows * state.board.cols * 4 + d


def decline_a(state: GameState) -> int:
    return state.board.rows * state.board.cols * 4 + 4


def empty_board(rows: int, cols: int, **rules: object) -> GameState:
    """A new game on a custom board (defaults: 28 megaliths, min dolmen 3)."""
    return GameState("custom", rows=rows, cols=cols, **rules)


def block_faces(mover: int, o: int) -> dict[str, int]:
    """The six faces of a megalith placed upright by ``mover`` with orientation ``o``.

    From the rules: the two end faces differ (one red, one white); bit 0 of ``o`` picks the
    top end (0: the mover's own colour); bit 1 picks which pair of opposite long faces
    carries the top colour (0: north/south, 2: east/west); the other pair has the other
    colour (long faces alternate around the block).
    """
    own, other = (RED, WHITE) if mover == 0 else (WHITE, RED)
    top = own if o & 1 == 0 else other
    bottom = other if top == own else own
    if o & 2 == 0:
        return {"up": top, "down": bottom, "N": top, "S": top, "E": bottom, "W": bottom}
    return {"up": top, "down": bottom, "N": bottom, "S": bottom, "E": top, "W": top}


def face_up_after_tilt(faces: dict[str, int], d: int) -> int:
    """A tilt towards ``d`` lays the block on its face pointing ``d``; the opposite long face
    ends up on top."""
    return faces[{N: "S", S: "N", E: "W", W: "E"}[d]]


def assert_rejected(state: GameState, action: object, *fragments: str) -> None:
    """``action`` raises IllegalActionError naming it and the fragments; the state is unchanged."""
    before = state.copy()
    with pytest.raises(IllegalActionError) as info:
        state.apply(action)
    message = str(info.value)
    assert f"action {action!r}" in message or f"action {action}" in message, message
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"
    assert state == before
    assert state.diagram() == before.diagram()
    assert state.legal_actions() == before.legal_actions()


# --------------------------------------------------------------------------- geometry
@pytest.mark.parametrize("mover", [0, 1])
@pytest.mark.parametrize("o", [0, 1, 2, 3])
@pytest.mark.parametrize("d", [N, E, S, W])
def test_place_and_tilt_geometry(mover: int, o: int, d: int) -> None:
    state = GameState.from_diagram("medium", ["." * 10] * 7, to_act=mover)
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
def test_opposite_tilts_show_the_same_colour_and_axes_differ(mover: int, o: int) -> None:
    faces = block_faces(mover, o)
    assert face_up_after_tilt(faces, N) == face_up_after_tilt(faces, S)
    assert face_up_after_tilt(faces, E) == face_up_after_tilt(faces, W)
    assert face_up_after_tilt(faces, N) != face_up_after_tilt(faces, E)
    state = GameState.from_diagram("medium", ["." * 10] * 7, to_act=mover)
    state.apply(place_a(state, 3, 4, o))
    colours = {d: t[2] for d, t in state.tilt_targets().items()}
    assert colours[N] == colours[S] != colours[E] == colours[W]


def test_four_orientations_are_distinct() -> None:
    """Each mover's 4 orientations give 4 different (top, N/S colour) pairs: all of them."""
    for mover in (0, 1):
        seen = set()
        for o in range(4):
            state = GameState.from_diagram("medium", ["." * 10] * 7, to_act=mover)
            state.apply(place_a(state, 3, 4, o))
            targets = state.tilt_targets()
            seen.add((state.cells[sq(state, 3, 4)], targets[N][2], targets[E][2]))
        assert len(seen) == 4
        assert {(t, ns) for t, ns, _ in seen} == {(RED, RED), (RED, WHITE), (WHITE, RED), (WHITE, WHITE)}


def test_orientation_bit0_is_relative_to_the_mover() -> None:
    for mover, own in ((0, RED), (1, WHITE)):
        state = GameState.from_diagram("medium", ["." * 10] * 7, to_act=mover)
        state.apply(place_a(state, 0, 0, 0))
        assert state.cells[0] == own
        state = GameState.from_diagram("medium", ["." * 10] * 7, to_act=mover)
        state.apply(place_a(state, 0, 0, 1))
        assert state.cells[0] == 3 - own


def test_red_moves_first() -> None:
    state = GameState("medium")
    assert state.to_act == 0 and state.phase == PLACE
    assert state.supply == 28


# --------------------------------------------------------------------------- blocked tilts
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
def test_tilt_blocked_by_the_edge(r: int, c: int, d: int) -> None:
    state = empty_board(5, 5)
    state.apply(place_a(state, r, c, 0))
    assert d not in state.tilt_targets()
    assert tilt_a(state, d) not in state.legal_actions()
    assert_rejected(state, tilt_a(state, d), f"tilt {LETTERS[d]}", "would leave the board")


def test_centre_of_5x5_tilts_everywhere_and_two_in_from_edge_is_enough() -> None:
    state = empty_board(5, 5)
    state.apply(place_a(state, 2, 2, 0))
    assert sorted(state.tilt_targets()) == [N, E, S, W]
    state = empty_board(5, 5)
    state.apply(place_a(state, 0, 0, 0))
    assert sorted(state.tilt_targets()) == [E, S]


@pytest.mark.parametrize("d", [N, E, S, W])
@pytest.mark.parametrize("distance", [1, 2])
@pytest.mark.parametrize("kind", ["standing", "lying"])
def test_tilt_blocked_by_a_piece(d: int, distance: int, kind: str) -> None:
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
    state = GameState.from_diagram("custom", ["".join(g) for g in grid], rows=7, cols=7)
    state.apply(place_a(state, 3, 3, 0))
    assert d not in state.tilt_targets()
    assert sorted(state.tilt_targets()) == sorted(set(range(4)) - {d})
    blocked_name = f"{'abcdefg'[c]}{r + 1}"
    assert_rejected(state, tilt_a(state, d), f"tilt {LETTERS[d]}", blocked_name, "not empty")


def test_emptied_origin_square_can_be_placed_on_again() -> None:
    state = empty_board(5, 5)
    state.apply(place_a(state, 2, 2, 0))
    state.apply(tilt_a(state, E))
    origin = sq(state, 2, 2)
    assert state.kinds[origin] == 0 and state.cells[origin] == 0
    assert state.empty == 25 - 2
    assert place_a(state, 2, 2, 3) in state.legal_actions()
    state.apply(place_a(state, 2, 2, 3))  # White places there (the tilter places next)
    assert state.kinds[origin] == STANDING


# --------------------------------------------------------------------------- turn structure
def test_repeated_declines() -> None:
    """After a decline the placer places again and the decliner responds again, without limit."""
    state = GameState("medium")
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


def test_decline_then_white_tilts_the_next_one() -> None:
    state = GameState("medium")
    state.apply(place_a(state, 3, 3, 0))
    state.apply(decline_a(state))
    state.apply(place_a(state, 3, 6, 0))  # Red again
    assert state.to_act == 1
    state.apply(tilt_a(state, S))
    assert state.to_act == 1 and state.phase == PLACE  # the tilter (White) places
    assert state.kinds[sq(state, 3, 3)] == STANDING


def test_untiltable_placement_passes_to_the_opponent() -> None:
    state = GameState.from_diagram(
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


def test_placement_on_a_2x2_board_is_never_tiltable() -> None:
    state = empty_board(2, 2)
    for expected_mover in (0, 1, 0):
        assert state.to_act == expected_mover and state.phase == PLACE
        state.apply(state.legal_actions()[0])
    state.apply(state.legal_actions()[0])
    assert state.is_over


def test_after_a_tilt_the_tilter_places() -> None:
    state = GameState("small")
    state.apply(place_a(state, 2, 3, 0))
    assert state.to_act == 1
    state.apply(tilt_a(state, N))
    assert state.to_act == 1 and state.phase == PLACE
    state.apply(place_a(state, 4, 7, 0))
    assert state.to_act == 0 and state.phase == RESPOND


def test_only_the_last_placed_megalith_can_be_tilted() -> None:
    state = GameState("medium")
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


def test_lying_megaliths_never_move() -> None:
    state = GameState("small")
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


# --------------------------------------------------------------------------- end of the game
def _one_left(**rules: object) -> GameState:
    """Red to place the last megalith on a 5x5 board where c3 is tiltable and a1 is not."""
    return GameState.from_diagram(
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


def test_last_megalith_tiltable_with_last_tilt_can_be_tilted() -> None:
    state = _one_left()
    state.apply(place_a(state, 2, 2, 0))
    assert state.supply == 0
    assert state.phase == RESPOND and state.to_act == 1
    state.apply(tilt_a(state, S))
    assert state.is_over and state.legal_actions() == []
    assert state.kinds[sq(state, 3, 2)] == state.kinds[sq(state, 4, 2)] == LYING
    assert state.kinds[sq(state, 2, 2)] == 0


def test_last_megalith_tiltable_with_last_tilt_can_be_declined() -> None:
    state = _one_left()
    state.apply(place_a(state, 2, 2, 0))
    state.apply(decline_a(state))
    assert state.is_over and state.supply == 0
    assert state.kinds[sq(state, 2, 2)] == STANDING


def test_last_megalith_without_last_tilt_ends_at_once() -> None:
    state = _one_left(last_tilt=False)
    state.apply(place_a(state, 2, 2, 0))
    assert state.is_over and state.pending == -1
    assert state.kinds[sq(state, 2, 2)] == STANDING
    assert state.legal_actions() == []


@pytest.mark.parametrize("last_tilt", [True, False])
def test_untiltable_last_megalith_ends_at_once(last_tilt: bool) -> None:
    state = _one_left(last_tilt=last_tilt)
    state.apply(place_a(state, 0, 0, 0))  # boxed in by b1 and a2
    assert state.is_over and state.kinds[0] == STANDING


def test_game_ends_when_the_supply_is_empty() -> None:
    state = GameState("large", megaliths=3)
    for _ in range(3):
        assert not state.is_over
        r, c = 2 * state.supply, 2 * state.supply
        state.apply(place_a(state, r, c, 0))
        state.apply(decline_a(state))
    assert state.is_over and state.supply == 0
    assert state.empty == 9 * 14 - 3
    assert_rejected(state, place_a(state, 8, 8, 0), "game is over")


def test_game_ends_after_a_tilt_of_the_last_megalith_on_a_full_supply() -> None:
    state = GameState("petit_menec")
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


def test_full_small_board_with_megaliths_left_ends_after_the_filling_placement() -> None:
    # 13 lying and 13 standing megaliths cover 39 of the 40 squares; 2 are left in the supply.
    state = GameState.from_diagram("small", FULL_SMALL, to_act=1)
    assert state.empty == 1 and state.supply == 2
    assert len(state.lying) == 13
    state.apply(place_a(state, 4, 4, 0))
    assert state.is_over and state.supply == 1
    assert state.empty == 0 and state.legal_actions() == []


def test_from_diagram_pairs_lying_megaliths_at_the_east_and_south_edges() -> None:
    """A lying megalith may lie along the east or south edge (a tilt east from the third
    column from the east ends there); from_diagram must accept such a position."""
    state = GameState.from_diagram("custom", ["...rr", ".....", "....w", "....w"], rows=4, cols=5)
    assert sorted(map(sorted, state.lying)) == [[3, 4], [14, 19]]


def test_full_official_small_board_is_reachable_with_megaliths_left() -> None:
    """The real small board (28 megaliths, 40 squares) can fill up with megaliths left."""
    state = GameState("small")
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


def test_full_custom_board_ends_with_megaliths_left() -> None:
    state = GameState.from_diagram(
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


def test_last_empty_square_passes_to_the_opponent_then_ends() -> None:
    state = GameState.from_diagram("custom", "R..W", rows=1, cols=4, megaliths=9)
    state.apply(place_a(state, 0, 1, 0))  # a tilt east would need c1 and d1: blocked
    assert state.phase == PLACE and state.to_act == 1
    state.apply(place_a(state, 0, 2, 0))
    assert state.is_over


# --------------------------------------------------------------------------- dolmens
def dolmens(diagram: str, board: str = "custom", **rules: object) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Both players' dolmen sizes in a hand-drawn position (a custom board of its size)."""
    lines = [line.strip() for line in diagram.strip().splitlines()]
    if board == "custom":
        rules = {"rows": len(lines), "cols": len(lines[0]), **rules}
    return GameState.from_diagram(board, lines, **rules).score_now().dolmens


def test_lying_pair_plus_standing_is_a_dolmen() -> None:
    assert dolmens("rrR.\n....") == ((3,), ())
    assert dolmens("w...\nw...\nW...") == ((), (3,))


def test_dolmen_squares_by_colour() -> None:
    """scoring.dolmens (what the renderers outline): each dolmen's colour and squares, Red's
    first; groups smaller than min_dolmen are left out."""
    from carnac_env.core.scoring import dolmens as dolmen_squares

    state = GameState.from_diagram("custom", ["RRR.W", "....W", "RR..W"], rows=3, cols=5)
    assert dolmen_squares(state.board, state.cells) == [(1, [0, 1, 2]), (2, [4, 9, 14])]


def test_group_of_two_is_no_dolmen() -> None:
    assert dolmens("RR..\n....\n..WW") == ((), ())
    assert dolmens("rr..\n....") == ((), ())


def test_diagonal_contact_does_not_connect() -> None:
    assert dolmens("R...\n.R..\n..R.") == ((), ())
    assert dolmens("RR..\n..R.\n....") == ((), ())
    assert dolmens("RR..\n.RR.\n....") == ((4,), ())


def test_other_colour_splits_groups() -> None:
    assert dolmens("RRWRR.\n......") == ((), ())
    assert dolmens("RRRWRRR\n.......") == ((3, 3), ())


def test_placement_merges_two_groups() -> None:
    state = GameState.from_diagram("custom", "RRR.RRR\n.......", rows=2, cols=7)
    assert state.score_now().dolmens == ((3, 3), ())
    state.apply(place_a(state, 0, 3, 0))  # Red puts red on top between the two groups
    assert state.score_now().dolmens == ((7,), ())


def test_tilt_merges_two_groups() -> None:
    state = GameState.from_diagram(
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
    assert state.score_now().dolmens == ((3, 3), ())
    # White places d3 with red (the opponent's colour) on top and on the north/south faces.
    state.apply(place_a(state, 2, 3, 1))
    assert state.tilt_targets()[N] == (sq(state, 1, 3), sq(state, 0, 3), RED)
    state.apply(tilt_a(state, N))  # Red tilts it onto d2 and d1: the gap in row 1 closes
    assert state.score_now().dolmens == ((8,), ())


def test_tilt_and_placement_merge_groups() -> None:
    state = GameState.from_diagram(
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
    assert state.score_now().dolmens == ((4, 3), ())
    # White places b4: white (own) on top, so bit 0 is 0; the north/south faces are red,
    # not the top colour, so bit 1 is 2.
    state.apply(place_a(state, 3, 1, 2))
    assert state.to_act == 0
    assert state.tilt_targets()[N][2] == RED
    state.apply(tilt_a(state, N))  # Red tilts it onto b3 and b2, which touch b1
    assert state.score_now().dolmens == ((6, 3), ())
    # Red places d2 with red on top: it touches d1 (row-0 group) and d3 (row-2 group).
    state.apply(place_a(state, 1, 3, 0))
    assert state.score_now().dolmens == ((10,), ())


def test_min_dolmen_five_on_kerlescan() -> None:
    four = """
    RRRR......
    ..........
    WWWWW.....
    ..........
    ..........
    ..........
    ..........
    """
    assert dolmens(four, board="kerlescan") == ((), (5,))
    assert dolmens(four, board="medium") == ((4,), (5,))


# --------------------------------------------------------------------------- winner and tie-break
def _result(diagram: str):
    lines = [line.strip() for line in diagram.strip().splitlines()]
    state = GameState.from_diagram("custom", lines, rows=len(lines), cols=len(lines[0]), megaliths=100)
    return state.score_now()


def test_more_dolmens_wins_even_with_smaller_sizes() -> None:
    result = _result(
        """
        RRR.RRR.
        ........
        WWWWWWWW
        """
    )
    assert result.dolmens == ((3, 3), (8,))
    assert result.winner == 0
    assert result.reward(0) == 1 and result.reward(1) == -1


def test_equal_counts_largest_decides() -> None:
    result = _result(
        """
        RRRR....
        ........
        WWWWW...
        """
    )
    assert result.dolmens == ((4,), (5,))
    assert result.winner == 1
    assert result.reward(0) == -1 and result.reward(1) == 1


def test_equal_counts_equal_largest_second_decides() -> None:
    result = _result(
        """
        RRRRR.RRRR
        ..........
        WWWWW.WWW.
        """
    )
    assert result.dolmens == ((5, 4), (5, 3))
    assert result.winner == 0


def test_identical_lists_draw() -> None:
    result = _result(
        """
        RRRR.RRR.
        .........
        WWW.WWWW.
        """
    )
    assert result.dolmens == ((4, 3), (4, 3))
    assert result.winner is None
    assert result.reward(0) == result.reward(1) == 0


def test_no_dolmens_at_all_draws() -> None:
    result = _result(
        """
        RR.WW.
        ......
        W.R...
        """
    )
    assert result.dolmens == ((), ())
    assert result.winner is None
    assert result.scores == (0, 0)


def test_third_position_decides() -> None:
    assert compare_dolmens([5, 4, 4], [5, 4, 3]) == 1
    assert compare_dolmens([5, 4, 3], [5, 4, 4]) == -1
    assert compare_dolmens([3, 3], [9]) == 1
    assert compare_dolmens([], []) == 0
    assert compare_dolmens([], [3]) == -1


def test_bga_score_two_dolmens_of_3_and_9() -> None:
    result = _result(
        """
        RRRRRRRRR.RRR
        .............
        WW.WW.W.W.W.W
        """
    )
    assert result.dolmens == ((9, 3), ())
    assert result.scores == (209, 0)
    assert result.winner == 0


def test_result_only_when_over_and_finished_game_scores() -> None:
    state = GameState.from_diagram("custom", "RR.", rows=1, cols=3, megaliths=5)
    with pytest.raises(ValueError, match="not over"):
        state.result()
    state.apply(place_a(state, 0, 2, 0))
    assert state.is_over
    assert state.result().dolmens == ((3,), ())
    assert state.result() == score(state.board, state.cells)


# --------------------------------------------------------------------------- illegal actions
def test_illegal_place_on_a_standing_megalith() -> None:
    state = GameState.from_diagram("medium", ["R........."] + ["." * 10] * 6)
    assert_rejected(state, place_a(state, 0, 0, 0), "a1", "a1 Rns", "standing")


def test_illegal_place_on_a_lying_megalith() -> None:
    state = GameState.from_diagram("medium", [".ww......."] + ["." * 10] * 6, to_act=1)
    assert_rejected(state, place_a(state, 0, 2, 1), "c1 Rns", "lying")


def test_illegal_place_while_a_tilt_decision_is_pending() -> None:
    state = GameState("medium")
    state.apply(place_a(state, 3, 3, 0))
    assert_rejected(state, place_a(state, 5, 5, 0), "f6 Wns", "tilt or decline", "d4")


def test_illegal_tilt_and_decline_when_placing() -> None:
    state = GameState("medium")
    assert_rejected(state, tilt_a(state, N), "tilt N", "must place")
    assert_rejected(state, decline_a(state), "decline", "must place")


def test_illegal_tilt_off_the_board_and_blocked() -> None:
    state = GameState.from_diagram("medium", [".R........"] + ["." * 10] * 6)
    state.apply(place_a(state, 0, 0, 0))  # a1: off the board N and W, b1 blocks E
    assert sorted(state.tilt_targets()) == [S]
    assert_rejected(state, tilt_a(state, N), "tilt N", "leave the board")
    assert_rejected(state, tilt_a(state, W), "tilt W", "leave the board")
    assert_rejected(state, tilt_a(state, E), "tilt E", "b1")


@pytest.mark.parametrize("bad", [-1, 285, 10**9])
def test_illegal_out_of_range(bad: int) -> None:
    state = GameState("medium")
    assert_rejected(state, bad, "0 to 284")


@pytest.mark.parametrize("bad", [1.5, "3", None, True, [4]])
def test_illegal_wrong_type(bad: object) -> None:
    state = GameState("medium")
    assert_rejected(state, bad, "integer")


def test_numpy_integers_are_accepted() -> None:
    import numpy as np

    state = GameState("medium")
    state.apply(np.int64(place_a(state, 3, 3, 0)))
    assert state.phase == RESPOND


def test_illegal_everything_after_the_end() -> None:
    state = GameState.from_diagram("custom", "RW.", rows=1, cols=3, megaliths=5)
    state.apply(place_a(state, 0, 2, 0))
    assert state.is_over and state.phase == OVER
    for action in (0, 4 * 3, 4 * 3 + 4, place_a(state, 0, 2, 0)):
        assert_rejected(state, action, "game is over")


def test_named_move_methods_reject_bad_arguments() -> None:
    state = GameState("medium")
    before = state.copy()
    with pytest.raises(IllegalActionError, match="orientation"):
        state.place(0, 4)
    with pytest.raises(IllegalActionError, match="square"):
        state.place(70, 0)
    with pytest.raises(IllegalActionError, match="direction"):
        state.tilt(7)
    with pytest.raises(IllegalActionError, match="decline"):
        state.decline()
    assert state == before
    state.place(sq(state, 3, 3), 0)
    state.tilt(S)
    assert len(state.lying) == 1


# --------------------------------------------------------------------------- copies and pickles
def _mid_game() -> GameState:
    state = GameState("medium")
    state.apply(place_a(state, 3, 3, 0))
    state.apply(tilt_a(state, E))
    state.apply(place_a(state, 1, 1, 2))
    return state


def test_copy_is_equal_and_independent() -> None:
    state = _mid_game()
    for clone in (state.copy(), copy.copy(state), copy.deepcopy(state)):
        assert clone == state and clone is not state
        assert clone.legal_actions() == state.legal_actions()
        clone.apply(tilt_a(clone, S))
        assert clone != state
        assert state.phase == RESPOND and state.pending == sq(state, 1, 1)
        assert len(state.lying) == 1 and len(clone.lying) == 2


def test_pickle_round_trip() -> None:
    state = _mid_game()
    clone = pickle.loads(pickle.dumps(state))
    assert clone == state
    assert clone.diagram() == state.diagram()
    assert clone.tilt_targets() == state.tilt_targets()
    clone.apply(decline_a(clone))
    assert state.phase == RESPOND
    state.apply(decline_a(state))
    assert clone == state


def test_diagram_round_trip() -> None:
    state = _mid_game()
    again = GameState.from_diagram("medium", state.diagram(), supply=state.supply)
    assert again.diagram() == state.diagram()
    assert again.score_now() == state.score_now()


# ----------------------------------------------------------------- previews of a placement
def test_tilts_after_place_previews_the_opponents_choices_without_changing_the_state() -> None:
    state = GameState.from_diagram("petit_menec", ["......", ".W....", "......", "......", "......", "......"])
    before = state.copy()
    # Red places own colour on top, north/south faces red (orientation 0) on c1 (row 0, col 2):
    # north runs off the board; east covers d1, e1 and shows white; south c2, c3 (red); west b1, a1.
    previews = state.tilts_after_place(2, 0)
    assert previews == {1: (3, 4, WHITE), 2: (8, 14, RED), 3: (1, 0, WHITE)}
    assert state == before
    # b1 (square 1) next to the white standing megalith on b2 (square 7): south is blocked.
    assert 2 not in state.tilts_after_place(1, 0)


def test_tilts_after_place_follows_the_last_tilt_rule() -> None:
    state = GameState.from_diagram("petit_menec", ["......"] * 6, supply=1, last_tilt=False)
    assert state.tilts_after_place(14, 0) == {}
    state = GameState.from_diagram("petit_menec", ["......"] * 6, supply=1)
    assert set(state.tilts_after_place(14, 0)) == {0, 1, 2, 3}


@pytest.mark.parametrize(("square", "orientation"), [(-1, 0), (36, 0), (0, 4), (True, 0), (0, 1.5)])
def test_tilts_after_place_rejects_bad_squares_and_orientations(square: object, orientation: object) -> None:
    state = GameState("petit_menec")
    with pytest.raises(CarnacError):
        state.tilts_after_place(square, orientation)
