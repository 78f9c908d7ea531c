"""The memory budget of ``carnac serve``: what each piece of the server's work may take, and a
ledger that keeps it all under one bound.

Every piece of work that allocates (an agent's move, an analysis) takes a place in the ledger
before it starts, for the most it may hold, and gives it back when it ends:

* **An agent's move.** The ledger asks the agent: every agent offered must declare
  ``memory_need(board) -> int``, the most bytes one game of it holds at once on a board
  (:mod:`carnac_env.agents.memory`: the search tree of ``mcts`` and ``az`` at its peak, the exact
  solver's table where the ``solve`` option solves, 0 for ``greedy`` and ``random``). An agent
  that declares nothing (your own class, without the method) is refused when the server starts,
  not counted as nothing (:func:`search_need`). A search agent's tree may be kept between
  moves; the ledger then counts the tree as it is (:func:`held_bytes`), and an agent of your
  own its whole need for as long as its game keeps it.
* **An analysis** (:mod:`carnac_env.analysis`): :func:`analysis_need`, the search of a position,
  the raw network's pass over a game and the exact solver's verdicts (:func:`solve_need`: its
  table of :data:`~carnac_env.analysis.solved.SOLVE_TABLE_MB` MiB and one engine slot per ply);
  it keeps nothing after it.
* **The solver's tables.** The solver keeps its table in the thread that solved
  (:mod:`carnac_env.solve.alphabeta`); the server frees it after each piece of work
  (:func:`~carnac_env.solve.alphabeta.free_tables`), and the table's memory is mapped for it
  alone, so it goes back to the system at once: no idle worker holds one.

:class:`Ledger` holds the bound: a move may start only while the trees kept by idle games, the
needs of the work running and its own need fit in it; to make room it forgets the trees of the
games least recently used (their agents start afresh at their next move). A tree that grew
beyond one move's room (:func:`oversized`) is forgotten after its move, so what a game keeps
between moves is at most one move's tree.

The server offers a board to an agent only if its need is at most the bound divided by the
worker threads (its *cap per game*), so every worker can always work at once.
"""

from __future__ import annotations

import functools
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from carnac_env import _checks
from carnac_env.agents.memory import SEARCH_OVERHEAD, Need, first_room, move_capacity, sized, solver_bytes
from carnac_env.core.boards import Board
from carnac_env.errors import CarnacError

# The sizes themselves (Need, sized, move_capacity, ...) live in carnac_env.agents.memory, beside
# the agents that declare them; this module is the ledger and the server's needs built on them.
__all__ = [
    "Ledger",
    "analysis_need",
    "held_bytes",
    "megabytes",
    "oversized",
    "search_need",
    "solve_need",
    "tree_bytes",
]


def _agent_name(agent: Any) -> str:
    spec = getattr(agent, "spec", None)
    return repr(spec) if isinstance(spec, str) else f"{type(agent).__module__}.{type(agent).__qualname__}"


def search_need(agent: Any, board: Board) -> Need | None:
    """What one game of ``agent`` (a built agent) may take on ``board``, as the agent declares
    it (``memory_need(board)``), or None for an agent that declares 0. ``peak`` is the need;
    for a search agent (one with ``tree_need(board)``) ``nodes``, ``edges`` and ``kept`` are its
    tree's room (``kept`` 0 without a tree), for any other agent ``kept`` is its need (what it
    may keep between moves is not known, so all of it is counted).

    Raises:
        CarnacError: an agent that declares no ``memory_need``, one whose declaration fails or
            is not whole bytes (0 or more), or one whose memory cannot be bounded (``mcts`` with a
            time budget).
    """
    declared = getattr(agent, "memory_need", None)
    if not callable(declared):
        raise CarnacError(
            f"agent {_agent_name(agent)} does not declare its memory, so carnac serve cannot bound it: give "
            "its class a method memory_need(board) -> int, the most bytes one game of it holds at once on a "
            "board (0 if it keeps nothing; carnac_env.agents.memory)"
        )
    try:
        peak = declared(board)
    except CarnacError as err:
        raise CarnacError(f"carnac serve cannot offer agent {_agent_name(agent)} on {board.name}: {err}") from None
    except Exception as err:  # the agent's own code failed
        raise CarnacError(f"agent {_agent_name(agent)}: memory_need({board.name!r}) raised {err!r}") from err
    peak = _checks.whole(f"agent {_agent_name(agent)}: memory_need({board.name!r}) in bytes", peak, 0, 1 << 62)
    room = getattr(agent, "tree_need", None)
    tree = room(board) if callable(room) else None
    if tree is not None:
        return Need(tree.nodes, tree.edges, tree.kept, peak)
    if not peak:
        return None
    return Need(0, 0, 0 if callable(room) else peak, peak)  # a search agent without a tree keeps nothing


def tree_bytes(agent: Any) -> int:
    """Bytes the search tree of ``agent`` holds now (0 without one)."""
    arrays = getattr(getattr(agent, "search", None), "arrays", None)
    if arrays is None:
        return 0
    return sum(int(array.nbytes) for array in arrays)


def held_bytes(agent: Any) -> int:
    """What the ledger counts for an idle agent: its tree and :data:`SEARCH_OVERHEAD` (0 without
    a tree)."""
    size = tree_bytes(agent)
    return size + SEARCH_OVERHEAD if size else 0


def oversized(agent: Any, need: Need) -> bool:
    """Whether ``agent``'s tree has more room than one move needs (it grew while reusing its
    tree): such a tree is forgotten after its move, which keeps the ledger's bound."""
    arrays = getattr(getattr(agent, "search", None), "arrays", None)
    if arrays is None:
        return False
    return arrays.player.shape[1] > need.nodes or arrays.action.shape[1] > need.edges


def megabytes(n: int) -> str:
    """``n`` bytes in MB, for messages."""
    return f"{n / (1 << 20):.0f} MB" if n >= 10 << 20 else f"{n / (1 << 20):.1f} MB"


class Ledger:
    """Search memory and worker threads: who thinks, who waits, what idle games keep.

    Every method runs on the server's event loop (no lock needed). ``limit`` is the bound in
    bytes; ``workers`` how many moves may be searched at once; ``forget(game)`` drops the agent
    (and so the tree) of an idle game when its memory is needed.
    """

    def __init__(self, limit: int, workers: int, forget: Callable[[str], None]) -> None:
        self.limit = int(limit)
        self.workers = int(workers)
        self._forget = forget
        #: bytes kept between moves, per idle game, least recently used first
        self.kept: OrderedDict[str, int] = OrderedDict()
        #: bytes reserved by each game whose move is being searched
        self.running: dict[str, int] = {}
        self._waiting: OrderedDict[str, tuple[int, Any]] = OrderedDict()

    @property
    def cap(self) -> int:
        """The most one game may need: the bound shared by the workers."""
        return self.limit // self.workers

    @property
    def waiting(self) -> int:
        """Games waiting for a worker."""
        return len(self._waiting)

    def in_use(self) -> int:
        """Bytes kept by idle games plus bytes reserved by the moves running."""
        return sum(self.kept.values()) + sum(self.running.values())

    def touch(self, game: str) -> None:
        """``game`` was used: its tree is forgotten last."""
        if game in self.kept:
            self.kept.move_to_end(game)

    def keep(self, game: str, size: int) -> None:
        """``game`` (not running) now keeps ``size`` bytes (0: nothing)."""
        self.kept.pop(game, None)
        if size > 0:
            self.kept[game] = int(size)

    def drop(self, game: str) -> None:
        """``game`` is gone: forget what it keeps, and its place in the queue."""
        self.kept.pop(game, None)
        entry = self._waiting.pop(game, None)
        if entry is not None and not entry[1].done():
            entry[1].cancel()
        self._pump()

    async def acquire(self, game: str, need: int) -> None:
        """Wait until ``game`` may search a move taking at most ``need`` bytes (first come,
        first served), then reserve it; the caller must :meth:`release` it."""
        import asyncio

        if need > self.limit:
            raise CarnacError(f"a move needs {megabytes(need)}; the server's bound is {megabytes(self.limit)}")
        future = asyncio.get_running_loop().create_future()
        self._waiting[game] = (need, future)
        self._pump()
        try:
            await future
        except asyncio.CancelledError:
            if self._waiting.get(game, (0, None))[1] is future:
                del self._waiting[game]
            elif future.done() and not future.cancelled():
                self.release(game, 0)  # granted, then cancelled before it could start
            raise

    def release(self, game: str, kept: int) -> None:
        """``game``'s move is over; it now keeps ``kept`` bytes (0 once forgotten)."""
        self.running.pop(game, None)
        self.keep(game, kept)
        self._pump()

    def _pump(self) -> None:
        """Start the first waiting games while a worker is free, forgetting idle games' trees
        (least recently used first) to make room."""
        while self._waiting and len(self.running) < self.workers:
            game, (need, future) = next(iter(self._waiting.items()))
            own = self.kept.pop(game, 0)  # a game's own tree is part of its move's need
            while self.in_use() + need > self.limit and self.kept:
                oldest = next(iter(self.kept))
                del self.kept[oldest]
                self._forget(oldest)
            if self.in_use() + need > self.limit:
                if own:
                    self.kept[game] = own
                return  # moves running fill the bound: wait for one to end
            del self._waiting[game]
            if future.done():  # cancelled meanwhile
                if own:
                    self.kept[game] = own
                continue
            self.running[game] = need
            future.set_result(None)


@functools.lru_cache(maxsize=64)
def solve_need(board: Board, solve: int) -> int:
    """Bytes the exact solver may take in one analysis verdict on ``board`` for positions with
    at most ``solve`` megaliths left (0: none), with the analysis's table of
    :data:`~carnac_env.analysis.solved.SOLVE_TABLE_MB` MiB
    (:func:`carnac_env.agents.memory.solver_bytes`)."""
    from carnac_env.analysis.solved import SOLVE_TABLE_MB

    return solver_bytes(board, solve, SOLVE_TABLE_MB)


def analysis_need(board: Board, sims: int, lanes: int = 8, batch: int = 32, solve: int = 0) -> Need:
    """The memory one analysis (:class:`carnac_env.analysis.Analyst`) may take on ``board``: the
    search of one position (the ``az`` agent's, ``sims`` simulations, ``lanes`` lanes, no tree
    reuse), plus the raw network's pass over a game's positions, ``batch`` small trees at once,
    each with a new search's first arrays, which never grow (a pass makes no simulation), plus
    the exact solver's verdicts where it solves (``solve`` megaliths left, :func:`solve_need`;
    they run one at a time, after the search)."""
    nodes, edges = move_capacity(sims, board) if sims else first_room(board)
    first = sized(board, *first_room(board), lanes)
    kept = sized(board, nodes, edges, lanes)
    search = kept + first + SEARCH_OVERHEAD
    raw = sized(board, *first_room(board), 1, trees=batch)
    return Need(nodes, edges, 0, search + raw + SEARCH_OVERHEAD + solve_need(board, solve))
