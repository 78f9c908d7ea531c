"""The last megalith, solved without a search tree: the solver's leaf layer (numba).

When the player to place holds the supply's last megalith, every line ends the game after it:
the placement, then at most the opponent's tilt or decline. So the position's value is a
maximum over placements of a minimum over responses of scored final boards, and every final
board is the current one with one square coloured (the megalith left standing) or two (a
tilt). :func:`last_megalith` computes that value on the position itself, without playing a
move: it labels the current groups once, and scores each final board from the groups the new
squares touch (the merged groups' dolmens go, the new group's comes), through the same
dolmen balance and tie-break chain as the compiled scorer
(:func:`~carnac_env.batch.scoring.winner_from_balance`).

The plain search reaches the same value by copying the engine slot for each placement and
each response, entering each response node through the transposition table, and scoring each
final board by a flood fill of the whole board. Nothing here restates a rule: the colours come
from the kernel's :func:`~carnac_env.batch.rules.tilt_colours` and
:func:`~carnac_env.batch.rules.tilt_colour`, the squares a tilt covers and whether it fits from
the kernel's ``tilt_squares`` and :func:`~carnac_env.batch.rules.tilt_fits`, and whether the
opponent answers at all from :func:`~carnac_env.batch.rules.gets_response`.
tests/solve/test_last_megalith.py checks it against the plain search on random positions of
several boards, margins included.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from carnac_env.batch.rules import gets_response, place_number, tilt_colour, tilt_colours, tilt_fits, value_for
from carnac_env.batch.scoring import winner_from_balance
from carnac_env.core.game import EMPTY, RED

__all__ = ["last_megalith", "last_work"]

_JIT = {"cache": True, "nogil": True}
_INLINE = {"inline": "always", **_JIT}


def last_work(squares: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The work arrays of :func:`last_megalith` on a board of ``squares`` squares: each
    square's group label, each group's size, the dolmen balance, a flood-fill stack and the
    labels merged by one final board."""
    return (
        np.empty(squares, np.int32),
        np.empty(squares + 1, np.int32),
        np.zeros(squares + 1, np.int32),
        np.empty(squares + 1, np.int32),
        np.empty(8, np.int32),
    )


@njit(**_JIT)
def _label(cells, neighbours, min_dolmen, labels, sizes, balance, stack):  # pragma: no cover - compiled
    """Label the same-coloured groups of ``cells`` (``labels[s]``, -1 on an empty square;
    ``sizes[label]``), fill ``balance[k]`` (Red's dolmens of ``k`` squares minus White's) and
    return Red's dolmens minus White's."""
    squares = cells.shape[0]
    for s in range(squares):
        labels[s] = -1
    for k in range(balance.shape[0]):
        balance[k] = 0
    total = 0
    count = 0
    for start in range(squares):
        colour = cells[start]
        if colour == EMPTY or labels[start] >= 0:
            continue
        labels[start] = count
        stack[0] = start
        head = 0
        size = 1
        while head < size:
            square = stack[head]
            head += 1
            for d in range(4):
                other = neighbours[square, d]
                if other >= 0 and labels[other] < 0 and cells[other] == colour:
                    labels[other] = count
                    stack[size] = other
                    size += 1
        sizes[count] = size
        count += 1
        if size >= min_dolmen:
            sign = 1 if colour == RED else -1
            balance[size] += sign
            total += sign
    return total


@njit(**_INLINE)
def _join(cells, neighbours, labels, sizes, merged, count, square, colour):  # pragma: no cover - compiled
    """Add the groups of ``colour`` beside ``square`` to ``merged[:count]`` (each once); return
    the new count and the squares they add."""
    added = 0
    for d in range(4):
        other = neighbours[square, d]
        if other >= 0 and cells[other] == colour:
            label = labels[other]
            known = False
            for j in range(count):
                known |= merged[j] == label
            if not known:
                merged[count] = label
                count += 1
                added += sizes[label]
    return count, added


@njit(**_INLINE)
def _final(cells, neighbours, min_dolmen, lw, total, one, two, colour, player, scale):  # pragma: no cover - compiled
    """The value for ``player`` of the final board that is ``cells`` with square ``one`` (and
    ``two`` unless it is -1) showing ``colour``: its result (+1, 0, -1) with ``scale`` 0,
    else ``result * scale + margin`` as the search's leaves score it."""
    labels, sizes, balance, _, merged = lw
    count, size = _join(cells, neighbours, labels, sizes, merged, 0, one, colour)
    size += 1
    if two >= 0:
        count, more = _join(cells, neighbours, labels, sizes, merged, count, two, colour)
        size += more + 1
    sign = 1 if colour == RED else -1
    changed = total
    for j in range(count):
        old = sizes[merged[j]]
        if old >= min_dolmen:
            balance[old] -= sign
            changed -= sign
    if size >= min_dolmen:
        balance[size] += sign
        changed += sign
    result = int(value_for(winner_from_balance(changed, balance), player))
    if size >= min_dolmen:  # put the balance back
        balance[size] -= sign
    for j in range(count):
        old = sizes[merged[j]]
        if old >= min_dolmen:
            balance[old] += sign
    if scale == 0:
        return result
    return result * scale + (changed if player == 0 else -changed)  # player 0 is Red


@njit(**_INLINE)
def _can_tilt(st, i, square):  # pragma: no cover - compiled
    """Whether a megalith placed on ``square`` of game ``i`` could tilt in some direction."""
    can = False
    for d in range(4):
        can |= tilt_fits(st, i, square, d)
    return can


@njit(**_INLINE)
def _placement(
    st, i, lw, total, player, square, orientation, can_tilt, left, floor, scale
):  # pragma: no cover - compiled
    """The value for ``player`` of placing on ``square`` with ``orientation`` if the game ended
    with this megalith: the minimum over the opponent's answers (each tilt that fits, and the
    decline; none when :func:`gets_response` says so with ``left`` megaliths left) of the board after
    it, each scored by :func:`_final` on the groups of the position (``total`` its balance).
    Stops once the value is at most ``floor`` (then it is an upper bound). Returns ``(value,
    boards scored)``."""
    cells = st.cells[i]
    neighbours = st.neighbours
    min_dolmen = st.min_dolmen
    top, north_south, _ = tilt_colours(player, orientation)
    value = _final(cells, neighbours, min_dolmen, lw, total, square, -1, top, player, scale)
    scored = 1
    if gets_response(can_tilt, left, st.last_tilt):
        for d in range(4):
            if value <= floor:
                break
            if tilt_fits(st, i, square, d):
                one, two = st.tilt_squares[square, d, 0], st.tilt_squares[square, d, 1]
                colour = tilt_colour(north_south, d)
                value = min(value, _final(cells, neighbours, min_dolmen, lw, total, one, two, colour, player, scale))
                scored += 1
    return value, scored


@njit(**_JIT)
def last_megalith(st, i, alpha, beta, scale, first_move, lw):  # pragma: no cover - compiled
    """The value (fail-soft in the window ``(alpha, beta)``) and a best placement of game
    ``i``, whose player to act places the supply's last megalith, for that player: a maximum
    over placements of the minimum over the opponent's answers (each tilt that fits, and the
    decline; none when :func:`gets_response` says so) of the final board's value, scored as
    the search's leaves are (``scale`` as there). ``first_move`` (a placement, or -1) is tried
    first; placements otherwise go square by square and orientation by orientation, and of
    two orientations that show the same colours when no tilt fits (``o`` and ``o ^ 2``) only
    the first is tried, as in the search. Returns ``(value, placement, final boards scored)``."""
    labels, sizes, balance, stack, _ = lw
    total = _label(st.cells[i], st.neighbours, st.min_dolmen, labels, sizes, balance, stack)
    player = st.to_act[i]
    best = -(2 * scale + 2)  # below every value
    best_move = -1
    scored = 0
    for n in range(-1, 4 * st.cells.shape[1]):
        if n < 0:  # the table's move first
            if first_move < 0:
                continue
            action = first_move
        else:
            action = n
            if action == first_move:
                continue
        square = action >> 2
        orientation = action & 3
        if st.kinds[i, square] != EMPTY:
            continue
        can_tilt = _can_tilt(st, i, square)
        if (orientation & 2) and not can_tilt:
            continue
        # a placement that cannot raise the best needs no more answers
        value, boards = _placement(st, i, lw, total, player, square, orientation, can_tilt, 0, max(alpha, best), scale)
        scored += boards
        if value > best:
            best = value
            best_move = place_number(square, orientation)
            if best >= beta:
                break
    return best, best_move, scored


@njit(**_JIT)
def order_placements(st, i, row, front, count, scale, lw, scores):  # pragma: no cover - compiled
    """Sort the placements ``row[front:count]`` of game ``i`` best first for its player to act,
    by what each would give if the game ended with this megalith: the minimum over the
    opponent's answers (as :func:`last_megalith` scores them, with ``scale``) of the board
    after it. A static look-ahead of one megalith, for move ordering only (``scores`` is work
    space of ``count`` entries at least); ties keep the kernel's order."""
    labels, sizes, balance, stack, _ = lw
    total = _label(st.cells[i], st.neighbours, st.min_dolmen, labels, sizes, balance, stack)
    player = st.to_act[i]
    below = -(2 * scale + 3)  # below every value: every answer is scored
    for j in range(front, count):
        square = row[j] >> 2
        can_tilt = _can_tilt(st, i, square)
        value, _ = _placement(st, i, lw, total, player, square, row[j] & 3, can_tilt, st.supply[i] - 1, below, scale)
        scores[j] = -value
    order = np.argsort(scores[front:count], kind="mergesort")
    moved = row[front:count].copy()
    for j in range(order.shape[0]):
        row[front + j] = moved[order[j]]
