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
resumes where it stopped. Move ordering: the transposition table's best move first, then the
kernel's order (tilts before the decline, placements square by square; two other orderings
were measured and dropped, see docs/solver.md). Two placements that differ only in which axis carries
the top colour (orientations ``o`` and ``o ^ 2``) lead to the same position when no tilt of
that square fits; only one of them is searched.

**The margin.** With ``margin=True`` a second search runs over integers ``result * scale +
margin`` (:func:`margin_scale`), which order as the (result, margin) pairs do, in the window of
the known result; its table entries carry a key of their own.

**The transposition table.** Keyed by a 64-bit Zobrist hash of the position (each square's
contents, the player to act, the phase, the pending megalith and its tilt colour, the supply),
stored in full to tell entries apart; one slot per hash (always replaced). Each entry takes
:data:`ENTRY_BYTES` bytes; a table of ``table_mb`` MiB holds the largest power of two entries
that fits, so the table never takes more than ``table_mb`` MiB (at most :data:`MAX_TABLE_MB`,
refused above). The table is kept between calls on the same board (its entries are exact
facts about positions; :func:`clear_table` empties it), and dropped when the board or the size
changes. Besides the table, a solve holds one engine slot, one row of moves and one frame per
ply (``2 * supply + 3`` of each: well under a MiB on every built-in board).
"""

from __future__ import annotations

import threading
import time
from typing import NamedTuple

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

__all__ = [
    "DEFAULT_MAX_MEGALITHS_LEFT",
    "ENTRY_BYTES",
    "MAX_NODE_LIMIT",
    "MAX_SECONDS",
    "MAX_TABLE_MB",
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
#: (int16) and its bound (int8).
ENTRY_BYTES = 15
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
_ALPHA, _BETA, _START_ALPHA, _BEST, _BEST_MOVE, _NEXT_MOVE, _COUNT, _MOVE, _NEGATE, _SLOT = range(10)
_FRAME = 10


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


# Radon ranks _search E (32); the house allows rank C at most. Numba is the reason: its on-disk
# cache does not link a cached function's call to itself (numba issue 6061; a recursive negamax
# crashed when run from the cache). So the recursion is written as this loop over explicit
# per-ply frames (`frames`, `ctl`), which also lets a solve pause and resume. The loop is a
# state machine of four steps (enter, next move, finish, return) that branch on `step` and
# share the locals `d`, `step` and `returned`, and that is where the rank comes from. The steps
# could become `inline="always"` helpers that return `(step, d, returned)`. That is left to the
# solver's rework, and tests/solve/test_solve.py checks it.
@njit(**_JIT)
def _search(st, table, moves, frames, hashes, zobrist, extra, ctl):  # pragma: no cover - compiled
    """Negamax alpha-beta (fail-soft) from slot 0 of ``st``, child of ply ``d`` played in slot
    ``d + 1``, without recursion: each ply's window, best value and next move live in
    ``frames[d]`` and the loop's place in ``ctl``, so the search pauses when the node count
    reaches ``ctl[_PAUSE_AT]`` and resumes where it stopped when called again. On
    ``ctl[_STATUS] == _DONE``, ``ctl[_RETURNED]`` is the root's value and ``ctl[_ROOT_MOVE]``
    its best move. The caller sets the root's window in ``frames[0]``.

    (The loop replaces a recursive function: numba's on-disk cache does not link a cached
    recursive function's call to itself, numba issue 6061, which crashed a solve run from the
    cache.)"""
    keys, best_moves, values, bounds = table
    mask = np.uint64(keys.shape[0] - 1)
    scale = ctl[_SCALE]
    mode_key = extra[extra.shape[0] - 1] if scale > 0 else np.uint64(0)
    d = ctl[_DEPTH]
    step = ctl[_STEP]
    returned = ctl[_RETURNED]
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
            h = position_hash(st, d, zobrist, extra) ^ mode_key
            slot = h & mask
            first = -1
            if keys[slot] == h:
                value = values[slot]
                bound = bounds[slot]
                if d > 0 and (
                    bound == _EXACT
                    or (bound == _LOWER and value >= frames[d, _BETA])
                    or (bound == _UPPER and value <= frames[d, _ALPHA])
                ):
                    returned = value
                    step = _RETURN
                    continue
                first = best_moves[slot]
            hashes[d] = h
            frames[d, _SLOT] = slot
            row = moves[d]
            count = legal_actions(st, d, row)
            if first >= 0:  # the table's best move first
                for k in range(count):
                    if row[k] == first:
                        row[k] = row[0]
                        row[0] = first
                        break
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
            slot = frames[d, _SLOT]
            keys[slot] = hashes[d]
            best_moves[slot] = frames[d, _BEST_MOVE]
            values[slot] = best
            if best <= frames[d, _START_ALPHA]:
                bounds[slot] = _UPPER
            elif best >= frames[d, _BETA]:
                bounds[slot] = _LOWER
            else:
                bounds[slot] = _EXACT
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


# --------------------------------------------------------------------- the Python API
_LOCAL = threading.local()
_ZOBRIST_SEED = 0x5EED_CA12AC
#: Nodes between two looks at the clock when ``seconds`` is set (a few milliseconds).
_CLOCK_NODES = 1 << 14


class _Tables(NamedTuple):
    board: Board
    entries: int
    table: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
    zobrist: np.ndarray
    extra: np.ndarray


def _entries(table_mb: int) -> int:
    """The largest power of two of entries that fits in ``table_mb`` MiB."""
    entries = 1
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
    )
    kept = _LOCAL.tables = _Tables(board, entries, table, zobrist, extra)
    return kept


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
        keys, best_moves, _, _ = kept.table
        keys[:] = 0
        best_moves[:] = -1


def memory_bytes(board: Board, max_megaliths_left: int, table_mb: int) -> int:
    """The most bytes :func:`solve` holds in a thread for positions on ``board`` with at most
    ``max_megaliths_left`` megaliths left and a table of ``table_mb`` MiB (kept until
    :func:`free_tables`): the table, the Zobrist keys, and one engine slot (measured on
    :func:`~carnac_env.batch.state.new_state` itself), one row of moves, one frame and one hash
    per ply. A server counts it for the work that solves."""
    plies = 2 * max_megaliths_left + 3
    slots = sum(int(getattr(part, "nbytes", 0)) for part in new_state(board, plies)[1])
    keys = (board.squares * _CONTENTS + 10 + board.squares + board.megaliths) * 8
    return _entries(table_mb) * ENTRY_BYTES + keys + slots + plies * (board.num_actions * 4 + _FRAME * 8 + 8)


class _Work(NamedTuple):
    plies: int
    st: KernelState
    moves: np.ndarray
    frames: np.ndarray
    hashes: np.ndarray


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
        )
    return kept


class _Budget:
    """The node limit and the deadline of one :func:`solve` call, over its searches."""

    def __init__(self, node_limit: int, seconds: float) -> None:
        self.node_limit = node_limit
        self.seconds = seconds
        self.deadline = time.perf_counter() + seconds if seconds > 0 else 0.0
        self.nodes = 0

    def run(self, tables: _Tables, work: _Work, alpha: int, beta: int, scale: int) -> tuple[int, int]:
        """One search from slot 0 of ``work`` over the window ``(alpha, beta)``: its value and
        best move, in pieces of :data:`_CLOCK_NODES` nodes when there is a deadline."""
        ctl = np.zeros(_CONTROLS, dtype=np.int64)
        ctl[_NODES] = self.nodes
        ctl[_ROOT_MOVE] = -1
        ctl[_SCALE] = scale
        ctl[_STEP] = _ENTER
        work.frames[0, _ALPHA] = alpha
        work.frames[0, _BETA] = beta
        limit = self.node_limit if self.node_limit > 0 else np.iinfo(np.int64).max
        while True:
            ctl[_PAUSE_AT] = min(limit, ctl[_NODES] + _CLOCK_NODES) if self.deadline else limit
            _search(
                work.st,
                tables.table,
                work.moves,
                work.frames,
                work.hashes,
                tables.zobrist,
                tables.extra,
                ctl,
            )
            self.nodes = int(ctl[_NODES])
            if ctl[_STATUS] == _DONE:
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
    seconds = _checks.number("seconds", seconds, 0.0, MAX_SECONDS)
    if state.supply > max_left:
        raise CarnacError(
            f"the position has {state.supply} megaliths left, more than max_megaliths_left={max_left}; "
            "raise the limit to solve it (the cost grows steeply with it)"
        )
    board = state.board
    tables = _tables(board, table_mb)
    work = _work(board, 2 * state.supply + 3)
    budget = _Budget(node_limit, seconds)
    load_game(work.st, 0, *game_fields(state, lying=False))  # the search never reads the pairs
    result, best = budget.run(tables, work, -1, 1, 0)
    if not margin:
        return Solution(result, best, budget.nodes)
    scale = margin_scale(board)
    # The margin search's window is the result's band: its value is result * scale + margin.
    value, best = budget.run(tables, work, result * scale - scale, result * scale + scale, scale)
    return Solution(result, best, budget.nodes, value - result * scale)
