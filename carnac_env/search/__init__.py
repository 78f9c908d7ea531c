"""One compiled tree search for every agent and for self-play (mctx's shape, numba's speed).

Many trees are searched together, each a few arrays (:mod:`carnac_env.search.tree`, its fields
declared once); one compiled loop (:mod:`carnac_env.search.simulation`) walks them down, plays
the moves with the batched engine's rules (:mod:`carnac_env.batch`), values the leaves and
backs the values up with Carnac's turn order (the same player may act twice:
:func:`~carnac_env.search.tree.backup`). The parts plug together:

* **the plug points' types** (:mod:`carnac_env.search.base`): the evaluator and selection
  protocols, :class:`Leaves`, :class:`Evaluation`, the compiled views, :class:`RootEdges`;
* **selections**, one file each, registered in :mod:`carnac_env.search.selection`
  (:data:`SELECTIONS`): :class:`UCT`, :class:`PUCT`, :class:`Gumbel` (sequential halving at
  the root, completed-Q policy improvement below), small objects holding their constants and
  their compiled score;
* **evaluators** (:mod:`carnac_env.search.evaluators`): one protocol, ``evaluate(leaves) ->
  Evaluation(logits, values)`` on a batch of :class:`Leaves`, that a Python class implements
  (:class:`Evaluator`; docs/search.md, "Writing an evaluator"), with fast built-in cases:
  :class:`Playouts` (compiled random playouts, valued inside the loop), :class:`Network` (a
  policy-value network, one batch per round over all trees) and :class:`Mixed` (both);
* :class:`Search` (:mod:`carnac_env.search.search`): roots from core game states or from the
  batched engine's slots, tree reuse, time or simulation budgets, and the results (visits,
  values, the improved policy, the chosen action).

:func:`random_playout` and :func:`playout_actions` (one random game from a core GameState, the
same moves as the :class:`Playouts` evaluator) are :mod:`carnac_env.search.playouts`'s, exported
here too. The ``mcts`` and ``az`` agents and the trainer's self-play are thin layers over it.
"""

from carnac_env.search.base import Evaluation, Evaluator, Leaves, RootEdges, Selection
from carnac_env.search.evaluators import Mixed, Network, Playouts
from carnac_env.search.gumbel import Gumbel, halving_schedule
from carnac_env.search.playouts import playout_actions, random_playout
from carnac_env.search.puct import PUCT
from carnac_env.search.search import Search
from carnac_env.search.selection import SELECTIONS, make_selection
from carnac_env.search.uct import UCT

__all__ = [
    "PUCT",
    "SELECTIONS",
    "UCT",
    "Evaluation",
    "Evaluator",
    "Gumbel",
    "Leaves",
    "Mixed",
    "Network",
    "Playouts",
    "RootEdges",
    "Search",
    "Selection",
    "halving_schedule",
    "make_selection",
    "playout_actions",
    "random_playout",
]
