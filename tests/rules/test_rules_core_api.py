"""The rules core's own API, on the core only: :class:`~carnac_env.core.GameState`'s error
messages for values of the wrong type, its named move methods, copies, pickles and diagrams,
the previews of a placement, and the scoring helpers (``compare_dolmens``, the BGA score,
``scoring.dolmens``). The rules themselves run on every engine in the other files here."""

from __future__ import annotations

import copy
import pickle

import pytest
from _engines import Engine
from _rule_helpers import RED, WHITE, S, assert_rejected, decline_a, place_a, sq, tilt_a

from carnac_env.core import GameState, compare_dolmens, score
from carnac_env.core.game import RESPOND
from carnac_env.errors import CarnacError, IllegalActionError


def _result(diagram: str):
    lines = [line.strip() for line in diagram.strip().splitlines()]
    state = GameState.from_diagram("custom", lines, rows=len(lines), cols=len(lines[0]), megaliths=100)
    return state.score_now()


# --------------------------------------------------------------------------- scoring helpers
def test_dolmen_squares_by_colour() -> None:
    """scoring.dolmens (what the renderers outline): each dolmen's colour and squares, Red's
    first; groups smaller than min_dolmen are left out."""
    from carnac_env.core.scoring import dolmens as dolmen_squares

    state = GameState.from_diagram("custom", ["RRR.W", "....W", "RR..W"], rows=3, cols=5)
    assert dolmen_squares(state.board, state.cells) == [(1, [0, 1, 2]), (2, [4, 9, 14])]


def test_compare_dolmens_third_position_decides() -> None:
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


def test_no_dolmens_scores_zero() -> None:
    result = _result(
        """
        RR.WW.
        ......
        W.R...
        """
    )
    assert result.scores == (0, 0)


def test_score_now_counts_a_megalith_awaiting_a_decision() -> None:
    """``score_now`` scores what the board shows now, the standing megalith awaiting a tilt
    decision included (the engines score finished games, where none awaits one)."""
    state = GameState.from_diagram("custom", ["RRRR...", ".......", "...RRR.", "......."], rows=4, cols=7)
    state.apply(place_a(state, 1, 3, 0))  # d2 touches d1 and d3; it could tilt east
    assert state.phase == RESPOND
    assert state.score_now().dolmens == ((8,), ())


def test_result_only_when_over_and_finished_game_scores() -> None:
    state = GameState.from_diagram("custom", "RR.", rows=1, cols=3, megaliths=5)
    with pytest.raises(ValueError, match="not over"):
        state.result()
    state.apply(place_a(state, 0, 2, 0))
    assert state.is_over
    assert state.result().dolmens == ((3,), ())
    assert state.result() == score(state.board, state.cells)


# --------------------------------------------------------------------------- actions of the wrong type
@pytest.mark.parametrize("bad", [1.5, "3", None, True, [4]])
def test_illegal_wrong_type(bad: object) -> None:
    assert_rejected(Engine("core").new("medium"), bad, "integer")


def test_numpy_integers_are_accepted() -> None:
    import numpy as np

    state = GameState("medium")
    state.apply(np.int64(place_a(state, 3, 3, 0)))
    assert state.phase == RESPOND


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


# --------------------------------------------------------------------------- diagrams, copies and pickles
def test_from_diagram_pairs_lying_megaliths_at_the_east_and_south_edges() -> None:
    """A lying megalith may lie along the east or south edge (a tilt east from the third
    column from the east ends there); from_diagram must accept such a position."""
    state = GameState.from_diagram("custom", ["...rr", ".....", "....w", "....w"], rows=4, cols=5)
    assert sorted(map(sorted, state.lying)) == [[3, 4], [14, 19]]


def _mid_game() -> GameState:
    state = GameState("medium")
    state.apply(place_a(state, 3, 3, 0))
    state.apply(tilt_a(state, 1))
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
