"""An exact solver of Carnac endgames: alpha-beta to the end of the game, compiled with numba.

:func:`solve` returns the game-theoretic result of a position for the player to act (+1 a
win, 0 a draw, -1 a loss, under the full tie-break chain of the rules: more dolmens, then the
sorted dolmen sizes, then a draw), a move that achieves it, the number of nodes searched, and
on request the exact final dolmen margin. docs/solver.md is the user's page (measured speed
and depth per board).

**The rules are the batch kernel's.** The search runs on a
:class:`~carnac_env.batch.state.KernelState` with one slot per ply, loaded from the core state
by :func:`~carnac_env.batch.state.game_fields`: a child is the parent's slot copied one slot
down (:func:`~carnac_env.batch.rules.copy_rules_state`) and played there
(:func:`~carnac_env.batch.rules.play_unobserved`); the legal moves are
:func:`~carnac_env.batch.rules.legal_actions` and a finished game is scored by the compiled
scorer (:func:`~carnac_env.batch.scoring.dolmen_balance_into`, the dolmen counts, and
:func:`~carnac_env.batch.scoring.winner_from_balance`, the tie-break chain). Nothing here
restates a rule.

**The algorithm.** Depth-first negamax (fail-soft) with an alpha-beta window over the three
outcomes. The player to act does not simply alternate (after a placement the *other* player
answers the tilt or decline, and after a decline the placer places again), so a child's value
is negated only when the player to act in the child differs from the parent's. The search
always runs to the end of the game, so its depth is bounded by the megaliths left (a placement
and at most one response each): positions with more than ``max_megaliths_left`` megaliths in
the supply are refused. It is a loop over per-ply frames, not a recursive function (numba's
on-disk cache does not link a cached recursive call, numba issue 6061: that crashed the
solver run from the cache), so it pauses every few thousand nodes when ``seconds`` is set and
resumes where it stopped. Move ordering: the transposition table's best move first, then (with
``killers=True``) the two last moves that caused a cut-off at the same ply, then (with
``adjacent`` 1 or 2) the placements beside a megalith (2: the most megaliths beside first),
then, from ``order`` megaliths left on (3 by default), the placements by a one-megalith
look-ahead (:func:`~carnac_env.solve.last_megalith.order_placements`: what each would give if
the game ended with it, the opponent answering at worst), else the kernel's order (tilts
before the decline, placements square by square; other orderings were measured and dropped,
see docs/solver.md). Two placements that differ only in which axis carries the top colour
(orientations ``o`` and ``o ^ 2``) lead to the same position when no tilt of that square fits;
only one of them is searched.

**The last megalith** (``last_megalith=True``, the default) is solved without a tree:
:func:`~carnac_env.solve.last_megalith.last_megalith` scores each final board from the groups
its new squares touch, where the tree would copy a slot and flood-fill the board per answer.

**Null windows** (``null_window=True``; off by default, like the levers below: on the fixed set
they gained 1.2x in nodes at 8 left, not enough to change what the solver answers). The result
is found by two searches over a window one wide, each a yes-or-no question: is it a win (value
> 0)? If not, is it a draw (value >= 0)? A win or a draw's move comes from the search that
proved it; a loss's move is the root's best move of the second search (every move loses).

**Enhanced transposition cut-offs** (``etc=True``): a node with at least :data:`ETC_SUPPLY`
megaliths left first looks its children up in the table, and returns at once when one of them
is known to reach the window's top.

**The margin.** With ``margin=True`` a second search runs over integers ``result * scale +
margin`` (:func:`margin_scale`), which order as the (result, margin) pairs do, in the window of
the known result; its table entries carry a key of their own.

**The transposition table.** Keyed by a 64-bit Zobrist hash of the position (each square's
contents, the player to act, the phase, the pending megalith and its tilt colour, the supply),
stored in full to tell entries apart. With ``symmetry=True`` a position with at
most :data:`SYMMETRY_PLACED` megaliths placed is keyed by the smallest hash of its images under
the board's symmetries (:mod:`carnac_env.core.symmetry`: eight on a square board, four
otherwise), so an image of a solved position is a table hit; its best move is stored in the
numbering of that canonical image and mapped back on a hit. With ``two_tier=True`` (the
default) the table is buckets of two entries: the first keeps the entry of the larger search
(the log2 of the nodes below it), the second takes every other store (the first's old entry
moves there when a larger search replaces it); without it, one entry per slot, always replaced
(the search before issue 52). Each entry takes :data:`ENTRY_BYTES` bytes; a table of
``table_mb`` MiB holds the largest power of two entries that fits, so the table never takes
more than ``table_mb`` MiB (at most :data:`MAX_TABLE_MB`, refused above). The table is kept
between calls on the same board (its entries are exact facts about positions;
:func:`clear_table` empties it), and dropped when the board or the size changes. Besides the
table, a solve holds the keys over the symmetries, one engine slot, one row of moves, one frame
and one killer pair per ply (``2 * supply + 3`` of each: well under a MiB on every built-in
board).
"""

from __future__ import annotations

import threading
import time
from typing import Any, NamedTuple

import numpy as np
from numba import njit

from carnac_env import _checks
from carnac_env.batch.rules import copy_rules_state, legal_actions, load_game, play_unobserved, tilt_fits, value_for
from carnac_env.batch.scoring import dolmen_balance_into, winner_from_balance
from carnac_env.batch.state import KernelState, game_fields, new_state
from carnac_env.core.boards import Board
from carnac_env.core.game import EMPTY, OVER, PLACE, RESPOND, GameState
from carnac_env.core.validate import validate
from carnac_env.errors import CarnacError, SolveLimitError
from carnac_env.solve.last_megalith import last_megalith as _last_megalith_value
from carnac_env.solve.last_megalith import last_work, order_placements

__all__ = [
    "DEFAULT_MAX_MEGALITHS_LEFT",
    "ENTRY_BYTES",
    "ETC_SUPPLY",
    "LEVER_DEFAULTS",
    "MAX_NODE_LIMIT",
    "MAX_SECONDS",
    "MAX_TABLE_MB",
    "SYMMETRY_PLACED",
    "Solution",
    "clear_table",
    "free_tables",
    "margin_scale",
    "memory_bytes",
    "position_hash",
    "solve",
]

_JIT = {"cache": True, "nogil": True}
_INLINE = {"inline": "always", **_JIT}

#: Bytes per transposition-table entry: the 64-bit key, the best move (int32), the value
#: (int16), its bound (int8) and the work that found it (int8, the log2 of the nodes searched).
ENTRY_BYTES = 16
#: The largest transposition table :func:`solve` accepts, in MiB.
MAX_TABLE_MB = 4096
#: The default limit on the supply of a position to solve.
DEFAULT_MAX_MEGALITHS_LEFT = 8
#: The longest time limit :func:`solve` accepts, in seconds (a day).
MAX_SECONDS = 86_400.0
#: The largest ``node_limit`` (and ``max_megaliths_left``) :func:`solve` accepts: the compiled
#: search counts nodes in a signed 64-bit integer.
MAX_NODE_LIMIT = 2**63 - 1

# Bounds of a stored value.
_EXACT, _LOWER, _UPPER = 0, 1, 2
# What a square can hold, for the hash: empty, standing red/white, lying red/white.
_CONTENTS = 5

# The control array of a search (int64): what a paused search needs to resume.
_NODES, _PAUSE_AT, _STATUS, _ROOT_MOVE, _DEPTH, _STEP, _RETURNED, _SCALE = range(8)
_CONTROLS = 8
# Its status: finished, paused at ``_PAUSE_AT`` nodes (resumed by calling again).
_DONE, _PAUSED = 0, 1
# Where the loop stands: entering the node at ``_DEPTH``, trying its next move, storing its
# value, or passing ``_RETURNED`` up to its parent.
_ENTER, _NEXT, _FINISH, _RETURN = range(4)
# The columns of a ply's frame (int64): its window, the window it started with, its best
# value and move so far, its next move and its move count, the move being searched below it
# and whether that child's value is negated (the player to act changes).
# The symmetry that maps the ply's position to its canonical form, and the node count when
# the ply was entered (its subtree's work, for the table's replacement).
(_ALPHA, _BETA, _START_ALPHA, _BEST, _BEST_MOVE, _NEXT_MOVE, _COUNT, _MOVE, _NEGATE, _SLOT, _SYM,
 _START_NODES) = range(12)  # fmt: skip
_FRAME = 12
# The control array's search options (set by the caller): whether the table's buckets hold two
# entries (depth-preferred and always-replaced), and whether killer moves order the moves.
# and the least supply of a position hashed over the symmetries.
# and the least supply of a node whose children are looked up in the table before any is
# searched (enhanced transposition cut-offs; 0: never).
_TWO_TIER, _KILLERS, _SYMMETRY_SUPPLY, _ETC_SUPPLY = _CONTROLS, _CONTROLS + 1, _CONTROLS + 2, _CONTROLS + 3
# and how placements are ordered by the megaliths beside their square (``adjacent``).
_ADJACENT = _CONTROLS + 4
# and whether the last megalith's positions are solved without a tree (:mod:`.last_megalith`).
_LAST = _CONTROLS + 5
# and the least supply of a position whose placements are ordered by a one-megalith look-ahead
# (0: never).
_ORDER_SUPPLY = _CONTROLS + 6
_CONTROLS += 7
#: Enhanced transposition cut-offs (``etc=True``) look up the children of nodes with at least
#: this many megaliths left (the nodes near the leaves are many and cheap: not worth it there).
ETC_SUPPLY = 3
#: Positions with at most this many megaliths placed are hashed over the board's symmetries
#: (``symmetry=True``): a position's images are reached by play only while few megaliths are
#: down (on the 5-left endgames of the benchmark, symmetry saved 3 nodes in 192,065).
SYMMETRY_PLACED = 6


class Solution(NamedTuple):
    """What :func:`solve` returns.

    Attributes:
        result: the game-theoretic result for the player to act: +1 a win, 0 a draw, -1 a loss
            (for a finished game, the result for ``state.to_act``).
        best_action: an action number that achieves ``result`` (with ``margin=True``, that
            also achieves ``margin``); -1 if the game is over.
        nodes: positions searched (transposition-table hits included; both searches with
            ``margin=True``).
        margin: with ``margin=True``, the exact final dolmen margin: the dolmens of the player
            to act minus the opponent's at the end of the game, when both players play first
            for the result and then for the margin (see :func:`solve`); None otherwise.
    """

    result: int
    best_action: int
    nodes: int
    margin: int | None = None


def margin_scale(board: Board) -> int:
    """The factor that packs a (result, margin) pair into one integer, ``result * scale +
    margin``, ordered as the pairs are (first by result, then by margin): any margin is
    smaller than it in size (a player has at most ``squares // min_dolmen`` dolmens)."""
    return board.squares // board.min_dolmen + 1


# --------------------------------------------------------------------- the compiled search
@njit(**_JIT)
def position_hash(st, i, zobrist, extra):  # pragma: no cover - compiled
    """The Zobrist hash of game ``i``: ``zobrist[square, contents]`` for every occupied square
    (contents ``2 * kind - 1 + colour - 1``: standing red 1, white 2, lying red 3, white 4), and
    ``extra``'s keys for the player to act, the phase, the pending megalith and the supply."""
    cells = st.cells
    kinds = st.kinds
    h = np.uint64(0)
    for s in range(cells.shape[1]):
        kind = kinds[i, s]
        if kind != EMPTY:
            h ^= zobrist[s, 2 * kind - 1 + cells[i, s] - 1]
    h ^= extra[st.to_act[i]]
    h ^= extra[2 + st.phase[i]]
    if st.phase[i] == RESPOND:
        h ^= extra[5 + st.pending[i]] ^ extra[5 + cells.shape[1] + st.pending_colour[i]]
    h ^= extra[8 + cells.shape[1] + st.supply[i]]
    return h


@njit(**_INLINE)
def _leaf(st, i, player, scale):  # pragma: no cover - compiled
    """The value of finished game ``i`` for ``player``: its result (+1, 0, -1) with ``scale``
    0, else ``result * scale + margin`` (:func:`margin_scale`), the margin being ``player``'s
    dolmens minus the opponent's (the compiled scorer's count and winner)."""
    total = dolmen_balance_into(st.cells[i], st.neighbours, st.min_dolmen, st.seen, st.stack, st.balance)
    result = int(value_for(winner_from_balance(total, st.balance), player))
    if scale == 0:
        return result
    return result * scale + (total if player == 0 else -total)  # player 0 is Red


@njit(**_INLINE)
def _better(frames, d, value, action):  # pragma: no cover - compiled
    """Take ``value`` (of ``action``) into ply ``d``'s best and window; True on a cut-off."""
    if value > frames[d, _BEST]:
        frames[d, _BEST] = value
        frames[d, _BEST_MOVE] = action
        if value > frames[d, _ALPHA]:
            frames[d, _ALPHA] = value
            return value >= frames[d, _BETA]
    return False


@njit(**_INLINE)
def _canonical_hash(st, i, sym, h, least_supply):  # pragma: no cover - compiled
    """The canonical Zobrist hash of game ``i`` over the board's symmetries, and the symmetry
    that gives it: the smallest of the hashes of the position's images (``sym.zobrist[s, c, k]``
    is the key of contents ``c`` on square ``s``'s image under symmetry ``k``; with one
    symmetry, the identity, it is :func:`position_hash`). ``h`` is scratch space, one number per
    symmetry. Only a position with at least ``least_supply`` megaliths left is hashed over the
    symmetries (later positions are hashed as they stand, identity ``k = 0``): a choice that
    depends on the position alone, so each position always gets the same key."""
    zobrist, extra, squares_to, swaps = sym.zobrist, sym.extra, sym.squares, sym.swaps
    count = zobrist.shape[2] if st.supply[i] >= least_supply else 1
    cells = st.cells
    kinds = st.kinds
    squares = cells.shape[1]
    h[:count] = 0
    for s in range(squares):
        kind = kinds[i, s]
        if kind != EMPTY:
            contents = 2 * kind - 1 + cells[i, s] - 1
            for k in range(count):
                h[k] ^= zobrist[s, contents, k]
    common = extra[st.to_act[i]] ^ extra[2 + st.phase[i]] ^ extra[8 + squares + st.supply[i]]
    responding = st.phase[i] == RESPOND
    pending = st.pending[i]
    colour = st.pending_colour[i]
    best = np.uint64(0)
    best_k = -1
    for k in range(count):
        hk = h[k] ^ common
        if responding:
            shown = 3 - colour if swaps[k] else colour  # a swap of the axes shows the other colour north/south
            hk ^= extra[5 + squares_to[k, pending]] ^ extra[5 + squares + shown]
        if best_k < 0 or hk < best:
            best = hk
            best_k = k
    return best, best_k


@njit(**_INLINE)
def _probe(keys, h, slot, two_tier):  # pragma: no cover - compiled
    """The table index holding key ``h`` (its bucket starts at ``slot``), or -1."""
    if keys[slot] == h:
        return slot
    if two_tier and keys[slot + 1] == h:
        return slot + 1
    return -1


# Radon ranks _search F (72) (E 32 before the levers of issue 52); the house allows rank C at
# most. Numba is the reason: its on-disk cache does not link a cached function's call to itself
# (numba issue 6061; a recursive negamax crashed when run from the cache). So the recursion is
# written as this loop over explicit per-ply frames (`frames`, `ctl`), which also lets a solve
# pause and resume. The loop is a state machine of four steps (enter, next move, finish, return)
# that branch on `step` and share the locals `d`, `step` and `returned`, and that is where the
# rank comes from. The steps could become `inline="always"` helpers that return `(step, d,
# returned)`. That is left to the solver's rework, and tests/solve/test_solve.py checks it.
@njit(**_JIT)
def _search(st, table, sym, moves, frames, hashes, killers, ctl, lw):  # pragma: no cover - compiled
    """Negamax alpha-beta (fail-soft) from slot 0 of ``st``, child of ply ``d`` played in slot
    ``d + 1``, without recursion: each ply's window, best value and next move live in
    ``frames[d]`` and the loop's place in ``ctl``, so the search pauses when the node count
    reaches ``ctl[_PAUSE_AT]`` and resumes where it stopped when called again. On
    ``ctl[_STATUS] == _DONE``, ``ctl[_RETURNED]`` is the root's value and ``ctl[_ROOT_MOVE]``
    its best move. The caller sets the root's window in ``frames[0]``.

    The table is keyed by the canonical hash over ``sym``'s symmetries (its best moves are
    stored in the canonical position's numbering: ``sym.actions[k]`` maps there and
    ``sym.inverse[k]`` back). With ``ctl[_TWO_TIER]`` a bucket is two entries: the first keeps
    the entry of the larger search (the log2 of its nodes), the second takes every other
    store; without it, one entry per slot, always replaced. With ``ctl[_KILLERS]`` the two
    last moves that caused a cut-off at the ply come right after the table's move.

    (The loop replaces a recursive function: numba's on-disk cache does not link a cached
    recursive function's call to itself, numba issue 6061, which crashed a solve run from the
    cache.)"""
    keys, best_moves, values, bounds, works = table
    two_tier = ctl[_TWO_TIER] != 0
    use_killers = ctl[_KILLERS] != 0
    mask = np.uint64(keys.shape[0] - 1)
    if two_tier:
        mask = mask ^ np.uint64(1)  # the bucket's first entry; the second is the next one
    scale = ctl[_SCALE]
    mode_key = sym.extra[sym.extra.shape[0] - 1] if scale > 0 else np.uint64(0)
    d = ctl[_DEPTH]
    step = ctl[_STEP]
    returned = ctl[_RETURNED]
    scratch = np.zeros(sym.zobrist.shape[2], dtype=np.uint64)
    least_supply = ctl[_SYMMETRY_SUPPLY]
    etc_supply = ctl[_ETC_SUPPLY]
    use_last = ctl[_LAST] != 0
    order_supply = ctl[_ORDER_SUPPLY]
    order_scale = ctl[_SCALE] if ctl[_SCALE] > 0 else st.cells.shape[1] // st.min_dolmen + 1
    scores = np.zeros(moves.shape[1], dtype=np.int64)
    while True:
        if step == _ENTER:
            if ctl[_NODES] >= ctl[_PAUSE_AT]:
                ctl[_STATUS] = _PAUSED
                ctl[_DEPTH] = d
                ctl[_STEP] = step
                ctl[_RETURNED] = returned
                return
            ctl[_NODES] += 1
            if st.phase[d] == OVER:
                returned = _leaf(st, d, st.to_act[d], scale)
                step = _RETURN
                continue
            h, k = _canonical_hash(st, d, sym, scratch, least_supply)
            h ^= mode_key
            slot = np.int64(h & mask)
            first = -1
            found = _probe(keys, h, slot, two_tier)
            if found >= 0:
                value = values[found]
                bound = bounds[found]
                if d > 0 and (
                    bound == _EXACT
                    or (bound == _LOWER and value >= frames[d, _BETA])
                    or (bound == _UPPER and value <= frames[d, _ALPHA])
                ):
                    returned = value
                    step = _RETURN
                    continue
                if best_moves[found] >= 0:
                    first = sym.inverse[k, best_moves[found]]
            hashes[d] = h
            frames[d, _SLOT] = slot
            frames[d, _SYM] = k
            frames[d, _START_NODES] = ctl[_NODES]
            if use_last and st.phase[d] == PLACE and st.supply[d] == 1:  # the leaf layer, without a tree
                frames[d, _START_ALPHA] = frames[d, _ALPHA]
                value, move, scored = _last_megalith_value(st, d, frames[d, _ALPHA], frames[d, _BETA], scale, first, lw)
                ctl[_NODES] += scored
                frames[d, _BEST] = value
                frames[d, _BEST_MOVE] = move
                step = _FINISH
                continue
            row = moves[d]
            count = legal_actions(st, d, row)
            front = 0
            if first >= 0:  # the table's best move first
                for j in range(count):
                    if row[j] == first:
                        row[j] = row[0]
                        row[0] = first
                        front = 1
                        break
            if use_killers:  # then the killers
                for n in range(2):
                    killer = killers[d, n]
                    if killer >= 0 and killer != first:
                        for j in range(front, count):
                            if row[j] == killer:
                                row[j] = row[front]
                                row[front] = killer
                                front += 1
                                break
            if order_supply > 0 and st.phase[d] == PLACE and st.supply[d] >= order_supply:
                order_placements(st, d, row, front, count, order_scale, lw, scores)
            if ctl[_ADJACENT] and st.phase[d] == PLACE:  # placements beside megaliths first
                least = 4 if ctl[_ADJACENT] == 2 else 1
                for want in range(least, 0, -1):  # most neighbours first (2), or any first (1)
                    for j in range(front, count):
                        a = row[j]
                        sq = a >> 2
                        near = 0
                        for direction in range(4):
                            nb = st.neighbours[sq, direction]
                            if nb >= 0 and st.kinds[d, nb] != EMPTY:
                                near += 1
                        if near >= want:
                            row[j] = row[front]
                            row[front] = a
                            front += 1
            if etc_supply > 0 and st.supply[d] >= etc_supply and d > 0:  # a child in the table may cut
                mover = st.to_act[d]
                cut = False
                for j in range(count):
                    copy_rules_state(st, d, st, d + 1)
                    play_unobserved(st, d + 1, row[j])
                    if st.phase[d + 1] == OVER:
                        continue
                    hc, _ = _canonical_hash(st, d + 1, sym, scratch, least_supply)
                    hc ^= mode_key
                    found = _probe(keys, hc, np.int64(hc & mask), two_tier)
                    if found < 0:
                        continue
                    value = values[found]
                    bound = bounds[found]
                    if st.to_act[d + 1] == mover:
                        cut = bound != _UPPER and value >= frames[d, _BETA]
                    else:
                        cut = bound != _LOWER and -value >= frames[d, _BETA]
                        value = -value
                    if cut:
                        returned = value
                        break
                if cut:
                    step = _RETURN
                    continue
            frames[d, _START_ALPHA] = frames[d, _ALPHA]
            frames[d, _BEST] = -(2 * scale + 2)  # below every value
            frames[d, _BEST_MOVE] = -1
            frames[d, _NEXT_MOVE] = 0
            frames[d, _COUNT] = count
            step = _NEXT
        elif step == _NEXT:
            mover = st.to_act[d]
            placing = st.phase[d] == PLACE
            step = _FINISH
            while frames[d, _NEXT_MOVE] < frames[d, _COUNT]:
                action = moves[d, frames[d, _NEXT_MOVE]]
                frames[d, _NEXT_MOVE] += 1
                if placing and (action & 2):  # o ^ 2 is the same move when no tilt of the square fits
                    square = action >> 2
                    fits = False
                    for direction in range(4):
                        fits |= tilt_fits(st, d, square, direction)
                    if not fits:
                        continue
                copy_rules_state(st, d, st, d + 1)
                play_unobserved(st, d + 1, action)
                if st.phase[d + 1] == OVER:  # scored here, without a table look-up
                    ctl[_NODES] += 1
                    if _better(frames, d, _leaf(st, d + 1, mover, scale), action):
                        break
                    continue
                frames[d, _MOVE] = action
                if st.to_act[d + 1] == mover:
                    frames[d, _NEGATE] = 0
                    frames[d + 1, _ALPHA] = frames[d, _ALPHA]
                    frames[d + 1, _BETA] = frames[d, _BETA]
                else:
                    frames[d, _NEGATE] = 1
                    frames[d + 1, _ALPHA] = -frames[d, _BETA]
                    frames[d + 1, _BETA] = -frames[d, _ALPHA]
                d += 1
                step = _ENTER
                break
        elif step == _FINISH:
            best = frames[d, _BEST]
            if best <= frames[d, _START_ALPHA]:
                bound = _UPPER
            elif best >= frames[d, _BETA]:
                bound = _LOWER
                if use_killers and frames[d, _BEST_MOVE] != killers[d, 0]:
                    killers[d, 1] = killers[d, 0]
                    killers[d, 0] = frames[d, _BEST_MOVE]
            else:
                bound = _EXACT
            slot = frames[d, _SLOT]
            h = hashes[d]
            work = 0
            spent = ctl[_NODES] - frames[d, _START_NODES]
            while spent > 1:
                spent >>= 1
                work += 1
            if two_tier and keys[slot] != h and keys[slot + 1] != h and work < works[slot]:
                slot += 1  # the depth-preferred entry keeps its larger search
            elif two_tier and keys[slot + 1] == h:
                slot += 1
            elif two_tier and keys[slot] != h:  # the depth-preferred entry moves to the second
                keys[slot + 1] = keys[slot]
                best_moves[slot + 1] = best_moves[slot]
                values[slot + 1] = values[slot]
                bounds[slot + 1] = bounds[slot]
                works[slot + 1] = works[slot]
            keys[slot] = h
            move = frames[d, _BEST_MOVE]
            best_moves[slot] = sym.actions[frames[d, _SYM], move] if move >= 0 else -1
            values[slot] = best
            bounds[slot] = bound
            works[slot] = work
            if d == 0:
                ctl[_ROOT_MOVE] = frames[0, _BEST_MOVE]
            returned = best
            step = _RETURN
        else:  # _RETURN
            if d == 0:
                ctl[_STATUS] = _DONE
                ctl[_RETURNED] = returned
                return
            d -= 1
            value = -returned if frames[d, _NEGATE] else returned
            if _better(frames, d, value, frames[d, _MOVE]):
                step = _FINISH
            else:
                step = _NEXT


@njit(**_JIT)
def path_keys(st, depth, sym, least_supply, mode_key, mask, hashes, frames):  # pragma: no cover - compiled
    """Fill ``hashes[p]``, ``frames[p, _SLOT]`` and ``frames[p, _SYM]`` of the plies ``p <
    depth`` from their slots, as :func:`_search` does on entering them (a resumed search's
    path: these are never read from a file)."""
    scratch = np.zeros(sym.zobrist.shape[2], dtype=np.uint64)
    for p in range(depth):
        h, k = _canonical_hash(st, p, sym, scratch, least_supply)
        h ^= mode_key
        hashes[p] = h
        frames[p, _SLOT] = np.int64(h & mask)
        frames[p, _SYM] = k


# --------------------------------------------------------------------- the Python API
_LOCAL = threading.local()
_ZOBRIST_SEED = 0x5EED_CA12AC
#: Nodes between two looks at the clock when ``seconds`` is set (a few milliseconds).
_CLOCK_NODES = 1 << 14


class _Symmetries(NamedTuple):
    """The Zobrist keys of one board over a set of its symmetries (the compiled search's
    ``sym``): ``zobrist[s, c, k]`` is the key of contents ``c`` on square ``s``'s image under
    symmetry ``k``; ``extra`` the keys of the player to act, the phase, the pending square and
    colour, the supply and the margin search; ``squares[k, s]`` square ``s``'s image;
    ``swaps[k]`` whether symmetry ``k`` swaps the axes; ``actions[k, a]`` action ``a``'s image
    and ``inverse[k]`` its inverse. The first symmetry is the identity."""

    zobrist: np.ndarray
    extra: np.ndarray
    squares: np.ndarray
    swaps: np.ndarray
    actions: np.ndarray
    inverse: np.ndarray


class _Tables(NamedTuple):
    board: Board
    entries: int
    table: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]
    identity: _Symmetries
    symmetric: _Symmetries


def _entries(table_mb: int) -> int:
    """The largest power of two of entries that fits in ``table_mb`` MiB."""
    entries = 2  # a bucket of the two-tier table
    while entries * 2 * ENTRY_BYTES <= table_mb * 2**20:
        entries *= 2
    return entries


def _tables(board: Board, table_mb: int) -> _Tables:
    """This thread's transposition table and Zobrist keys for ``board`` (kept between calls)."""
    entries = _entries(table_mb)
    kept = getattr(_LOCAL, "tables", None)
    if kept is not None and kept.board == board and kept.entries == entries:
        return kept
    _LOCAL.tables = None  # free the old table before making a new one
    rng = np.random.default_rng(_ZOBRIST_SEED)
    squares = board.squares
    zobrist = rng.integers(0, 2**63, size=(squares, _CONTENTS), dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    # The player to act, the phase, the pending square and colour, the supply, and last the key
    # of the margin search (its values are not the result search's).
    extra = rng.integers(0, 2**63, size=8 + squares + board.megaliths + 2, dtype=np.uint64) * np.uint64(2)
    table = (
        _mapped(entries, np.uint64),
        _mapped(entries, np.int32, -1),
        _mapped(entries, np.int16),
        _mapped(entries, np.int8),
        _mapped(entries, np.int8),
    )
    kept = _LOCAL.tables = _Tables(
        board, entries, table, _symmetries(board, zobrist, extra, ("identity",)), _symmetries(board, zobrist, extra)
    )
    return kept


def _symmetries(board: Board, zobrist: np.ndarray, extra: np.ndarray, names: tuple[str, ...] = ()) -> _Symmetries:
    """The keys of ``board`` over the symmetries ``names`` (all that keep its shape if empty:
    eight on a square board, four otherwise; :mod:`carnac_env.core.symmetry`)."""
    from carnac_env.core.symmetry import symmetries, symmetry

    transforms = [symmetry(board, name) for name in (names or symmetries(board))]
    squares = np.stack([t.squares for t in transforms]).astype(np.int64)
    return _Symmetries(
        np.ascontiguousarray(np.stack([zobrist[t.squares] for t in transforms], axis=2)),
        extra,
        squares,
        np.array([t.swaps_axes for t in transforms], dtype=np.bool_),
        np.stack([t.actions for t in transforms]).astype(np.int32),
        np.stack([t.inverse.actions for t in transforms]).astype(np.int32),
    )


def _mapped(entries: int, dtype: type, fill: int = 0) -> np.ndarray:
    """An array of ``entries`` zeros (or ``fill``) in memory mapped for it alone: freed, it goes
    back to the system at once (the allocator would keep a freed table of a thread for itself)."""
    import mmap

    array = np.frombuffer(mmap.mmap(-1, max(1, entries * np.dtype(dtype).itemsize)), dtype=dtype, count=entries)
    if fill:
        array.fill(fill)
    return array


def free_tables() -> None:
    """Free this thread's transposition table and per-ply arrays (:func:`solve` keeps them
    between calls): the next solve in this thread makes new ones. A server that solves in a
    pool of threads calls it after each piece of work, so no idle thread holds a table."""
    _LOCAL.__dict__.clear()


def clear_table() -> None:
    """Empty this thread's transposition table (kept between :func:`solve` calls on one board),
    so that the next solve starts from nothing: for timing a solve, or to drop what it learnt.
    The table keeps its memory; solving on another board or with another ``table_mb`` frees it."""
    kept = getattr(_LOCAL, "tables", None)
    if kept is not None:
        keys, best_moves, _, _, works = kept.table
        keys[:] = 0
        best_moves[:] = -1
        works[:] = 0


def memory_bytes(board: Board, max_megaliths_left: int, table_mb: int) -> int:
    """The most bytes :func:`solve` holds in a thread for positions on ``board`` with at most
    ``max_megaliths_left`` megaliths left and a table of ``table_mb`` MiB (kept until
    :func:`free_tables`): the table, the Zobrist keys, and one engine slot (measured on
    :func:`~carnac_env.batch.state.new_state` itself), one row of moves, one frame and one hash
    per ply. A server counts it for the work that solves."""
    plies = 2 * max_megaliths_left + 3
    slots = sum(int(getattr(part, "nbytes", 0)) for part in new_state(board, plies)[1])
    sym = 8  # at most eight symmetries, and the identity's keys besides
    keys = (board.squares * _CONTENTS * (sym + 1) + 2 * (10 + board.squares + board.megaliths)) * 8
    maps = (sym + 1) * (board.squares * 9 + 2 * board.num_actions * 4)
    per_ply = board.num_actions * 4 + _FRAME * 8 + 8 + 2 * 8 + sym * 8
    # the last megalith's and the look-ahead's work: labels, sizes, balance, stack, merged, scores
    leaves = (4 * board.squares + 3) * 4 + 8 * 4 + board.num_actions * 8
    return _entries(table_mb) * ENTRY_BYTES + keys + maps + slots + plies * per_ply + leaves


class _Work(NamedTuple):
    plies: int
    st: KernelState
    moves: np.ndarray
    frames: np.ndarray
    hashes: np.ndarray
    killers: np.ndarray
    last: tuple[np.ndarray, ...]


def _work(board: Board, plies: int) -> _Work:
    """This thread's engine state and per-ply arrays for ``board``, at least ``plies`` (kept)."""
    kept_all = getattr(_LOCAL, "work", None)
    if kept_all is None:
        kept_all = _LOCAL.work = {}
    kept = kept_all.get(board)
    if kept is None or kept.plies < plies:
        kept = kept_all[board] = _Work(
            plies,
            new_state(board, plies)[0],
            np.zeros((plies, board.num_actions), dtype=np.int32),
            np.zeros((plies, _FRAME), dtype=np.int64),
            np.zeros(plies, dtype=np.uint64),
            np.full((plies, 2), -1, dtype=np.int64),
            last_work(board.squares),
        )
    return kept


#: The search's levers and :func:`solve`'s defaults for them.
LEVER_DEFAULTS: dict[str, Any] = {
    "symmetry": False,
    "two_tier": False,
    "killers": False,
    "etc": False,
    "adjacent": 0,
    "last_megalith": True,
    "order": 3,
}


def checked_levers(**levers: Any) -> dict[str, Any]:
    """``levers`` (the search options of :func:`solve` but ``margin`` and ``null_window``),
    each checked: CarnacError naming a bad one and its range."""
    for name in ("symmetry", "two_tier", "killers", "etc", "last_megalith"):
        _checks.flag(name, levers[name])
    levers["adjacent"] = _checks.whole("adjacent", levers["adjacent"], 0, 2)
    levers["order"] = _checks.whole("order", levers["order"], 0, MAX_NODE_LIMIT)
    return levers


class Budget:
    """The node limit and the deadline of one :func:`solve` call, over its searches."""

    def __init__(
        self,
        node_limit: int,
        seconds: float,
        symmetry: bool,
        two_tier: bool,
        killers: bool,
        etc: bool,
        adjacent: int,
        last_megalith: bool,
        order: int,
    ) -> None:
        self.order = order
        self.adjacent = adjacent
        self.last = last_megalith
        self.etc = etc
        self.symmetry = symmetry
        self.two_tier = two_tier
        self.killers = killers
        self.node_limit = node_limit
        self.seconds = seconds
        self.deadline = time.perf_counter() + seconds if seconds > 0 else 0.0
        self.nodes = 0

    def controls(self, board: Board, scale: int) -> np.ndarray:
        """A fresh control array for a search on ``board`` with these options (``scale`` as in
        :func:`_leaf`), at the root, entering it."""
        ctl = np.zeros(_CONTROLS, dtype=np.int64)
        ctl[_NODES] = self.nodes
        ctl[_ROOT_MOVE] = -1
        ctl[_SCALE] = scale
        ctl[_STEP] = _ENTER
        ctl[_TWO_TIER] = self.two_tier
        ctl[_KILLERS] = self.killers
        ctl[_SYMMETRY_SUPPLY] = board.megaliths - SYMMETRY_PLACED
        ctl[_ETC_SUPPLY] = ETC_SUPPLY if self.etc else 0
        ctl[_ADJACENT] = self.adjacent
        ctl[_LAST] = self.last
        ctl[_ORDER_SUPPLY] = self.order
        return ctl

    def advance(self, tables: _Tables, work: _Work, ctl: np.ndarray, pause_at: int) -> bool:
        """Run the search of ``ctl`` until it finishes (True) or passes ``pause_at`` nodes."""
        ctl[_PAUSE_AT] = pause_at
        _search(
            work.st,
            tables.table,
            tables.symmetric if self.symmetry else tables.identity,
            work.moves,
            work.frames,
            work.hashes,
            work.killers,
            ctl,
            work.last,
        )
        self.nodes = int(ctl[_NODES])
        return bool(ctl[_STATUS] == _DONE)

    def run(self, tables: _Tables, work: _Work, alpha: int, beta: int, scale: int) -> tuple[int, int]:
        """One search from slot 0 of ``work`` over the window ``(alpha, beta)``: its value and
        best move, in pieces of :data:`_CLOCK_NODES` nodes when there is a deadline."""
        ctl = self.controls(tables.board, scale)
        work.frames[0, _ALPHA] = alpha
        work.frames[0, _BETA] = beta
        limit = self.node_limit if self.node_limit > 0 else np.iinfo(np.int64).max
        while True:
            if self.advance(tables, work, ctl, min(limit, ctl[_NODES] + _CLOCK_NODES) if self.deadline else limit):
                return int(ctl[_RETURNED]), int(ctl[_ROOT_MOVE])
            if ctl[_NODES] >= limit:
                raise SolveLimitError(f"the solver gave up after node_limit={self.node_limit} nodes")
            if time.perf_counter() >= self.deadline:
                raise SolveLimitError(f"the solver gave up after seconds={self.seconds} ({self.nodes} nodes)")


def solve(
    state: GameState,
    max_megaliths_left: int = DEFAULT_MAX_MEGALITHS_LEFT,
    table_mb: int = 64,
    node_limit: int = 0,
    *,
    margin: bool = False,
    seconds: float = 0.0,
    null_window: bool = False,
    symmetry: bool = False,
    two_tier: bool = False,
    killers: bool = False,
    etc: bool = False,
    adjacent: int = 0,
    last_megalith: bool = True,
    order: int = 3,
) -> Solution:
    """The exact result of ``state`` for its player to act, and a move that achieves it.

    The result is the game's value under the full tie-break chain (more dolmens, then the
    sorted dolmen sizes, then a draw) with both players playing perfectly to the end. With
    ``margin=True`` a second search also gives the exact final dolmen margin: ``Solution.margin``
    is the dolmens of the player to act minus the opponent's at the end of the game, when each
    player plays first for the result (win, then draw, then loss) and then, among the moves
    that keep it, for the largest margin of their own (the opponent for the smallest): the
    lexicographic minimax value of (result, margin). A win's margin is at least 0 (a win on
    equal counts, by the sizes, has margin 0), a draw's is 0 and a loss's at most 0.

    Args:
        state: a core position (checked by :func:`carnac_env.core.validate.validate`; not
            changed). A finished game is scored, not searched.
        max_megaliths_left: the most megaliths the supply may hold, 0 to :data:`MAX_NODE_LIMIT`; the search's cost
            grows steeply with it (docs/solver.md gives measured depths per board).
        table_mb: the transposition table's size in MiB, 1 to :data:`MAX_TABLE_MB`.
        node_limit: give up after this many nodes, 0 to :data:`MAX_NODE_LIMIT` (0: no limit; both searches
            together with ``margin``).
        margin: also compute ``Solution.margin`` (and a best move for it).
        seconds: give up after about this many seconds, 0 to :data:`MAX_SECONDS` (0: no limit);
            the clock is read every few thousand nodes, so a solve may overrun it by
            milliseconds.
        null_window, symmetry, two_tier, killers, etc: the search's levers (see the module's
            text; benchmarks/solve_fixed_set.py measures each): two null-window searches for
            the result, the canonical hash over the board's symmetries, the two-tier table,
            killer moves, enhanced transposition cut-offs; ``adjacent`` orders placements by
            the megaliths beside their square (0 the kernel's order, 1 those beside any
            first, 2 those beside the most first); ``last_megalith`` solves the last
            megalith without a tree; ``order`` sorts placements by a one-megalith look-ahead
            from that many megaliths left on (0: never). None changes a result or a margin;
            they may change which of several equally good moves is returned. The defaults
            are the ones that measured fastest on the fixed set (docs/solver.md: the last
            megalith and the look-ahead from 3 left, 8.4x at the median of 8 megaliths left).

    Returns:
        A :class:`Solution`.

    Raises:
        CarnacError: a malformed state, a supply above ``max_megaliths_left``, a budget out of
            range (``table_mb``, ``node_limit``, ``seconds``, ``max_megaliths_left``: each
            checked, naming the value and its range, before anything is compiled code's), or a
            search that passed ``node_limit`` or ``seconds``.
    """
    try:
        validate(state)
    except CarnacError as error:
        raise CarnacError(f"solve got a malformed state: {error}") from None
    # every number is range-checked here, before any reaches the compiled search (an int64 there)
    max_left = _checks.whole("max_megaliths_left", max_megaliths_left, 0, MAX_NODE_LIMIT)
    table_mb = _checks.whole("table_mb", table_mb, 1, MAX_TABLE_MB)
    node_limit = _checks.whole("node_limit", node_limit, 0, MAX_NODE_LIMIT)
    _checks.flag("margin", margin)
    _checks.flag("null_window", null_window)
    levers = checked_levers(
        symmetry=symmetry, two_tier=two_tier, killers=killers, etc=etc, adjacent=adjacent,
        last_megalith=last_megalith, order=order,
    )  # fmt: skip
    seconds = _checks.number("seconds", seconds, 0.0, MAX_SECONDS)
    if state.supply > max_left:
        raise CarnacError(
            f"the position has {state.supply} megaliths left, more than max_megaliths_left={max_left}; "
            "raise the limit to solve it (the cost grows steeply with it)"
        )
    board = state.board
    tables = _tables(board, table_mb)
    work = _work(board, 2 * state.supply + 3)
    budget = Budget(node_limit, seconds, **levers)
    work.killers.fill(-1)  # a solve's move order never depends on an earlier solve's cut-offs
    load_game(work.st, 0, *game_fields(state, lying=False))  # the search never reads the pairs
    if null_window and state.phase != OVER:  # is it a win (> 0)? if not, is it a draw (>= 0)?
        result, best = budget.run(tables, work, 0, 1, 0)
        if result < 1:
            result, best = budget.run(tables, work, -1, 0, 0)
        result = max(-1, min(1, result))
    else:
        result, best = budget.run(tables, work, -1, 1, 0)
    if not margin:
        return Solution(result, best, budget.nodes)
    scale = margin_scale(board)
    # The margin search's window is the result's band: its value is result * scale + margin.
    value, best = budget.run(tables, work, result * scale - scale, result * scale + scale, scale)
    return Solution(result, best, budget.nodes, value - result * scale)
