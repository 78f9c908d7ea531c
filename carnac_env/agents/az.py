"""``az``: AlphaZero-style search over a policy-value network, run with numpy alone.

The network (:class:`~carnac_env.models.PolicyValueNet`) gives every position a prior over its
legal actions and a value; the search (:class:`~carnac_env.search.Search`) runs ``sims``
simulations over it, evaluating one leaf per simulation, and plays:

* with ``rule=puct`` (the default): PUCT, ``q + c * prior * sqrt(N) / (1 + n)`` with an unvisited
  action valued at its node's own value; the most visited root action (ties: the higher prior,
  then the lower action number);
* with ``rule=gumbel``: Gumbel MuZero's sequential halving over the ``considered`` best root
  actions and its completed-Q selection below (no noise in play); the action sequential
  halving ends on.

**Turn order.** In Carnac the same player may act twice in a row (the tilter places next; after
a decline the placer places again); the search's one backup (:func:`carnac_env.search.tree.backup`)
takes each value for the player who chose each edge, so nothing assumes alternation.

Options (spec ``az:sims=200:c=1.5:model=PATH``; their defaults are those declared on
:class:`AZAgent`, which ``carnac agents`` lists):

* ``sims``: simulations per move (``sims=0`` plays the raw policy: the legal action with the
  highest network logit, no search);
* ``c``: the PUCT exploration constant;
* ``rule``: ``puct`` or ``gumbel``; ``considered``: Gumbel's root actions;
* ``lanes``: leaves evaluated per network call (virtual losses keep them apart): fewer, slower
  calls than one leaf at a time, for about the same play;
* ``solve``: with at most this many megaliths left in the supply, play the exact solver's move
  (:mod:`carnac_env.agents.endgame`: under a node budget; the normal search when it gives up),
  and run the search with MCTS-Solver propagation (``Search(solver=True)``); 0 (the default)
  is off and changes nothing;
* ``model``: a model file (``.npz``, :func:`carnac_env.models.save`) or the name of a shipped
  model (``general``, a generation such as ``general-g1``, or a one-board specialist such as
  ``small``); by default :func:`~carnac_env.models.default_model`: the general model, which
  reads the board's rules as inputs and plays every board (a board's specialist would be the
  default only where it is measurably stronger; none is today). A model trained under other
  rules is never used: given with ``model=``, it is refused with a
  :class:`~carnac_env.errors.CarnacError`.

The agent uses no random numbers: the same position gives the same move.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from carnac_env.agents.base import SeededAgent, option
from carnac_env.agents.endgame import MAX_SOLVE, SOLVE_HELP, TABLE_MB, solver_move
from carnac_env.agents.memory import Need, solver_bytes, tree_need
from carnac_env.core.boards import Board
from carnac_env.core.game import GameState
from carnac_env.core.observation import observation_planes
from carnac_env.errors import CarnacError
from carnac_env.models import PolicyValueNet, cached, model_for, model_path, plays
from carnac_env.search import Network, Search
from carnac_env.search.selection import make_selection

__all__ = ["AZAgent", "check_board"]

RULES = ("puct", "gumbel")
BACKENDS = ("numpy", "onnx", "onnx-int8")


def check_board(net: PolicyValueNet, state: GameState | Board) -> None:
    """Raise :class:`CarnacError` unless ``net`` was trained for the rules of ``state``'s board
    (or of the board itself; :func:`carnac_env.models.plays`: a general model plays any board)."""
    board = state if isinstance(state, Board) else state.board
    mine = net.header["board"]
    if not plays(net, board):
        raise CarnacError(
            f"model {net.source} was trained on board {mine['name']!r} ({net.rows} x {net.cols}, "
            f"{net.megaliths} megaliths, min dolmen {mine['min_dolmen']}, last tilt {mine.get('last_tilt', True)}); "
            f"the game is on {board.name!r} ({board.rows} x {board.cols}, {board.megaliths} megaliths, min dolmen "
            f"{board.min_dolmen}, last tilt {board.last_tilt}). Expected a model for this board's rules: pass "
            "az:model=general (every board) or az:model=PATH"
        )


class AZAgent(SeededAgent):
    """Search over a policy-value network; see the module docstring for the options."""

    name = "az"
    description = "AlphaZero-style: search guided by a trained policy-value network, run with numpy alone (no PyTorch)"

    sims: int = option(
        200, "simulations per move, the search budget; 0: the raw policy (no search)", low=0, high=1_000_000
    )
    c: float = option(1.5, "PUCT exploration constant", low=0.0)
    rule: str = option(
        "puct", "search rule: puct (the most visited move) or gumbel (sequential halving)", choices=RULES
    )
    considered: int = option(16, "gumbel: root actions sequential halving starts from", low=1, high=4096)
    lanes: int = option(8, "leaves evaluated per network call (virtual losses keep them apart)", low=1, high=256)
    model: str = option(
        "", "a .npz file from carnac train or a shipped model's name (general, general-g1, small...); default: general"
    )
    solve: int = option(0, SOLVE_HELP, low=0, high=MAX_SOLVE)
    backend: str = option(
        "numpy", "network inference: numpy, or onnxruntime (the onnx extra) in float32 (onnx) or int8", choices=BACKENDS
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        self._net: PolicyValueNet | None = cached(model_path(self.model)) if self.model else None
        # the default model of each board this agent has played, by name: kept once loaded, so a
        # shipped file rewritten meanwhile never changes what the agent plays or its record
        self._defaults: dict[str, PolicyValueNet] = {}
        self._search: Search | None = None
        self._backends: dict[PolicyValueNet, Any] = {}
        if self.backend != "numpy":
            from carnac_env.models.onnx_runtime import _modules

            _modules()  # a missing onnxruntime is said here, not at the first move

    def __getstate__(self) -> dict:
        data = dict(self.__dict__)
        data["_search"] = None
        return data

    def network_for(self, state: GameState) -> PolicyValueNet:
        """The network that plays ``state``: the ``model`` option's (checked against the board's
        rules), else the shipped model for the board (:func:`carnac_env.models.default_model`)."""
        if self._net is not None:
            check_board(self._net, state)
            return self._net
        return self._default(state.board)[0]

    def _default(self, board: Board) -> tuple[PolicyValueNet, str]:
        """The board's default model (:func:`~carnac_env.models.model_for`) and its name, the
        network this agent loaded first under that name."""
        net, name = model_for(board)  # raises, saying why, when no shipped model plays the board
        return self._defaults.setdefault(name, net), name

    def model_used(self, board: Board) -> dict[str, str]:
        """Which model file plays ``board``: ``{"model": name, "sha256": digest}``, the ``model``
        option as given (a shipped name or a path) or the board's default model's name
        (:func:`~carnac_env.models.default_model`), and the sha256 of the very bytes the agent's
        network was made from (``net.sha256``, hashed as they were loaded, never read again from
        the disk: :func:`~carnac_env.models.model_digest`). Arenas and evaluation cards record it,
        so a record names the network that played.

        Raises:
            CarnacError: no model plays ``board`` (the option's model is trained under other
                rules, or no shipped model is).
        """
        if self._net is not None:
            check_board(self._net, board)
            net, name = self._net, self.model
        else:
            net, name = self._default(board)
        assert net.sha256 is not None  # cached() makes every network from a file's bytes
        return {"model": name, "sha256": net.sha256}

    def tree_need(self, board: Board) -> Need | None:
        """The room and bytes of one move's search tree on ``board`` (:mod:`carnac_env.agents.memory`;
        no tree is kept between moves), or None with ``sims=0`` (no search)."""
        return tree_need(board, self.sims, self.lanes) if self.sims else None

    def memory_need(self, board: Board) -> int:
        """The most bytes one game of this agent holds at once on ``board``: its search tree at
        its peak (:meth:`tree_need`) and the solver's table where it solves (``solve``)."""
        tree = self.tree_need(board)
        return (tree.peak if tree else 0) + solver_bytes(board, self.solve, TABLE_MB)

    def _evaluator_net(self, net: PolicyValueNet) -> Any:
        """``net``, or its onnxruntime twin (one per network) for the ``backend`` option."""
        if self.backend == "numpy":
            return net
        found = self._backends.get(net)
        if found is None:
            from carnac_env.models.onnx_runtime import OnnxNet

            found = self._backends[net] = OnnxNet(net, "int8" if self.backend == "onnx-int8" else "float32")
        return found

    @property
    def search(self) -> Search | None:
        """The search of the last move, or None (``sims=0``, or before the first move)."""
        return self._search

    def choose(self, state: GameState) -> int:
        """The search's move (see the module docstring); ``sims=0``: the legal action with the
        highest logit."""
        if state.is_over:
            raise CarnacError("the game is over; there is no action to choose")
        net = self._evaluator_net(self.network_for(state))
        legal = state.legal_actions()
        if len(legal) == 1:
            return legal[0]
        solved = solver_move(state, self.solve)
        if solved is not None:
            return solved
        if self.sims == 0:
            logits, _ = net.forward(observation_planes(state, state.to_act)[None], board=state.board)
            return legal[int(np.argmax(logits[0, legal]))]
        search = self._search
        if search is None or search.board != state.board or search.evaluator.net is not net:
            constants = {"puct": {"c": self.c}, "gumbel": {"considered": self.considered, "noise": False}}
            rule = make_selection(self.rule, **constants[self.rule])
            search = self._search = Search(
                state.board, Network(net), rule, seed=0, lanes=self.lanes, solver=self.solve > 0
            )
        search.set_games([state])
        search.check_budget(self.sims, "az option sims")
        search.run(self.sims)
        return search.best_action(0) if self.rule == "puct" else search.gumbel_action(0)
