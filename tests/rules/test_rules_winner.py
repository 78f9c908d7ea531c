"""The winner and every step of the tie-break chain, on every engine (carnac-rules.md,
"Scoring"): more dolmens wins; on equal counts the sorted sizes are compared position by
position, the first larger one winning; identical lists (no dolmens included) draw.

Each position is scored loaded from its diagram (a game in progress) and built move by move
until its last megalith ends the game, where the rewards of that final step are checked too.
"""

from __future__ import annotations

from typing import NamedTuple

from _engines import Dolmens, Engine, moves_to

from carnac_env.core import GameState, make_board


class Outcome(NamedTuple):
    dolmens: Dolmens
    winner: int | None
    rewards: tuple[float, float]

    def reward(self, player: int) -> float:
        return self.rewards[player]


def outcome(engine: Engine, diagram: str) -> Outcome:
    """The result of a hand-drawn position on ``engine``: its dolmens and winner, the same
    loaded (with megaliths to spare) and built by moves (with none to spare, so that the last
    move ends the game), and the rewards that last move gave."""
    lines = [line.strip() for line in diagram.strip().splitlines()]
    size = {"rows": len(lines), "cols": len(lines[0])}
    loaded = engine.from_diagram("custom", lines, megaliths=100, **size)
    exact = make_board("custom", megaliths=100 - loaded.supply, **size)
    built = engine.replay(exact, moves_to(GameState.from_diagram("custom", lines, megaliths=100, **size), exact))
    assert built.is_over, f"{engine.name}: the last megalith did not end the game"
    assert (loaded.dolmens(), loaded.winner()) == (built.dolmens(), built.winner())
    return Outcome(built.dolmens(), built.winner(), (built.reward(0), built.reward(1)))


def test_more_dolmens_wins_even_with_smaller_sizes(engine: Engine) -> None:
    result = outcome(
        engine,
        """
        RRR.RRR.
        ........
        WWWWWWWW
        """,
    )
    assert result.dolmens == ((3, 3), (8,))
    assert result.winner == 0
    assert result.reward(0) == 1 and result.reward(1) == -1


def test_more_dolmens_wins_for_white_too(engine: Engine) -> None:
    result = outcome(
        engine,
        """
        RRRRRRRRR.
        ..........
        WWW.WWW...
        """,
    )
    assert result.dolmens == ((9,), (3, 3))
    assert result.winner == 1
    assert result.reward(0) == -1 and result.reward(1) == 1


def test_equal_counts_largest_decides(engine: Engine) -> None:
    result = outcome(
        engine,
        """
        RRRR....
        ........
        WWWWW...
        """,
    )
    assert result.dolmens == ((4,), (5,))
    assert result.winner == 1
    assert result.reward(0) == -1 and result.reward(1) == 1


def test_equal_counts_largest_decides_whatever_the_totals(engine: Engine) -> None:
    """The first position decides, even against more squares in dolmens overall."""
    result = outcome(
        engine,
        """
        RRRRRR.RRR.
        ...........
        WWWWW.WWWWW
        """,
    )
    assert result.dolmens == ((6, 3), (5, 5))
    assert result.winner == 0
    assert result.reward(0) == 1 and result.reward(1) == -1


def test_equal_counts_equal_largest_second_decides(engine: Engine) -> None:
    result = outcome(
        engine,
        """
        RRRRR.RRRR
        ..........
        WWWWW.WWW.
        """,
    )
    assert result.dolmens == ((5, 4), (5, 3))
    assert result.winner == 0
    assert result.reward(0) == 1 and result.reward(1) == -1


THIRD = """
RRRRR.RRRR.RRRR
...............
WWWWW.WWWW.WWW.
"""


def test_third_position_decides(engine: Engine) -> None:
    result = outcome(engine, THIRD)
    assert result.dolmens == ((5, 4, 4), (5, 4, 3))
    assert result.winner == 0
    assert result.reward(0) == 1 and result.reward(1) == -1
    swapped = outcome(engine, THIRD.replace("R", "x").replace("W", "R").replace("x", "W"))
    assert swapped.dolmens == ((5, 4, 3), (5, 4, 4))
    assert swapped.winner == 1
    assert swapped.reward(0) == -1 and swapped.reward(1) == 1


def test_identical_lists_draw(engine: Engine) -> None:
    result = outcome(
        engine,
        """
        RRRR.RRR.
        .........
        WWW.WWWW.
        """,
    )
    assert result.dolmens == ((4, 3), (4, 3))
    assert result.winner is None
    assert result.reward(0) == result.reward(1) == 0


def test_no_dolmens_at_all_draws(engine: Engine) -> None:
    result = outcome(
        engine,
        """
        RR.WW.
        ......
        W.R...
        """,
    )
    assert result.dolmens == ((), ())
    assert result.winner is None
    assert result.reward(0) == result.reward(1) == 0


def test_bga_score_two_dolmens_of_3_and_9(engine: Engine) -> None:
    """The position of the BGA example (its displayed score, 209, is the core's: see
    test_rules_core_api.py); a dolmen against none wins."""
    result = outcome(
        engine,
        """
        RRRRRRRRR.RRR
        .............
        WW.WW.W.W.W.W
        """,
    )
    assert result.dolmens == ((9, 3), ())
    assert result.winner == 0
