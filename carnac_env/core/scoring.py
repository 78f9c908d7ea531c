"""Dolmens, the winner and the BGA score.

Seen from above, every covered square shows one colour. A *dolmen* is a maximal group of
orthogonally connected squares of one colour with at least ``min_dolmen`` squares. More
dolmens wins; on equal counts the dolmen sizes, sorted from largest down, are compared
position by position and the first larger one wins; identical lists (including two empty
ones) are a draw. Board Game Arena shows 100 points per dolmen plus the size of the
player's largest dolmen; that score is reported but never decides the winner.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from carnac_env.core.boards import Board


def groups(board: Board, cells: Sequence[int], colour: int) -> list[list[int]]:
    """All maximal orthogonally connected groups of squares showing ``colour``.

    Args:
        board: the board the cells belong to.
        cells: one value per square (row-major): 0 empty, 1 red, 2 white.
        colour: the cell value to group (1 red, 2 white).

    Returns:
        The groups, each a sorted list of squares, in order of their first square.
    """
    seen = bytearray(board.squares)
    neighbours = board.neighbours
    found = []
    for start in range(board.squares):
        if cells[start] != colour or seen[start]:
            continue
        seen[start] = 1
        stack = [start]
        group = []
        while stack:
            square = stack.pop()
            group.append(square)
            for other in neighbours[square]:
                if not seen[other] and cells[other] == colour:
                    seen[other] = 1
                    stack.append(other)
        found.append(sorted(group))
    return found


def dolmens(board: Board, cells: Sequence[int]) -> list[tuple[int, list[int]]]:
    """Every dolmen on the board as ``(colour, squares)``: Red's (colour 1) first, then
    White's (2); a dolmen is a group of at least ``board.min_dolmen`` squares."""
    return [(colour, g) for colour in (1, 2) for g in groups(board, cells, colour) if len(g) >= board.min_dolmen]


def dolmen_sizes(board: Board, cells: Sequence[int], colour: int) -> list[int]:
    """Sizes of the dolmens of ``colour`` (cell value 1 red, 2 white), largest first."""
    sizes = [len(g) for g in groups(board, cells, colour) if len(g) >= board.min_dolmen]
    sizes.sort(reverse=True)
    return sizes


def compare_dolmens(first: Sequence[int], second: Sequence[int]) -> int:
    """The tie-break chain: 1 if ``first`` wins, -1 if ``second`` wins, 0 for a draw.

    Both arguments are dolmen sizes sorted largest first. More dolmens wins; on equal
    counts the first position where the sizes differ decides; identical lists draw.
    """
    if len(first) != len(second):
        return 1 if len(first) > len(second) else -1
    for a, b in zip(first, second):
        if a != b:
            return 1 if a > b else -1
    return 0


def bga_score(sizes: Sequence[int]) -> int:
    """Board Game Arena's displayed score: 100 per dolmen plus the largest dolmen's size."""
    return 100 * len(sizes) + (max(sizes) if sizes else 0)


@dataclass(frozen=True)
class Result:
    """The outcome of a finished game.

    Attributes:
        winner: 0 (Red, player_0), 1 (White, player_1) or ``None`` for a draw.
        dolmens: per player, that player's dolmen sizes, largest first.
        scores: per player, the BGA score.
    """

    winner: int | None
    dolmens: tuple[tuple[int, ...], tuple[int, ...]]
    scores: tuple[int, int]

    def reward(self, player: int) -> int:
        """+1 if ``player`` won, -1 if they lost, 0 for a draw."""
        if self.winner is None:
            return 0
        return 1 if self.winner == player else -1

    def to_dict(self) -> dict:
        """A JSON-ready form, as stored in game records."""
        return {
            "winner": self.winner,
            "dolmens": [list(self.dolmens[0]), list(self.dolmens[1])],
            "scores": list(self.scores),
        }


def score(board: Board, cells: Sequence[int]) -> Result:
    """Score a position: both players' dolmens, the winner by the tie-break chain, BGA scores."""
    red = dolmen_sizes(board, cells, 1)
    white = dolmen_sizes(board, cells, 2)
    order = compare_dolmens(red, white)
    winner = None if order == 0 else (0 if order > 0 else 1)
    return Result(winner, (tuple(red), tuple(white)), (bga_score(red), bga_score(white)))
