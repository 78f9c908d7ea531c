"""One compiled tree search for every agent and for self-play (mctx's shape, numba's speed).

Many trees are searched together, each a few arrays (:mod:`carnac_env.search.tree`); one
compiled loop (:mod:`carnac_env.search.engine`) walks them down, plays the moves with the
batched engine's rules (:mod:`carnac_env.search.games`), values the leaves and backs the
values up with Carnac's turn order (the same player may act twice: :func:`~carnac_env.search.tree.backup`).
The parts plug together:

* **rules** (:mod:`carnac_env.search.rules`): :class:`UCT`, :class:`PUCT`, :class:`Gumbel`
  (sequential halving at the root, completed-Q policy improvement below);
* **evaluators** (:mod:`carnac_env.search.evaluators`): :class:`Playouts` (compiled random
  playouts), :class:`Network` (a policy-value network, one batch per round over all trees),
  :class:`Mixed` (both);
* :func:`random_playout` (:mod:`carnac_env.search.playouts`): one random game from a core
  GameState to the end, compiled, with the same moves as the :class:`Playouts` evaluator;
* :class:`Search` (:mod:`carnac_env.search.search`): roots from core game states or from the
  batched engine's slots, tree reuse, time or simulation budgets, and the results (visits,
  values, the improved policy, the chosen action).

The ``mcts`` and ``az`` agents and the trainer's self-play are thin layers over it.
"""

from carnac_env.batch.playouts import playout_actions, random_playout
from carnac_env.search.evaluators import Mixed, Network, Playouts
from carnac_env.search.rules import PUCT, UCT, Gumbel, halving_schedule
from carnac_env.search.search import RootEdges, Search

__all__ = [
    "PUCT",
    "UCT",
    "Gumbel",
    "Mixed",
    "Network",
    "Playouts",
    "RootEdges",
    "Search",
    "halving_schedule",
    "playout_actions",
    "random_playout",
]
