"""What the search needs from the batched engine's game state, compiled: copying a game from one
slot to another, its legal actions, comparing two games, and random playouts.

The search never builds a :class:`~carnac_env.core.game.GameState`: it reads and plays games in
the kernel's :class:`~carnac_env.batch.state.KernelState` (the arrays that
:class:`~carnac_env.batch.BatchGame` steps), with the kernel's own rules functions
(:func:`~carnac_env.batch.rules.play`). A tree node's position is never stored; a simulation
copies its root game into a scratch slot and replays the actions down the tree, which costs a
few hundred nanoseconds on these boards.

Random playouts draw from SplitMix64 (:func:`splitmix`, also the generator of
:func:`~carnac_env.search.playouts.random_playout`): the same game and seed give the same
playout on every machine.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from carnac_env.batch import rules as _rules
from carnac_env.batch import scoring as _scoring
from carnac_env.core.game import EMPTY, OVER, PLACE, RESPOND

_JIT = {"cache": True, "nogil": True}

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


@njit(**_JIT)
def splitmix(x):  # pragma: no cover - compiled
    """SplitMix64: the next generator state and a uniform float in [0, 1)."""
    x = x + _GOLDEN
    z = x
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    z = z ^ (z >> np.uint64(31))
    return x, np.float64(z >> np.uint64(11)) * (1.0 / 9007199254740992.0)


#: ``winner`` of a game not over yet (0 Red, 1 White, -1 a draw otherwise).
NOT_OVER = -2


@njit(**_JIT)
def copy_rules_state(src, i, dst, j):  # pragma: no cover - compiled
    """Copy what the rules read of game ``i`` of ``src`` into slot ``j`` of ``dst``: the squares,
    the counts, the phase, the pending megalith and the empty-square list, not the observation
    planes or the lying pairs (written by the rules, never read by them). For a work slot that
    only plays on."""
    for s in range(src.cells.shape[1]):
        dst.cells[j, s] = src.cells[i, s]
        dst.kinds[j, s] = src.kinds[i, s]
        dst.free[j, s] = src.free[i, s]  # the empty-square list that placements update
        dst.where[j, s] = src.where[i, s]
    dst.num_lying[j] = src.num_lying[i]
    dst.supply[j] = src.supply[i]
    dst.empty[j] = src.empty[i]
    dst.phase[j] = src.phase[i]
    dst.to_act[j] = src.to_act[i]
    dst.pending[j] = src.pending[i]
    dst.pending_colour[j] = src.pending_colour[i]
    for d in range(4):
        dst.tilt_ok[j, d] = src.tilt_ok[i, d]


@njit(**_JIT)
def copy_game(src, i, dst, j):  # pragma: no cover - compiled
    """Copy game ``i`` of ``src`` into slot ``j`` of ``dst`` (two KernelStates on one board):
    :func:`copy_rules_state`, then the lying pairs, the observation planes and the place bits."""
    copy_rules_state(src, i, dst, j)
    for k in range(src.num_lying[i]):
        dst.lying[j, k, 0] = src.lying[i, k, 0]
        dst.lying[j, k, 1] = src.lying[i, k, 1]
    src_planes = src.planes
    dst_planes = dst.planes
    for player in range(2):
        for k in range(src_planes.shape[2]):
            dst_planes[player, j, k] = src_planes[player, i, k]
    for a in range(src.place_bits.shape[1]):
        dst.place_bits[j, a] = src.place_bits[i, a]


@njit(**_JIT)
def same_game(a, i, b, j):  # pragma: no cover - compiled
    """Whether game ``i`` of ``a`` and game ``j`` of ``b`` are the same position for play: the
    same squares, supply, phase, player to act and pending megalith (the order in which the
    megaliths fell does not change the game)."""
    if (
        a.phase[i] != b.phase[j]
        or a.to_act[i] != b.to_act[j]
        or a.supply[i] != b.supply[j]
        or a.pending[i] != b.pending[j]
        or a.pending_colour[i] != b.pending_colour[j]
    ):
        return False
    for s in range(a.cells.shape[1]):  # noqa: SIM110 (a loop numba compiles)
        if a.cells[i, s] != b.cells[j, s] or a.kinds[i, s] != b.kinds[j, s]:
            return False
    return True


@njit(**_JIT)
def legal_actions(st, i, out):  # pragma: no cover - compiled
    """Write game ``i``'s legal action numbers into ``out`` in increasing order; return how many
    (0 once the game is over). The same list as the core's ``legal_actions()``."""
    phase = st.phase[i]
    count = 0
    if phase == PLACE:
        kinds = st.kinds
        for s in range(kinds.shape[1]):
            if kinds[i, s] == EMPTY:
                for o in range(4):
                    out[count] = 4 * s + o
                    count += 1
    elif phase == RESPOND:
        base = 4 * st.cells.shape[1]
        for d in range(4):
            if st.tilt_ok[i, d]:
                out[count] = base + d
                count += 1
        out[count] = base + 4
        count += 1
    return count


@njit(**_JIT)
def legal_count(st, i):  # pragma: no cover - compiled
    """How many legal actions game ``i`` has (0 once over)."""
    phase = st.phase[i]
    if phase == PLACE:
        return 4 * st.empty[i]
    if phase == RESPOND:
        count = 1
        for d in range(4):
            count += st.tilt_ok[i, d]
        return count
    return 0


@njit(**_JIT)
def winner_of(st, i):  # pragma: no cover - compiled
    """The winner of finished game ``i`` (0 Red, 1 White, -1 a draw); :data:`NOT_OVER` before the end."""
    if st.phase[i] != OVER:
        return NOT_OVER
    return _scoring.dolmen_winner(st.cells[i], st.neighbours, st.min_dolmen)


@njit(inline="always", **_JIT)
def value_for(winner, player):  # pragma: no cover - compiled
    """A finished game's result for ``player``: +1 won, -1 lost, 0 a draw."""
    if winner < 0:
        return 0.0
    return 1.0 if winner == player else -1.0


@njit(inline="always", **_JIT)
def random_action(st, i, x):  # pragma: no cover - compiled
    """A uniformly random legal action of game ``i`` and the generator's next state.

    Placements draw (square, orientation) pairs until the square is empty (uniform over the
    legal placements, cheaper than counting them); a response is drawn uniformly among the
    legal tilts and declining."""
    x = np.uint64(x)  # a state passed back from Python may arrive as a signed integer
    squares = st.cells.shape[1]
    if st.phase[i] != PLACE:
        x, u = splitmix(x)
        return x, _rules.pick(st, i, u)
    kinds = st.kinds
    while True:
        x, u = splitmix(x)
        k = int(u * (4 * squares))
        if kinds[i, k >> 2] == EMPTY:
            return x, k


@njit(**_JIT)
def playout(st, i, x):  # pragma: no cover - compiled
    """Play game ``i`` of ``st`` to the end with uniformly random legal moves (changing it);
    return the winner (0, 1, -1 a draw) and the generator's next state."""
    x = np.uint64(x)  # a state passed back from Python may arrive as a signed integer
    over = st.phase[i] == OVER
    while not over:
        x, action = random_action(st, i, x)
        over = _rules.play(st, i, action)
    return _scoring.dolmen_winner(st.cells[i], st.neighbours, st.min_dolmen), x


@njit(**_JIT)
def playout_value(st, i, work, j, playouts, x):  # pragma: no cover - compiled
    """The mean result, for the player to act in game ``i`` of ``st``, of ``playouts`` random
    playouts (each played in slot ``j`` of ``work``, a KernelState on the same board; ``st`` is
    left as it was), and the generator's next state."""
    x = np.uint64(x)  # a state passed back from Python may arrive as a signed integer
    player = st.to_act[i]
    total = 0.0
    for _ in range(playouts):
        copy_rules_state(st, i, work, j)
        winner, x = playout(work, j, x)
        total += value_for(winner, player)
    return total / playouts, x


def seed_state(seed: int) -> np.uint64:
    """A SplitMix64 state from any integer (taken modulo 2**64)."""
    return np.uint64(int(seed) % 2**64)
