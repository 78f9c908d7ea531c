"""``mcts``: Monte Carlo tree search (UCT) with compiled random playouts, on :mod:`carnac_env.search`.

Each move the agent searches the position with :class:`~carnac_env.search.Search`: the
compiled loop selects down the tree by UCB1 (every untried action first, in a seeded random
order, then ``score + c * sqrt(ln N / n)`` on the 1 win, 0.5 draw, 0 loss scale), makes one new
node per simulation, values it by a random playout to the end of the game (the batched engine's
own rules), and backs the result up with Carnac's turn order (the same player may act twice).
It plays the most visited root action (ties: the higher mean value, then the lower action).

* **Root width.** With ``width`` > 0 only the ``width`` best root actions by the ``greedy``
  agent's one-move minimax (:func:`carnac_env.agents.greedy.action_values`) are searched: a
  placement on the medium board has up to 280 legal actions, too many for random playouts to
  tell apart (docs/agents.md has the measurements). Below the root the tree is plain UCT.
* **Tree reuse.** The tree is kept between moves: at its next turn the agent looks for the new
  position among the nodes below its last root (its own move, then the opponent's replies),
  and goes on from that subtree with its statistics. ``sims`` counts only new simulations.
* **Parts as objects.** ``MCTSAgent(evaluator=..., rule=...)`` takes any evaluator of
  :mod:`carnac_env.search.evaluators` (``Playouts``, ``Network``, ``Mixed``) and any registered
  selection that is not paired (:mod:`carnac_env.search.selection`: ``UCT``, ``PUCT``); specs
  reach only the named options.

Options (spec ``mcts:sims=800:c=1.4``; their defaults are those declared on :class:`MCTSAgent`,
which ``carnac agents`` lists):

* ``sims``: new simulations per move;
* ``seconds``: a time budget per move instead (overrides ``sims``; not reproducible);
* ``c``: the UCT exploration constant;
* ``width``: search only the best ``width`` root actions by greedy's values (0: all);
* ``playouts``: playouts per new leaf;
* ``playout``: the playouts' moves: ``random`` (the default: uniformly random legal moves) or
  ``greedy`` (the ``greedy`` agent's one-move lookahead, compiled:
  :func:`carnac_env.search.lookahead.greedy_action`, ties broken at random); a greedy playout
  costs far more than a random one (docs/search.md);
* ``epsilon``: with ``playout=greedy``, the chance of a uniformly random move instead of
  greedy's at each move of a playout (0: greedy throughout);
* ``reuse``: keep the tree between moves;
* ``solve``: with at most this many megaliths left in the supply, play the exact solver's move
  (:mod:`carnac_env.agents.endgame`: under a node budget; the normal search when it gives up),
  and run the search with MCTS-Solver propagation (proven wins, losses and draws passed up the
  tree; ``Search(solver=True)``). 0 (the default) is off and changes nothing.

With a ``sims`` budget the agent is deterministic for a given seed.
"""

from __future__ import annotations

from typing import Any

from carnac_env.agents.base import SeededAgent, option
from carnac_env.agents.endgame import MAX_SOLVE, SOLVE_HELP, TABLE_MB, solver_move
from carnac_env.agents.memory import Need, solver_bytes, tree_need
from carnac_env.core.boards import Board
from carnac_env.core.game import GameState
from carnac_env.errors import CarnacError
from carnac_env.search import Mixed, Network, Playouts, Search, Selection
from carnac_env.search.evaluators import PLAYOUT_POLICIES
from carnac_env.search.selection import SELECTIONS, check_selection, make_selection


class MCTSAgent(SeededAgent):
    """Monte Carlo tree search; see the module docstring for the options.

    ``evaluator`` (a ``Playouts``, ``Network`` or ``Mixed``) and ``rule`` (a registered selection
    that is not ``paired``: ``UCT``, ``PUCT``) override ``playouts`` and ``c``; no spec reaches them.
    """

    name = "mcts"
    description = "Monte Carlo tree search (UCT) with compiled random playouts"

    sims: int = option(5000, "new simulations per move (the tree must fit in 2048 MB)", low=1, high=10_000_000)
    seconds: float = option(
        0.0, "seconds per move instead of sims (the tree stops growing at 2048 MB)", low=0.0, high=3600.0
    )
    c: float = option(1.0, "UCT exploration constant", low=0.0)
    width: int = option(8, "search only the N best root actions by greedy's values; 0 all", low=0)
    playouts: int = option(1, "playouts per new leaf", low=1, high=10_000)
    playout: str = option(
        "random", "the playouts' moves: random, or greedy's one-move lookahead", choices=PLAYOUT_POLICIES
    )
    epsilon: float = option(0.0, "with playout=greedy: the chance of a random move at each move", low=0.0, high=1.0)
    reuse: bool = option(True, "keep the tree between moves")
    solve: int = option(0, SOLVE_HELP, low=0, high=MAX_SOLVE)
    evaluator: Playouts | Network | Mixed | None = None
    rule: Selection | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.rule is not None and (check_selection(self.rule, "mcts rule").paired):
            fits = ", ".join(rule.__name__ for rule in SELECTIONS.values() if not rule.paired)
            raise CarnacError(
                f"mcts rule must be a selection of its own below the root ({fits}): mcts plays the most visited "
                f"action, and {type(self.rule).__name__} comes as a pair with its own root plan"
            )
        if self.evaluator is None:
            self.evaluator = Playouts(self.playouts, self.playout, self.epsilon)
        if self.rule is None:
            self.rule = make_selection("uct", c=self.c)
        self._search: Search | None = None
        #: Simulations run by the last call of :meth:`choose` (for benchmarks).
        self.last_sims = 0

    def reset(self, seed: int | None = None) -> None:
        """Re-seed and forget the tree."""
        super().reset(seed)
        self._search = None

    def __getstate__(self) -> dict[str, Any]:
        data = dict(self.__dict__)
        data["_search"] = None  # the tree is compiled arrays; a copy starts afresh
        return data

    @property
    def search(self) -> Search | None:
        """The search of the last move (its tree is kept for reuse), or None."""
        return self._search

    def tree_need(self, board: Board) -> Need:
        """The room and bytes of one game's search tree on ``board`` (:mod:`carnac_env.agents.memory`).

        Raises:
            CarnacError: a time budget (``seconds``): the tree grows with the time given, so no
                bound can be stated; give ``sims`` instead.
        """
        if self.seconds:
            raise CarnacError(
                f"agent {self.spec!r} has a time budget (seconds={self.seconds:g}): its search tree grows with "
                "the time, so its memory cannot be bounded; give it a number of simulations (mcts:sims=N) instead"
            )
        return tree_need(board, self.sims, 1, self.reuse)

    def memory_need(self, board: Board) -> int:
        """The most bytes one game of this agent holds at once on ``board``: its tree at its
        peak (:meth:`tree_need`) and the solver's table where it solves (``solve``)."""
        return self.tree_need(board).peak + solver_bytes(board, self.solve, TABLE_MB)

    def root_actions(self, state: GameState) -> list[int] | None:
        """The actions searched at the root: the ``width`` best by greedy, or None for all."""
        if not self.width:
            return None
        legal = state.legal_actions()
        if len(legal) <= self.width:
            return None
        from carnac_env.agents.greedy import action_values

        ranked = sorted(action_values(state), key=lambda va: (-va[0], va[1]))
        return sorted(a for _, a in ranked[: self.width])

    def choose(self, state: GameState) -> int:
        """The most visited root action after the search (ties: higher mean, then lower action)."""
        if state.is_over:
            raise CarnacError("the game is over; there is no action to choose")
        legal = state.legal_actions()
        if len(legal) > 1:
            solved = solver_move(state, self.solve)
            if solved is not None:
                self.last_sims = 0
                return solved
        search = self._search
        if search is None or search.board != state.board:
            search = self._search = Search(
                state.board, self.evaluator, self.rule, seed=self.rng.getrandbits(63), solver=self.solve > 0
            )
        search.set_games([state], reuse=self.reuse)
        search.restrict_root(0, self.root_actions(state))
        if len(legal) == 1:
            self.last_sims = 0
            return legal[0]
        if not self.seconds:
            search.check_budget(self.sims, "mcts option sims")
        self.last_sims = search.run(self.sims, seconds=self.seconds)
        return search.best_action(0, ties="value")
