"""The memory budget of ``carnac serve``: how much a search agent's tree takes, and a ledger
that keeps the server's search memory under one bound.

A search agent (``mcts``, ``az``) keeps its search tree as arrays (:mod:`carnac_env.search.tree`):
a few bytes per node and per edge, and a search of ``sims`` simulations reserves room for
``sims + 2`` nodes and, for each, one edge per action the position could have. So one move
of ``mcts`` (5,000 simulations) on ``le_menec`` (773 actions) takes about 118 MB, and a server
that kept every game's tree would grow without end. Here:

* :func:`search_need` is the most memory one move of an agent can take on a board, computed
  from the agent's settings (``sims``, ``lanes``, tree reuse) and the board before the agent is
  built: the room a move's tree needs (:func:`move_capacity`), in bytes by
  :func:`carnac_env.search.tree.tree_bytes` (:func:`sized`: the search's own sizing, from its
  fields), times four for an agent that keeps its tree between moves (the tree grows by
  doubling, and the old and new arrays live side by side while it does), plus
  :data:`SEARCH_OVERHEAD` for the search's other arrays.
* :class:`Ledger` holds the bound: a move may start only while the trees kept by idle games,
  the needs of the moves running and its own need fit in it; to make room it forgets the
  trees of the games least recently used (their agents start afresh at their next move). A
  tree that grew beyond :func:`move_capacity` is forgotten after its move, so what a game
  keeps between moves is at most one move's tree.

The server offers a board to a search agent only if :func:`search_need` is at most the bound
divided by the worker threads (its *cap per game*), so every worker can always think at
once. Agents that name code (class paths) are not measured: their memory is their own.
The learned agent's analysis of a position or a game (:mod:`carnac_env.analysis`) takes a
worker and a place in the ledger like a move, with :func:`analysis_need`; it keeps nothing
after it. Where it asks the exact solver (positions with at most ``solve`` megaliths left), the
need counts the solver's memory too (:func:`solve_need`: its transposition table of
:data:`~carnac_env.analysis.solved.SOLVE_TABLE_MB` MiB and one engine slot per ply), and its
time is bounded by the solver's node limit
(:data:`~carnac_env.analysis.solved.DEFAULT_SOLVE_NODES` nodes per verdict).
"""

from __future__ import annotations

import functools
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, NamedTuple

from carnac_env.core.boards import Board
from carnac_env.errors import CarnacError

#: The search memory of ``carnac serve`` unless ``--memory`` says otherwise, in MB.
DEFAULT_MEMORY_MB = 1024

#: Bytes set aside per search for its arrays other than the tree (the game copies it plays
#: on, the network's inputs): measured at under 0.5 MB on le_menec with 8 lanes.
SEARCH_OVERHEAD = 2 << 20
#: A new search's first arrays: room for this many nodes, and this many edges per action up to
#: 64 actions (:class:`carnac_env.search.Search`'s constructor); the first growth doubles them.
_FIRST_NODES = 64


def sized(board: Board, nodes: int, edges: int, lanes: int = 1, trees: int = 1) -> int:
    """Bytes of ``trees`` search trees on ``board`` with room for ``nodes`` nodes and ``edges``
    edges each and ``lanes`` lanes: :func:`carnac_env.search.tree.tree_bytes`, the one function
    that sizes a tree from its fields (so a field added there is counted here), nothing
    allocated."""
    from carnac_env.search.tree import tree_bytes as tree_size

    return tree_size(trees, nodes, edges, 2 * board.megaliths + 2, lanes)


def _first(board: Board) -> tuple[int, int]:
    """The room of a new search's first arrays on ``board`` (nodes, edges per tree)."""
    return _FIRST_NODES, _FIRST_NODES * min(board.num_actions, 64)


class Need(NamedTuple):
    """What one game of a search agent may take on a board."""

    nodes: int  #: the most nodes a move's tree has room for
    edges: int  #: the most edges a move's tree has room for
    kept: int  #: bytes of that tree (at most what the game keeps between moves)
    peak: int  #: bytes one move may take at its peak (see the module docstring)


def _search_settings(agent: Any) -> tuple[int, int, bool] | None:
    """``(sims, lanes, reuse)`` of a built-in search agent, None for an agent without a search
    tree (``greedy``, ``random``) or one this module does not know (a class path).

    Raises:
        CarnacError: an ``mcts`` agent with a time budget (``seconds``): its tree grows with
            the time given, so no bound can be stated; give it ``sims``.
    """
    from carnac_env.agents import MCTSAgent
    from carnac_env.agents.az import AZAgent

    if isinstance(agent, MCTSAgent):
        if agent.seconds:
            raise CarnacError(
                f"agent {agent.spec!r} has a time budget (seconds={agent.seconds:g}): its search tree grows with "
                "the time, so carnac serve cannot bound its memory; give it a number of simulations "
                "(mcts:sims=N) instead"
            )
        return agent.sims, 1, agent.reuse
    if isinstance(agent, AZAgent):
        return (agent.sims, agent.lanes, False) if agent.sims else None
    return None


def move_capacity(sims: int, board: Board) -> tuple[int, int]:
    """The most nodes and edges the tree of one move of ``sims`` simulations on ``board`` has
    room for: ``sims + 2`` nodes (the root, its expansion, one per simulation) and one edge
    per action for each (a node's actions are at most the board's), or the first growth of
    a new search's arrays if that is more."""
    actions = board.num_actions
    nodes = max(sims + 2, 2 * _FIRST_NODES)
    edges = max((sims + 2) * actions, 2 * _FIRST_NODES * min(actions, 64))
    return nodes, edges


def search_need(agent: Any, board: Board) -> Need | None:
    """The memory one game of ``agent`` (a built agent) may take on ``board``, or None for an
    agent with no search tree (or one not built in).

    Raises:
        CarnacError: an agent whose memory cannot be bounded (see :func:`_search_settings`).
    """
    settings = _search_settings(agent)
    if settings is None:
        return None
    sims, lanes, reuse = settings
    nodes, edges = move_capacity(sims, board)
    kept = sized(board, nodes, edges, lanes)
    first = sized(board, *_first(board), lanes)
    # Without reuse a move's tree is at most `kept` (grown once from the first arrays, which
    # live beside it while it grows); with reuse it may grow twice in a move, each time to at
    # most twice what it held, the old arrays alive beside the new: 4 x kept.
    peak = (4 * kept if reuse else kept + first) + SEARCH_OVERHEAD
    return Need(nodes, edges, kept, peak)


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
    at most ``solve`` megaliths left (0: none): its transposition table (the largest power of
    two of entries within :data:`~carnac_env.analysis.solved.SOLVE_TABLE_MB` MiB), the engine
    state with one slot per ply (``2 * solve + 3`` slots, measured on
    :func:`carnac_env.batch.state.new_state` itself) and its move lists."""
    if solve <= 0:
        return 0
    from carnac_env.analysis.solved import SOLVE_TABLE_MB
    from carnac_env.batch.state import new_state
    from carnac_env.solve.alphabeta import ENTRY_BYTES

    entries = 1
    while entries * 2 * ENTRY_BYTES <= SOLVE_TABLE_MB << 20:
        entries *= 2
    plies = 2 * solve + 3
    slots = sum(int(getattr(part, "nbytes", 0)) for part in new_state(board, plies)[1])
    return entries * ENTRY_BYTES + slots + plies * board.num_actions * 4


def analysis_need(board: Board, sims: int, lanes: int = 8, batch: int = 32, solve: int = 0) -> Need:
    """The memory one analysis (:class:`carnac_env.analysis.Analyst`) may take on ``board``: the
    search of one position (the ``az`` agent's, ``sims`` simulations, ``lanes`` lanes, no tree
    reuse), plus the raw network's pass over a game's positions, ``batch`` small trees at once,
    each with a new search's first arrays, which never grow (a pass makes no simulation), plus
    the exact solver's verdicts where it solves (``solve`` megaliths left, :func:`solve_need`;
    they run one at a time, after the search)."""
    nodes, edges = move_capacity(sims, board) if sims else _first(board)
    first = sized(board, *_first(board), lanes)
    kept = sized(board, nodes, edges, lanes)
    search = kept + first + SEARCH_OVERHEAD
    raw = sized(board, *_first(board), 1, trees=batch)
    return Need(nodes, edges, 0, search + raw + SEARCH_OVERHEAD + solve_need(board, solve))
