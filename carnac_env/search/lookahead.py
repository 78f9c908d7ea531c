"""Greedy's one-move lookahead, compiled, on the batched engine's state; and greedy playouts.

The evaluation is the ``greedy`` agent's (:mod:`carnac_env.agents.greedy` holds its
definition in Python and the agent): the sum of the player's colour groups' worth minus the
opponent's, a dolmen worth ``DOLMEN + size``, a smaller group touching an empty square
``PARTIAL * (size / (min_dolmen - 1)) ** 2``, a finished game ``WIN`` times the result on top.
A placement is worth the least of the positions after the opponent's legal replies (tilts and
decline); a response is worth the position after it.

* :func:`action_values_slot`: greedy's value of every legal action of a slot (the agent, the
  ``mcts`` agent's root ranking and the trainer's bootstrap games use it).
* :func:`greedy_action`: the best of them, ties broken by a SplitMix64 draw; with probability
  ``epsilon`` a uniformly random legal move instead (:func:`~carnac_env.search.playouts.random_action`).
* :func:`greedy_playout_value`: the mean result of playouts of such moves (the search's
  ``Playouts(policy="greedy")`` evaluator).

It lives here, below the search, so that the compiled search can play greedy playouts.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from carnac_env.batch.rng import splitmix
from carnac_env.batch.rules import copy_rules_state, legal_actions, play_unobserved, value_for, winner_of
from carnac_env.batch.scoring import group_into, winner_into
from carnac_env.batch.state import KernelState
from carnac_env.core.game import EMPTY, OVER, RED, RESPOND, WHITE
from carnac_env.search.playouts import random_action

__all__ = [
    "DOLMEN",
    "PARTIAL",
    "WIN",
    "Lookahead",
    "action_values_slot",
    "greedy_action",
    "greedy_playout_value",
    "lookahead_room",
]

DOLMEN = 100.0
PARTIAL = 40.0
WIN = 10_000.0
#: Values within this of the best are ties.
TIE = 1e-9

_JIT = {"cache": True, "nogil": True}


class Lookahead(NamedTuple):
    """Where the lookahead plays and writes (:func:`lookahead_room` makes one): slots ``slot``
    and ``slot + 1`` of ``work`` (a KernelState on the board) are its scratch games; ``actions``
    ``(4 * squares + 5,)`` int32 and ``values`` (float64, as long) receive the legal actions and
    their values; ``seen`` ``(squares,)`` bool, ``stack`` ``(squares + 1,)`` int32 and
    ``replies`` ``(5,)`` int32 are work space."""

    work: KernelState
    slot: int
    actions: np.ndarray
    values: np.ndarray
    seen: np.ndarray
    stack: np.ndarray
    replies: np.ndarray


@njit(**_JIT)
def lookahead_room(work, slot):  # pragma: no cover - compiled
    """A :class:`Lookahead` over slots ``slot`` and ``slot + 1`` of ``work``, with new arrays."""
    squares = work.cells.shape[1]
    return Lookahead(
        work,
        slot,
        np.empty(4 * squares + 5, np.int32),
        np.empty(4 * squares + 5, np.float64),
        np.zeros(squares, np.bool_),
        np.empty(squares + 1, np.int32),
        np.empty(5, np.int32),
    )


@njit(**_JIT)
def _touches_empty(kinds, neighbours, members, size):  # pragma: no cover - compiled
    """Whether any of the ``size`` squares ``members[:size]`` has an empty neighbour."""
    for k in range(size):
        square = members[k]
        for d in range(4):
            other = neighbours[square, d]
            if other >= 0 and kinds[other] == EMPTY:
                return True
    return False


@njit(**_JIT)
def evaluate_slot(st, i, player, seen, members):  # pragma: no cover - compiled
    """Greedy's static evaluation of game ``i`` of the kernel state ``st`` for ``player`` (the
    same sums, in the same order, as :func:`carnac_env.agents.greedy.evaluate`: groups by their
    first square, Red's colour first). The groups come from the compiled family's one flood
    fill, :func:`~carnac_env.batch.scoring.group_into` (``seen`` ``(S,)`` bool and ``members``
    ``(S + 1,)`` int32 are work space)."""
    cells = st.cells[i]
    kinds = st.kinds[i]
    neighbours = st.neighbours
    squares = cells.shape[0]
    min_dolmen = st.min_dolmen
    scale = max(min_dolmen - 1, 1)
    total = 0.0
    for colour in (RED, WHITE):
        sign = 1.0 if colour == player + 1 else -1.0
        for s in range(squares):
            seen[s] = False
        for start in range(squares):
            if cells[start] != colour or seen[start]:
                continue
            size = group_into(cells, neighbours, start, seen, members)
            if size >= min_dolmen:
                total += sign * (DOLMEN + size)
            elif _touches_empty(kinds, neighbours, members, size):
                total += sign * (PARTIAL * (size / scale) ** 2)
    winner = winner_of(st, i)  # NOT_OVER (-2) before the end
    if winner >= 0:
        total += WIN * (1.0 if winner == player else -1.0)
    return total


@njit(**_JIT)
def action_values_into(st, i, look):  # pragma: no cover - compiled
    """Greedy's value of every legal action of game ``i`` of ``st`` (the actions in increasing
    order into ``look.actions``, their values into ``look.values``; returns how many), playing
    in ``look``'s scratch slots (:class:`Lookahead`)."""
    work, w, actions, values = look.work, look.slot, look.actions, look.values
    seen, stack, replies = look.seen, look.stack, look.replies
    player = st.to_act[i]
    count = legal_actions(st, i, actions)
    responding = st.phase[i] == RESPOND
    for k in range(count):
        copy_rules_state(st, i, work, w)
        play_unobserved(work, w, actions[k])
        if not responding and work.phase[w] == RESPOND:
            answers = legal_actions(work, w, replies)
            worst = np.inf
            for r in range(answers):
                copy_rules_state(work, w, work, w + 1)
                play_unobserved(work, w + 1, replies[r])
                worst = min(worst, evaluate_slot(work, w + 1, player, seen, stack))
            values[k] = worst
        else:
            values[k] = evaluate_slot(work, w, player, seen, stack)
    return count


@njit(**_JIT)
def action_values_slot(st, i, work, actions, values):  # pragma: no cover - compiled
    """:func:`action_values_into` with slots 0 and 1 of ``work``, into ``actions`` and ``values``
    (work space of its own)."""
    squares = st.cells.shape[1]
    look = Lookahead(
        work, 0, actions, values, np.zeros(squares, np.bool_), np.empty(squares + 1, np.int32), np.empty(5, np.int32)
    )
    return action_values_into(st, i, look)


@njit(**_JIT)
def greedy_action(st, i, look, epsilon, x):  # pragma: no cover - compiled
    """Greedy's move in game ``i`` of ``st`` and the generator's next state: the best action by
    :func:`action_values_into` (in ``look``, a :class:`Lookahead`), a uniform draw
    among those within :data:`TIE` of the best; with ``epsilon`` > 0, first a draw that plays
    :func:`~carnac_env.search.playouts.random_action` instead with probability ``epsilon``."""
    x = np.uint64(x)
    if epsilon > 0.0:
        x, u = splitmix(x)
        if u < epsilon:
            return random_action(st, i, x)
    count = action_values_into(st, i, look)
    actions, values = look.actions, look.values
    best = -np.inf
    for k in range(count):
        best = max(best, values[k])
    ties = 0
    for k in range(count):
        if values[k] >= best - TIE:
            ties += 1
    x, u = splitmix(x)
    rank = int(u * ties)
    for k in range(count):
        if values[k] >= best - TIE:
            if rank == 0:
                return x, actions[k]
            rank -= 1
    return x, actions[count - 1]  # not reached


@njit(**_JIT)
def greedy_playout(st, i, look, epsilon, x):  # pragma: no cover - compiled
    """Play game ``i`` of ``st`` to the end with :func:`greedy_action` (changing it, unobserved);
    the winner (0, 1, -1 a draw) and the generator's next state."""
    x = np.uint64(x)
    over = st.phase[i] == OVER
    while not over:
        x, action = greedy_action(st, i, look, epsilon, x)
        over = play_unobserved(st, i, action)
    return winner_into(st.cells[i], st.neighbours, st.min_dolmen, st.seen, st.stack, st.balance), x


@njit(**_JIT)
def greedy_playout_value(st, i, look, j, playouts, epsilon, x):  # pragma: no cover - compiled
    """The mean result, for the player to act in game ``i`` of ``st``, of ``playouts`` greedy
    playouts (:func:`greedy_playout`; each played in slot ``j`` of ``look.work``, with the
    lookahead in ``look``, a :class:`Lookahead` on other slots; ``st`` is left as it was), and
    the generator's next state."""
    x = np.uint64(x)
    player = st.to_act[i]
    work = look.work
    total = 0.0
    for _ in range(playouts):
        copy_rules_state(st, i, work, j)
        winner, x = greedy_playout(work, j, look, epsilon, x)
        total += value_for(winner, player)
    return total / playouts, x
