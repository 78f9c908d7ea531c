"""A solve that runs for hours: in pieces, saved to a file between them, resumed after a stop.

:class:`LongSolve` runs the exact solver's result search (:mod:`carnac_env.solve.alphabeta`,
over the full window or, with ``null_window``, the two searches a win? then a draw?; the
same compiled loop) on one position for as long as each call to
:meth:`LongSolve.run` allows, and :meth:`LongSolve.save` writes where it stands: the moves
along the path from the root to the node it will enter next, each ply's window, best value and
remaining moves, and the node count. :meth:`LongSolve.load` takes that file back on the same
position, even on another machine or after the process was killed, and the search goes on
from the same node. The transposition table is not saved (it is the size of memory): a resumed
search re-learns it, which costs nodes but never changes a value.

**A checkpoint is untrusted input.** It is read with ``allow_pickle=False`` (numbers only,
nothing that runs code), and nothing in it reaches the compiled search unchecked: the path's
positions are replayed from the given root on the core rules (never read from the file), each
ply's move list must be a reordering of that position's legal actions, its next move and best
move must be in range, each ply's window must be the one its parent gives it, and the table's
keys are recomputed. A file that fails any check is refused with CarnacError naming it and
what was wrong. What these checks cannot see is a best value changed within its window (a
loss recorded as a draw below a node, say): that would change the answer without breaking
anything, so a checkpoint is only as trustworthy as where it was kept.
"""

from __future__ import annotations

import hashlib
import io
import os
import time
import zipfile
from typing import Any

import numpy as np

from carnac_env import _checks
from carnac_env._files import reading, write_bytes
from carnac_env.batch.rules import load_game
from carnac_env.batch.state import game_fields, new_state
from carnac_env.core.game import OVER, GameState
from carnac_env.core.validate import validate
from carnac_env.errors import CarnacError
from carnac_env.solve import alphabeta as ab

__all__ = ["CHECKPOINT_FORMAT", "LongSolve", "position_key"]

#: The ``format`` a checkpoint file carries (bumped when its layout changes).
CHECKPOINT_FORMAT = "carnac-long-solve-1"
# The searches of a result: one over the full window, or (null windows) a win? then a draw?
_FULL, _WIN, _DRAW = 1, 2, 3
_WINDOWS = {_FULL: (-1, 1), _WIN: (0, 1), _DRAW: (-1, 0)}
# The frame columns a checkpoint carries for each ply on the path (the others are recomputed).
_SAVED = (ab._ALPHA, ab._BETA, ab._START_ALPHA, ab._BEST, ab._BEST_MOVE, ab._NEXT_MOVE, ab._COUNT, ab._MOVE,
          ab._NEGATE, ab._START_NODES)  # fmt: skip


def position_key(state: GameState) -> str:
    """A digest of everything that decides the rest of the game from ``state`` (its board and
    rules, squares, supply, phase, player to act and pending megalith): a checkpoint names the
    position it belongs to with it."""
    parts = (
        repr(state.board).encode(),
        bytes(state.cells),
        bytes(state.kinds),
        repr((state.supply, state.phase, state.to_act, state.pending, state.pending_colour)).encode(),
    )
    return hashlib.sha256(b"\0".join(parts)).hexdigest()


class LongSolve:
    """The result of one position, searched in pieces (see the module's text).

    Args:
        state: the position (checked; not changed). A finished game is done at once.
        table_mb: the transposition table's size in MiB (this thread's table, as
            :func:`~carnac_env.solve.solve` uses it).
        **levers: the search's levers, as :func:`~carnac_env.solve.solve` takes them
            (``null_window``, ``symmetry``, ``two_tier``, ``killers``, ``etc``, ``adjacent``,
            ``last_megalith``, ``order``); those not given take
            :func:`~carnac_env.solve.solve`'s defaults. With ``null_window`` the result is two
            searches in turn, as :func:`~carnac_env.solve.solve` runs them: is it a win? if
            not, is it a draw?

    Raises:
        CarnacError: a malformed state or a bad lever.
    """

    def __init__(self, state: GameState, table_mb: int = 64, **levers: Any) -> None:
        try:
            validate(state)
        except CarnacError as error:
            raise CarnacError(f"LongSolve got a malformed state: {error}") from None
        self.null_window = levers.pop("null_window", False)
        _checks.flag("null_window", self.null_window)
        unknown = sorted(set(levers) - set(ab.LEVER_DEFAULTS))
        if unknown:
            expected = ", ".join(["null_window", *ab.LEVER_DEFAULTS])
            raise CarnacError(f"unknown solver lever(s) {', '.join(unknown)}; expected any of {expected}")
        self.state = state.copy()
        self.levers = ab.checked_levers(**{**ab.LEVER_DEFAULTS, **levers})
        self.table_mb = _checks.whole("table_mb", table_mb, 1, ab.MAX_TABLE_MB)
        self._budget = ab.Budget(0, 0.0, **self.levers)
        plies = 2 * state.supply + 3
        self._work = ab._Work(
            plies,
            new_state(state.board, plies)[0],
            np.zeros((plies, state.board.num_actions), dtype=np.int32),
            np.zeros((plies, ab._FRAME), dtype=np.int64),
            np.zeros(plies, dtype=np.uint64),
            np.full((plies, 2), -1, dtype=np.int64),
            ab.last_work(state.board.squares),
        )
        load_game(self._work.st, 0, *game_fields(state, lying=False))
        self._stage = 0
        self._begin(_WIN if self.null_window else _FULL)
        self._done = state.phase == OVER
        self._result = state.result().reward(state.to_act) if self._done else 0
        self._best = -1

    def _begin(self, stage: int) -> None:
        """Start the search of ``stage`` at the root (its window :data:`_WINDOWS`), keeping the
        node count."""
        nodes = self.nodes if self._stage else 0
        self._stage = stage
        self._ctl = self._budget.controls(self.state.board, 0)
        self._ctl[ab._NODES] = nodes
        self._work.frames[0, ab._ALPHA], self._work.frames[0, ab._BETA] = _WINDOWS[stage]

    @property
    def done(self) -> bool:
        """Whether the result is known."""
        return self._done

    @property
    def result(self) -> int:
        """+1, 0 or -1 for the position's player to act (only once :attr:`done`)."""
        if not self._done:
            raise CarnacError("the solve has not finished: run it until done is True")
        return self._result

    @property
    def best_action(self) -> int:
        """A move that achieves :attr:`result` (-1 for a finished game; only once :attr:`done`)."""
        if not self._done:
            raise CarnacError("the solve has not finished: run it until done is True")
        return self._best

    def lever_options(self) -> dict[str, Any]:
        """The levers this search runs with (``null_window`` among them), as it was given them."""
        return {"null_window": self.null_window, **self.levers}

    @property
    def nodes(self) -> int:
        """Positions searched so far, over every piece (and every process that resumed it)."""
        return int(self._ctl[ab._NODES])

    def progress(self, plies: int = 2) -> list[tuple[int, int]]:
        """How far the search is along its path: for each of the first ``plies`` plies it has
        entered, ``(moves begun, moves)`` (the root's first). Empty once done or before it
        starts."""
        if self._done or self.nodes == 0:
            return []
        depth = int(self._ctl[ab._DEPTH])
        frames = self._work.frames
        return [(int(frames[p, ab._NEXT_MOVE]), int(frames[p, ab._COUNT])) for p in range(min(plies, depth))]

    def run(self, seconds: float, node_limit: int = 0) -> bool:
        """Search for about ``seconds`` more (the clock is read every few thousand nodes), or
        until ``node_limit`` more nodes (0: no node limit); True once the result is known."""
        seconds = _checks.number("seconds", seconds, 0.0, ab.MAX_SECONDS)
        node_limit = _checks.whole("node_limit", node_limit, 0, ab.MAX_NODE_LIMIT)
        if self._done:
            return True
        deadline = time.perf_counter() + seconds
        stop_at = self.nodes + node_limit if node_limit else np.iinfo(np.int64).max
        tables = ab._tables(self.state.board, self.table_mb)  # this thread's table
        while True:
            pause_at = min(stop_at, self.nodes + ab._CLOCK_NODES)
            if self._budget.advance(tables, self._work, self._ctl, pause_at):
                value = int(self._ctl[ab._RETURNED])
                if self._stage == _WIN and value < 1:  # not a win: is it a draw?
                    self._begin(_DRAW)
                    continue
                self._done = True
                self._result = max(-1, min(1, value))
                self._best = int(self._ctl[ab._ROOT_MOVE])
                return True
            if self.nodes >= stop_at or time.perf_counter() >= deadline:
                return False

    # ---------------------------------------------------------------- checkpoints
    def save(self, path: str | os.PathLike[str]) -> None:
        """Write where the search stands to ``path`` (an ``.npz`` of numbers, :meth:`to_bytes`;
        replaced atomically, so a stop while saving keeps the previous checkpoint)."""
        write_bytes(path, self.to_bytes())

    def to_bytes(self) -> bytes:
        """Where the search stands, as the bytes of an ``.npz`` of numbers."""
        depth = int(self._ctl[ab._DEPTH]) if not self._done else 0
        arrays = {
            "format": np.array(CHECKPOINT_FORMAT),
            "position": np.array(position_key(self.state)),
            "levers": np.array(sorted(f"{k}={int(v)}" for k, v in self.lever_options().items())),
            "stage": np.array(self._stage),
            "done": np.array(int(self._done)),
            "result": np.array(self._result),
            "best": np.array(self._best),
            "nodes": np.array(self.nodes),
            "depth": np.array(depth),
            "frames": self._work.frames[: depth + 1][:, list(_SAVED)].copy(),
            "moves": self._work.moves[:depth].copy(),
        }
        buffer = io.BytesIO()
        np.savez_compressed(buffer, **arrays)
        return buffer.getvalue()

    @classmethod
    def load(cls, path: str | os.PathLike[str], state: GameState, table_mb: int = 64) -> LongSolve:
        """The search saved in ``path`` by :meth:`save`, for ``state`` (the same position),
        ready to :meth:`run` on. The levers are the saved ones.

        Raises:
            CarnacError: the file is missing or not a checkpoint of this format, belongs to
                another position, or fails a check (see the module's text), naming it.
        """
        with reading(path, "the checkpoint") as handle:
            data = handle.read()
        return cls.from_bytes(data, state, table_mb, f"checkpoint {os.fspath(path)}")

    @classmethod
    def from_bytes(cls, data: bytes, state: GameState, table_mb: int = 64, name: str = "the checkpoint") -> LongSolve:
        """:meth:`load` from the bytes :meth:`to_bytes` gave (``name`` names them in errors)."""
        try:
            with np.load(io.BytesIO(data), allow_pickle=False) as npz:
                saved = {key: npz[key] for key in npz.files}
        except (ValueError, OSError, EOFError, KeyError, zipfile.BadZipFile) as error:
            raise CarnacError(f"{name} is not a readable .npz of numbers: {error}") from None
        return _restore(name, saved, state, table_mb)


def _field(name: str, saved: dict[str, np.ndarray], key: str, kind: str, shape: tuple | None = ()) -> np.ndarray:
    if key not in saved:
        raise CarnacError(f"{name} has no {key!r}")
    value = saved[key]
    if value.dtype.kind not in kind or (shape is not None and value.shape != shape):
        raise CarnacError(f"{name}: {key!r} is {value.dtype}{list(value.shape)}, expected kind {kind!r} shape {shape}")
    return value


def _restore(name: str, saved: dict[str, np.ndarray], state: GameState, table_mb: int) -> LongSolve:
    """A :class:`LongSolve` from a checkpoint's arrays, each checked (see the module's text)."""
    if str(_field(name, saved, "format", "U")) != CHECKPOINT_FORMAT:
        raise CarnacError(f"{name} has format {str(saved['format'])!r}, expected {CHECKPOINT_FORMAT!r}")
    if str(_field(name, saved, "position", "U")) != position_key(state):
        raise CarnacError(f"{name} belongs to another position than the one given")
    levers: dict[str, Any] = {}
    for item in _field(name, saved, "levers", "U", None).tolist():
        key, _, value = str(item).partition("=")
        known = {"null_window": False, **ab.LEVER_DEFAULTS}
        if key not in known or not value.lstrip("-").isdigit():
            raise CarnacError(f"{name}: unknown lever {item!r}")
        levers[key] = bool(int(value)) if isinstance(known[key], bool) else int(value)
    solve = LongSolve(state, table_mb, **levers)
    stage = int(_field(name, saved, "stage", "iu"))
    if stage not in ((_WIN, _DRAW) if solve.null_window else (_FULL,)):
        raise CarnacError(f"{name}: stage {stage} is not a search this solve's levers run")
    solve._begin(stage)
    nodes = int(_field(name, saved, "nodes", "iu"))
    if nodes < 0:
        raise CarnacError(f"{name}: nodes={nodes} is negative")
    if int(_field(name, saved, "done", "iu")):
        result, best = int(_field(name, saved, "result", "iu")), int(_field(name, saved, "best", "iu"))
        legal = state.legal_actions() if state.phase != OVER else []
        if result not in (-1, 0, 1) or (best not in legal and not (best == -1 and not legal)):
            raise CarnacError(f"{name}: result {result} with best move {best} is not a finished solve of this position")
        solve._done, solve._result, solve._best = True, result, best
        solve._ctl[ab._NODES] = nodes
        return solve
    depth = int(_field(name, saved, "depth", "iu"))
    work = solve._work
    if not 0 <= depth < work.plies - 1:
        raise CarnacError(f"{name}: depth {depth} is out of range 0..{work.plies - 2}")
    frames = _field(name, saved, "frames", "i", (depth + 1, len(_SAVED)))
    moves = _field(name, saved, "moves", "i", (depth, state.board.num_actions))
    window = 2  # the result search's values lie in -1..1; a best below every value is -2
    ply = state.copy()
    entered = _WINDOWS[stage]  # the window ply p was entered with: the root's is the stage's
    for p in range(depth + 1):
        row = dict(zip(_SAVED, (int(x) for x in frames[p])))
        start = row[ab._START_ALPHA] if p < depth else row[ab._ALPHA]
        if (start, row[ab._BETA]) != entered or not entered[0] <= row[ab._ALPHA] < entered[1]:
            raise CarnacError(f"{name}: ply {p}'s window {row[ab._ALPHA]}..{row[ab._BETA]} is not one its parent gives")
        work.frames[p, ab._ALPHA], work.frames[p, ab._BETA] = row[ab._ALPHA], row[ab._BETA]
        if p == depth:
            break
        legal = ply.legal_actions()
        count = row[ab._COUNT]
        listed = [int(a) for a in moves[p, :count]]
        if count != len(legal) or sorted(listed) != legal:
            raise CarnacError(f"{name}: ply {p}'s moves are not this position's legal actions")
        if not 1 <= row[ab._NEXT_MOVE] <= count or row[ab._MOVE] != listed[row[ab._NEXT_MOVE] - 1]:
            raise CarnacError(f"{name}: ply {p}'s next move is out of place")
        if row[ab._BEST_MOVE] != -1 and row[ab._BEST_MOVE] not in legal:
            raise CarnacError(f"{name}: ply {p}'s best move {row[ab._BEST_MOVE]} is not legal there")
        if not -window <= row[ab._BEST] < row[ab._BETA]:
            raise CarnacError(f"{name}: ply {p}'s best value is out of range")
        child = ply.copy()
        child.apply(row[ab._MOVE])
        if child.phase == OVER:
            raise CarnacError(f"{name}: ply {p}'s move ends the game, so no search goes below it")
        if row[ab._NEGATE] != int(child.to_act != ply.to_act):
            raise CarnacError(f"{name}: ply {p}'s sign does not match who acts next")
        alpha, beta = row[ab._ALPHA], row[ab._BETA]
        entered = (-beta, -alpha) if row[ab._NEGATE] else (alpha, beta)
        work.moves[p] = moves[p]
        for column in _SAVED:
            work.frames[p, column] = row[column]
        work.frames[p, ab._START_NODES] = min(max(0, row[ab._START_NODES]), nodes)
        ply = child
        load_game(work.st, p + 1, *game_fields(ply, lying=False))
    tables = ab._tables(state.board, table_mb)
    sym = tables.symmetric if solve.levers["symmetry"] else tables.identity
    mask = np.uint64(tables.entries - 1)
    if solve.levers["two_tier"]:
        mask ^= np.uint64(1)
    least = state.board.megaliths - ab.SYMMETRY_PLACED
    ab.path_keys(work.st, depth, sym, least, np.uint64(0), mask, work.hashes, work.frames)
    ctl = solve._ctl
    ctl[ab._NODES] = nodes
    ctl[ab._DEPTH] = depth
    ctl[ab._STEP] = ab._ENTER
    ctl[ab._STATUS] = ab._PAUSED
    return solve
