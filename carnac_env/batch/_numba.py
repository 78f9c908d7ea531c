"""The optional numba accelerator of :class:`carnac_env.batch.BatchGame` (``pip install carnac-env[accel]``).

The same rules as the numpy path in :mod:`carnac_env.batch.engine`, written as one loop over
the games and compiled: the same state arrays, updated the same way (planes and place bits
included), so everything else in BatchGame (reset, observe, get_state, set_state) is shared.
The differential tests run both paths against the core. Importing this module raises
ImportError when numba is missing; the engine then uses numpy.
"""

from __future__ import annotations

import numpy as np
from numba import njit

PLACE, RESPOND, OVER = 0, 1, 2
STANDING, LYING = 1, 2
PLANES, AWAITING, TILT_OWN, TILT_OPPONENT, TO_ACT, SUPPLY = 9, 4, 5, 6, 7, 8


@njit(cache=True, nogil=True)
def check_legal(actions, active, num_actions, squares, phase, kinds, tilt_ok):  # pragma: no cover - compiled
    """Number of illegal actions among the active games (0: all legal)."""
    base = 4 * squares
    bad = 0
    for i in range(actions.shape[0]):
        if not active[i]:
            continue
        a = actions[i]
        if a < 0 or a >= num_actions:
            bad += 1
        elif a < base:
            if phase[i] != PLACE or kinds[i, a >> 2] != 0:
                bad += 1
        elif phase[i] != RESPOND or (a < base + 4 and not tilt_ok[i, a - base]):
            bad += 1
    return bad


@njit(cache=True, nogil=True)
def _winner(cells, i, neighbours, min_dolmen, seen, stack, red, white):  # pragma: no cover - compiled
    """0 Red wins, 1 White wins, -1 draw (the core's tie-break chain)."""
    squares = cells.shape[1]
    seen[:] = 0
    n_red = 0
    n_white = 0
    for start in range(squares):
        colour = cells[i, start]
        if colour == 0 or seen[start]:
            continue
        seen[start] = 1
        stack[0] = start
        top = 1
        size = 0
        while top:
            top -= 1
            square = stack[top]
            size += 1
            for d in range(4):
                other = neighbours[square, d]
                if other >= 0 and not seen[other] and cells[i, other] == colour:
                    seen[other] = 1
                    stack[top] = other
                    top += 1
        if size >= min_dolmen:
            if colour == 1:
                red[n_red] = size
                n_red += 1
            else:
                white[n_white] = size
                n_white += 1
    if n_red != n_white:
        return 0 if n_red > n_white else 1
    r = np.sort(red[:n_red])[::-1]
    w = np.sort(white[:n_white])[::-1]
    for k in range(n_red):
        if r[k] != w[k]:
            return 0 if r[k] > w[k] else 1
    return -1


@njit(cache=True, nogil=True)
def step(  # pragma: no cover - compiled
    actions,
    active,
    megaliths,
    min_dolmen,
    last_tilt,
    tilt_first,
    tilt_second,
    neighbours,
    cells,
    kinds,
    supply,
    empty,
    phase,
    to_act,
    pending,
    pending_ns,
    tilt_ok,
    lying,
    num_lying,
    planes,
    place_bits,
    rewards,
    terminated,
    final,
    final_observer,
    want_final,
):
    """Play the (already checked) actions of the active games, score and reset the finished ones."""
    n, squares = cells.shape
    base = 4 * squares
    seen = np.zeros(squares, np.int8)
    stack = np.zeros(squares, np.int64)
    red = np.zeros(squares, np.int64)
    white = np.zeros(squares, np.int64)
    for i in range(n):
        if not active[i]:
            continue
        a = actions[i]
        over = False
        if a < base:
            square = a >> 2
            orientation = a & 3
            mover = to_act[i]
            top = (2 - mover) if orientation & 1 else mover + 1
            north_south = (3 - top) if orientation & 2 else top
            cells[i, square] = top
            kinds[i, square] = STANDING
            planes[0, i, square, top - 1] = 1
            planes[1, i, square, 2 - top] = 1
            planes[0, i, square, 2] = 1
            planes[1, i, square, 2] = 1
            for k in range(4):
                place_bits[i, 4 * square + k] = False
            supply[i] -= 1
            empty[i] -= 1
            can_tilt = False
            for d in range(4):
                ok = kinds[i, tilt_first[square, d]] == 0 and kinds[i, tilt_second[square, d]] == 0
                tilt_ok[i, d] = ok
                can_tilt |= ok
            last = supply[i] == 0
            if can_tilt and (last_tilt or not last):
                phase[i] = RESPOND
                pending[i] = square
                pending_ns[i] = north_south
                to_act[i] = 1 - mover
            else:
                tilt_ok[i, :] = False
                if last or empty[i] == 0:
                    over = True
                else:
                    to_act[i] = 1 - mover
        else:
            if a < base + 4:
                d = a - base
                origin = pending[i]
                first = tilt_first[origin, d]
                second = tilt_second[origin, d]
                colour = (3 - pending_ns[i]) if d & 1 else pending_ns[i]
                cells[i, origin] = 0
                kinds[i, origin] = 0
                for p in range(4):
                    planes[0, i, origin, p] = 0
                    planes[1, i, origin, p] = 0
                for k in range(4):
                    place_bits[i, 4 * origin + k] = True
                for square in (first, second):
                    cells[i, square] = colour
                    kinds[i, square] = LYING
                    planes[0, i, square, colour - 1] = 1
                    planes[1, i, square, 2 - colour] = 1
                    planes[0, i, square, 3] = 1
                    planes[1, i, square, 3] = 1
                    for k in range(4):
                        place_bits[i, 4 * square + k] = False
                lying[i, num_lying[i], 0] = first
                lying[i, num_lying[i], 1] = second
                num_lying[i] += 1
                empty[i] -= 1
            else:
                to_act[i] = 1 - to_act[i]
            pending[i] = -1
            pending_ns[i] = 0
            tilt_ok[i, :] = False
            if supply[i] == 0:
                over = True
            else:
                phase[i] = PLACE
        if over:
            winner = _winner(cells, i, neighbours, min_dolmen, seen, stack, red, white)
            if winner >= 0:
                rewards[i, winner] = 1.0
                rewards[i, 1 - winner] = -1.0
            terminated[i] = True
            if want_final:
                observer = final_observer[i]
                for s in range(squares):
                    for p in range(4):
                        final[i, s, p] = planes[observer, i, s, p]
                    final[i, s, SUPPLY] = supply[i]
            # A fresh game in slot i.
            cells[i, :] = 0
            kinds[i, :squares] = 0
            supply[i] = megaliths
            empty[i] = squares
            phase[i] = PLACE
            to_act[i] = 0
            pending[i] = -1
            pending_ns[i] = 0
            num_lying[i] = 0
            planes[:, i, :, :] = 0
            planes[:, i, :, TO_ACT] = 1
            place_bits[i, :base] = True


@njit(cache=True, nogil=True)
def observe(
    to_act, supply, phase, pending, pending_ns, tilt_ok, tilt_first, tilt_second, planes, place_bits, obs, mask
):  # pragma: no cover - compiled
    """Write the observations ``(N, S*9)`` and masks of all games (seen by the player to act).

    ``planes`` is the ``(2*N, S*9)`` view of the engine's planes (row ``player*N + i``).
    """
    n = obs.shape[0]
    width = obs.shape[1]
    actions = mask.shape[1]
    base = actions - 5
    for i in range(n):
        player = to_act[i]
        row = player * n + i
        for j in range(width):
            obs[i, j] = planes[row, j]
        for j in range(SUPPLY, width, PLANES):
            obs[i, j] = supply[i]
        if phase[i] == RESPOND:
            origin = pending[i]
            obs[i, origin * PLANES + AWAITING] = 1
            for j in range(base):
                mask[i, j] = False
            for d in range(4):
                ok = tilt_ok[i, d]
                mask[i, base + d] = ok
                if ok:
                    colour = (3 - pending_ns[i]) if d & 1 else pending_ns[i]
                    plane = TILT_OWN if colour == player + 1 else TILT_OPPONENT
                    obs[i, tilt_first[origin, d] * PLANES + plane] = 1
                    obs[i, tilt_second[origin, d] * PLANES + plane] = 1
            mask[i, base + 4] = True
        else:
            for j in range(actions):
                mask[i, j] = place_bits[i, j]


@njit(cache=True, nogil=True)
def sample(uniform, phase, empty, kinds, tilt_ok, actions):  # pragma: no cover - compiled
    """Map one uniform number per game to a legal action, exactly as the numpy path does."""
    squares = kinds.shape[1] - 1
    for i in range(uniform.shape[0]):
        if phase[i] == PLACE:
            k = int(uniform[i] * (4 * empty[i]))
            rank = k >> 2
            for s in range(squares):
                if kinds[i, s] == 0:
                    if rank == 0:
                        actions[i] = 4 * s + (k & 3)
                        break
                    rank -= 1
        else:
            count = 1
            for d in range(4):
                count += tilt_ok[i, d]
            k = int(uniform[i] * count)
            choice = 4
            for d in range(4):
                if tilt_ok[i, d]:
                    if k == 0:
                        choice = d
                        break
                    k -= 1
            actions[i] = 4 * squares + choice
