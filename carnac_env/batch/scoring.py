"""The compiled scorer: the winner of finished positions by the core's dolmen rules (numba).

:func:`dolmen_winner` is the compiled form of :func:`carnac_env.core.scoring.score`'s winner,
callable from Python and from numba code; :func:`winner_into` is the same with work arrays
supplied (the batched engine keeps them in its state), and :func:`winners` scores many rows;
:func:`dolmens_of` gives each player's dolmen sizes (for the vector env's infos). They, and
the ``greedy`` agent's evaluation, find groups with the compiled family's one flood fill,
:func:`group_into`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from carnac_env.core.game import RED, WHITE

_JIT = {"cache": True, "nogil": True}


@njit(**_JIT)
def dolmen_winner(cells, neighbours, min_dolmen):  # pragma: no cover - compiled
    """The winner of a position: 0 Red, 1 White, -1 a draw (the core's scoring rules).

    Args:
        cells: ``(S,)`` cell colours of one game (0 empty, 1 red, 2 white).
        neighbours: ``Board.arrays.neighbours``.
        min_dolmen: the smallest group that counts as a dolmen.

    Callable from Python and from other numba code; :func:`winner_into` is the same with
    work arrays supplied by the caller.
    """
    squares = cells.shape[0]
    return winner_into(
        cells,
        neighbours,
        min_dolmen,
        np.empty(squares, np.bool_),
        np.empty(squares + 1, np.int32),
        np.empty(squares + 1, np.int32),
    )


@njit(**_JIT)
def group_into(cells, neighbours, start, seen, members):  # pragma: no cover - compiled
    """The size of the same-coloured group around ``start`` (a flood fill over ``neighbours``),
    marking its squares in ``seen`` and listing them in ``members[:size]`` (``(S + 1,)`` int32;
    the last entry is work space)."""
    colour = cells[start]
    seen[start] = True
    members[0] = start
    head = 0
    size = 1
    while head < size:
        square = members[head]
        head += 1
        for d in range(4):
            # Without branches (a neighbour's colour is a coin toss to the branch predictor):
            # off the board (-1) reads square 0 and is ignored; the entry after the list is
            # always written and counted only when it joins (so the list needs S + 1 entries).
            other = neighbours[square, d]
            at = max(other, 0)
            joins = (other >= 0) & (cells[at] == colour) & (seen[at] == 0)
            seen[at] = seen[at] | joins
            members[size] = at
            size += joins
    return size


@njit(inline="always", **_JIT)
def dolmen_balance_into(cells, neighbours, min_dolmen, seen, stack, balance):  # pragma: no cover - compiled
    """Red's dolmens minus White's in one position (the work arrays as in :func:`winner_into`),
    and ``balance[k]``: Red's dolmens of ``k`` squares minus White's (overwritten). Dolmens are
    the maximal same-coloured groups of at least ``min_dolmen`` squares (:func:`group_into`)."""
    squares = cells.shape[0]
    for s in range(squares):
        seen[s] = False
    for k in range(squares + 1):
        balance[k] = 0
    total = 0
    for start in range(squares):
        colour = cells[start]
        if (colour != RED and colour != WHITE) or seen[start]:
            continue
        size = group_into(cells, neighbours, start, seen, stack)
        if size >= min_dolmen:
            sign = 1 if colour == RED else -1
            balance[size] += sign
            total += sign
    return total


@njit(inline="always", **_JIT)
def winner_from_balance(total, balance):  # pragma: no cover - compiled
    """The winner (0 Red, 1 White, -1 a draw) from :func:`dolmen_balance_into`'s results."""
    if total != 0:
        return 0 if total > 0 else 1
    for k in range(balance.shape[0] - 1, 0, -1):  # largest first
        if balance[k] != 0:
            return 0 if balance[k] > 0 else 1
    return -1


@njit(**_JIT)
def winner_into(cells, neighbours, min_dolmen, seen, stack, balance):  # pragma: no cover - compiled
    """:func:`dolmen_winner` with its work arrays given: ``seen`` ``(S,)`` bool, ``stack``
    ``(S + 1,)`` int32 and ``balance`` ``(S + 1,)`` int32 (overwritten).

    Dolmens are the maximal same-coloured groups of at least ``min_dolmen`` squares (found
    by :func:`group_into`); ``balance[k]`` counts Red's dolmens of ``k`` squares minus White's.
    More dolmens wins; on equal counts the largest size at which the counts differ decides,
    for the player with more dolmens of that size, which is the core's comparison of the
    sorted size lists position by position; identical lists draw.
    """
    total = dolmen_balance_into(cells, neighbours, min_dolmen, seen, stack, balance)
    return winner_from_balance(total, balance)


@njit(**_JIT)
def winners(cells, neighbours, min_dolmen, out):  # pragma: no cover - compiled
    """:func:`dolmen_winner` of every row of ``cells`` ``(K, S)`` into ``out`` ``(K,)``."""
    squares = cells.shape[1]
    seen = np.empty(squares, np.bool_)
    stack = np.empty(squares + 1, np.int32)
    balance = np.empty(squares + 1, np.int32)
    for k in range(cells.shape[0]):
        out[k] = winner_into(cells[k], neighbours, min_dolmen, seen, stack, balance)


@njit(**_JIT)
def dolmens_into(cells, neighbours, min_dolmen, seen, stack, sizes):  # pragma: no cover - compiled
    """Each player's dolmen sizes in one position, largest first and zero-padded (``seen``
    ``(S,)`` bool and ``stack`` ``(S + 1,)`` int32 are work space):
    ``sizes[0]`` Red's, ``sizes[1]`` White's (``(2, slots)``, overwritten; ``slots`` at least
    ``squares // min_dolmen``, the most dolmens a player can have)."""
    squares = cells.shape[0]
    for s in range(squares):
        seen[s] = False
    sizes[:] = 0
    counts = np.zeros(2, np.int64)
    for start in range(squares):
        colour = cells[start]
        if (colour != RED and colour != WHITE) or seen[start]:
            continue
        size = group_into(cells, neighbours, start, seen, stack)
        if size >= min_dolmen:
            player = colour - RED
            sizes[player, counts[player]] = size
            counts[player] += 1
    for player in range(2):
        found = np.sort(sizes[player, : counts[player]])[::-1]
        for k in range(counts[player]):
            sizes[player, k] = found[k]


@njit(**_JIT)
def dolmens_of(cells, neighbours, min_dolmen, out):  # pragma: no cover - compiled
    """:func:`dolmens_into` for every row of ``cells`` ``(K, S)`` into ``out`` ``(K, 2, slots)``."""
    squares = cells.shape[1]
    seen = np.empty(squares, np.bool_)
    stack = np.empty(squares + 1, np.int32)
    for k in range(cells.shape[0]):
        dolmens_into(cells[k], neighbours, min_dolmen, seen, stack, out[k])
