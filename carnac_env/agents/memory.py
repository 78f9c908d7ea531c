"""What one game of an agent may hold in memory: the sizes behind each agent's ``memory_need``.

Every built-in agent declares ``memory_need(board) -> int``: the most bytes one game of it may
hold at once on ``board``, computed from its options and the board before it plays (nothing is
allocated). ``carnac serve`` reserves that much in its memory ledger for each move
(:mod:`carnac_env.serve.budget`) and refuses an agent that declares nothing; an agent of your
own (a class path) declares it the same way, a method returning whole bytes.

* A search agent (``mcts``, ``az``) keeps its search tree as arrays
  (:mod:`carnac_env.search.tree`): a search of ``sims`` simulations reserves room for ``sims + 2``
  nodes and, for each, one edge per action the position could have (:func:`move_capacity`), in
  bytes by :func:`carnac_env.search.tree.tree_bytes` (:func:`sized`). Its peak in a move
  (:func:`tree_need`) is that tree plus the first arrays it grew from, or four times the tree
  for an agent that keeps its tree between moves (the tree grows by doubling, and the old and
  new arrays live side by side while it does), plus :data:`SEARCH_OVERHEAD` for the search's
  other arrays.
* An agent with the ``solve`` option also holds the exact solver's transposition table and
  per-ply arrays while it solves (:func:`solver_bytes`).
* ``greedy`` and ``random`` hold no more than a few small arrays: 0.
"""

from __future__ import annotations

from typing import NamedTuple

from carnac_env.core.boards import Board

__all__ = ["SEARCH_OVERHEAD", "Need", "first_room", "move_capacity", "sized", "solver_bytes", "tree_need"]

#: Bytes set aside per search for its arrays other than the tree (the game copies it plays
#: on, the network's inputs): measured at under 0.5 MB on le_menec with 8 lanes.
SEARCH_OVERHEAD = 2 << 20
#: A new search's first arrays: room for this many nodes, and this many edges per action up to
#: 64 actions (:class:`carnac_env.search.Search`'s constructor); the first growth doubles them.
_FIRST_NODES = 64


class Need(NamedTuple):
    """What one game of a search agent's tree may take on a board."""

    nodes: int  #: the most nodes a move's tree has room for
    edges: int  #: the most edges a move's tree has room for
    kept: int  #: bytes of that tree (at most what the game keeps between moves)
    peak: int  #: bytes one move may take at its peak (see the module docstring)


def sized(board: Board, nodes: int, edges: int, lanes: int = 1, trees: int = 1) -> int:
    """Bytes of ``trees`` search trees on ``board`` with room for ``nodes`` nodes and ``edges``
    edges each and ``lanes`` lanes: :func:`carnac_env.search.tree.tree_bytes`, the one function
    that sizes a tree from its fields (so a field added there is counted here), nothing
    allocated."""
    from carnac_env.search.tree import tree_bytes

    return tree_bytes(trees, nodes, edges, 2 * board.megaliths + 2, lanes)


def first_room(board: Board) -> tuple[int, int]:
    """The room of a new search's first arrays on ``board`` (nodes, edges per tree)."""
    return _FIRST_NODES, _FIRST_NODES * min(board.num_actions, 64)


def move_capacity(sims: int, board: Board) -> tuple[int, int]:
    """The most nodes and edges the tree of one move of ``sims`` simulations on ``board`` has
    room for: ``sims + 2`` nodes (the root, its expansion, one per simulation) and one edge
    per action for each (a node's actions are at most the board's), or the first growth of
    a new search's arrays if that is more."""
    actions = board.num_actions
    nodes = max(sims + 2, 2 * _FIRST_NODES)
    edges = max((sims + 2) * actions, 2 * _FIRST_NODES * min(actions, 64))
    return nodes, edges


def tree_need(board: Board, sims: int, lanes: int = 1, reuse: bool = False) -> Need:
    """The search tree of one game on ``board``: ``sims`` simulations a move, ``lanes`` lanes,
    the tree kept between moves or not (``reuse``); see the module docstring."""
    nodes, edges = move_capacity(sims, board)
    kept = sized(board, nodes, edges, lanes)
    first = sized(board, *first_room(board), lanes)
    # Without reuse a move's tree is at most `kept` (grown once from the first arrays, which
    # live beside it while it grows); with reuse it may grow twice in a move, each time to at
    # most twice what it held, the old arrays alive beside the new: 4 x kept.
    peak = (4 * kept if reuse else kept + first) + SEARCH_OVERHEAD
    return Need(nodes, edges, kept, peak)


def solver_bytes(board: Board, solve: int, table_mb: int) -> int:
    """Bytes the exact solver holds while it solves positions on ``board`` with at most
    ``solve`` megaliths left (0: it never solves) with a table of ``table_mb`` MiB:
    :func:`carnac_env.solve.alphabeta.memory_bytes`."""
    if solve <= 0:
        return 0
    from carnac_env.solve.alphabeta import memory_bytes

    return memory_bytes(board, solve, table_mb)
