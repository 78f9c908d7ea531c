"""What the learned agent thinks: a position's evaluation and a game's review, for learners.

    from carnac_env.analysis import analyse, review
    view = analyse(state)                  # the board's az model, and a 200-simulation search
    view.expected                          # (Red, White) expected scores from the value head
    view.top(5)                            # its favourite moves: prior, visits and visit share
    view.best                              # the move the az agent plays here
    view                                   # in Jupyter: the board with the policy as a heat map
    game = review(record)                  # every position of a game, from Red's side
    game.red                               # Red's expected score after each move
    game.mistakes                          # the moves where the mover's expected score fell most,
                                           # each with the move the agent preferred there
    game                                   # in Jupyter: the curve, the mistakes circled

**The numbers.** The network's value ``v`` is its prediction of the result for the player to act
(+1 a win, 0 a draw, -1 a loss); shown as ``(1 + v) / 2``, that player's *expected score*, where a
draw counts half, and the other side gets the rest. It is what the value head learned to
predict, not a calibrated probability of winning. The *prior* of a legal move is the softmax
of the policy head's logits over the legal moves; after a search (the ``az`` agent's: PUCT,
``c = 1.5``, 8 lanes, ``sims`` simulations, default 200) each move's *visit share* is its visits
over all, and the most visited is the agent's move. A review's curve is always **Red's**
expected score: Carnac's turns do not strictly alternate (after a tilt the tilter places, after
a decline the placer places again), so "the player to act" would flip without the game
changing hands.

Any network works (``model=``: a :class:`~carnac_env.models.PolicyValueNet`, a model file or a
shipped model's name); by default the model the ``az`` agent plays the board with. The pictures
are SVG (Jupyter shows :class:`Evaluation` and :class:`Review` inline) or Pillow images
(``.png()``); ``carnac serve`` and the web replay show the same. ``python -m carnac_env.analysis
GAME.json --html OUT.html`` writes a game's web replay with the analysis in it.

**Against perfect play.** Where a position has at most ``solve`` megaliths left (default
:data:`DEFAULT_SOLVE`), the exact solver (:mod:`carnac_env.solve`) gives its verdict for the
player to act: ``view.solved`` is ``"win in N"``, ``"draw"`` or ``"loss in N"`` (``N``: that
player's moves left along the solver's line, :mod:`carnac_env.analysis.solved`),
``view.verdict`` the whole :class:`Verdict` with the solver's move; a review's ``solved`` lists
the verdicts per position and its ``blunders`` the moves that threw a solved result away. The
solver's budget is bounded (``solve_nodes``); where it gives up the verdict is None, never a
guess.
"""

from typing import Any

from carnac_env.analysis.position import (
    DEFAULT_SIMS,
    Analyst,
    Evaluation,
    MoveInfo,
    analyse,
    default_model,
    expected_score,
)
from carnac_env.analysis.review import Blunder, Mistake, Review
from carnac_env.analysis.solved import DEFAULT_SOLVE, DEFAULT_SOLVE_NODES, Verdict, verdict
from carnac_env.render.agent_view import curve_png, curve_svg, evaluation_png, evaluation_svg, policy_layer

__all__ = [
    "DEFAULT_SIMS",
    "DEFAULT_SOLVE",
    "DEFAULT_SOLVE_NODES",
    "Analyst",
    "Blunder",
    "Evaluation",
    "Mistake",
    "MoveInfo",
    "Review",
    "Verdict",
    "analyse",
    "curve_png",
    "curve_svg",
    "default_model",
    "evaluation_png",
    "evaluation_svg",
    "expected_score",
    "policy_layer",
    "review",
    "verdict",
]


def review(
    game: Any,
    model: Any = None,
    *,
    sims: int = DEFAULT_SIMS,
    mistakes: int = 3,
    search: str = "mistakes",
    solve: int = DEFAULT_SOLVE,
) -> Review:
    """Review ``game`` (a :class:`~carnac_env.core.record.GameRecord`, or action numbers from the
    start): the value head on every position, the ``mistakes`` biggest drops, and a search of
    ``sims`` simulations at each of them (``search="all"``: at every position; ``"none"``: none,
    the raw policy's choice); the solver's verdicts where at most ``solve`` megaliths are left
    (0: none), and the blunders against them.

    Raises:
        CarnacError: a bad game, model or option.
    """
    from carnac_env.core.record import GameRecord
    from carnac_env.errors import CarnacError

    if isinstance(game, GameRecord):
        board = game.board
    elif isinstance(game, tuple | list):
        raise CarnacError("review(actions) needs the board: use Analyst(board).review(actions)")
    else:
        raise CarnacError(f"expected a GameRecord, got {type(game).__name__}")
    return Analyst(board, model, sims=sims, solve=solve).review(game, mistakes=mistakes, search=search)
