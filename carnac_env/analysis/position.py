"""What the learned agent sees in one position: :class:`Analyst` and its :class:`Evaluation`.

The network's **value** ``v`` is its prediction of the result for the player to act: +1 a win,
0 a draw, -1 a loss. :func:`expected_score` turns it into ``(1 + v) / 2``, the *expected
score* of that player on the 1-for-a-win, half-for-a-draw scale, and the other side gets the
rest. It is what the value head learned to predict, not a calibrated probability of winning
(a draw counts half, and nothing makes the head's numbers frequencies).

The network's **policy** is its logit for every action; the prior of a legal move is the
softmax of the logits over the legal moves only. A **search** (the ``az`` agent's: PUCT over
this network, ``c = 1.5``, 8 lanes, seed 0) then spends ``sims`` simulations; each root move's
*visit share* is its visits over all root visits, and the most visited move is the agent's
choice: the move ``az:sims=N`` plays here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from carnac_env import _checks
from carnac_env.analysis.solved import DEFAULT_SOLVE, DEFAULT_SOLVE_NODES, Verdict, verdict
from carnac_env.core.boards import Board, make_board
from carnac_env.core.game import PHASE_NAMES, PLAYER_NAMES, GameState
from carnac_env.core.notation import action_to_text, square_name
from carnac_env.errors import CarnacError

__all__ = ["DEFAULT_SIMS", "Analyst", "Evaluation", "MoveInfo", "default_model", "expected_score", "resolve_model"]

#: The search budget of an analysis unless told otherwise: the ``az`` agent's default.
DEFAULT_SIMS = 200
#: The ``az`` agent's PUCT constant and lanes, so that an analysis searches as it plays.
PUCT_C = 1.5
LANES = 8


def expected_score(value: float) -> float:
    """``(1 + value) / 2``: a value in [-1, 1] for the player to act as that player's expected
    score (1 a win, 1/2 a draw, 0 a loss), clipped to [0, 1]."""
    return float(min(1.0, max(0.0, (1.0 + float(value)) / 2.0)))


def default_model(board: Board) -> tuple[Any, str]:
    """The network the ``az`` agent plays ``board`` with by default, and its name.

    :func:`carnac_env.models.model_for` returns ``(net, name)`` where one general model plays
    every board, and ``(net, own)`` (whether it is the board's own model) where each board has
    its own; both are read here. A shipped model is named for the board it was trained on.
    """
    from carnac_env.models import model_for

    net, which = model_for(board)
    if isinstance(which, str):
        return net, which
    return net, board.name if which else str(net.board_name)


def resolve_model(board: Board, model: Any = None) -> tuple[Any, str]:
    """``(net, name)`` for ``model``: None (the board's default, :func:`default_model`), a
    shipped model's name or a model file (``.npz``), or a network object with ``forward``
    (a :class:`~carnac_env.models.PolicyValueNet`, trained for any board: the network is
    fully convolutional).

    Raises:
        CarnacError: no model for the board, a name that is neither shipped nor a file, a
            bad model file, or an object that is not a network.
    """
    from carnac_env.models import cached, model_path

    if model is None:
        return default_model(board)
    if isinstance(model, str | Path):
        path = model_path(str(model))
        return cached(path), str(model) if isinstance(model, str) and "/" not in model else path.name
    if not callable(getattr(model, "forward", None)):
        raise CarnacError(
            f"model {model!r} is not a network: expected a PolicyValueNet, a model file or a shipped model's name"
        )
    source = str(getattr(model, "source", "") or "").strip("'\"")
    return model, Path(source).name if source and source != "<memory>" else type(model).__name__


@dataclass(frozen=True)
class MoveInfo:
    """One legal move of an analysed position.

    Attributes:
        action: its action number.
        text: its notation for the player to act (``"c4 Rns"``, ``"tilt E"``, ``"decline"``).
        policy: the network's prior (softmax of the logits over the legal moves).
        visits: the search's visits of it (0 without a search).
        share: ``visits`` over all root visits (0 without a search).
        value: the search's mean value of it for the player to act, or None if unvisited.
    """

    action: int
    text: str
    policy: float
    visits: int = 0
    share: float = 0.0
    value: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields (the value as an expected score too)."""
        return {
            "action": self.action,
            "text": self.text,
            "policy": round(self.policy, 4),
            "visits": self.visits,
            "share": round(self.share, 4),
            "shown": [f"{self.policy:.0%}", f"{self.share:.0%}"],  # as the summary and pictures write them
            "value": None if self.value is None else round(self.value, 4),
            "expected": None if self.value is None else round(expected_score(self.value), 4),
        }


@dataclass(frozen=True)
class Evaluation:
    """The learned agent's view of one position (see the module docstring for the numbers).

    Attributes:
        state: the position (a copy; not in :meth:`to_dict`).
        ply: how many moves led to it (0: the start), where known.
        to_act: the player to act (0 Red, 1 White), None once the game is over.
        value: the value head's value for ``to_act`` (at the end: the result for Red, +1, 0, -1).
        expected: ``(Red, White)`` expected scores from the value head (at the end: the result).
        sims: the search's simulations (0: no search, the raw network only).
        search_value: the search's value of the position for ``to_act`` (None without search).
        moves: every legal move, the agent's favourites first (visits, then prior, then action).
        best: the agent's choice: the most visited move (ties: the higher prior, then the lower
            action number, as ``az`` plays), or with no search the highest prior; None at the end.
        model: the network's name (a shipped model's name or a file name).
        solved: the exact solver's verdict for ``to_act`` (such as ``"win in 5"``) where one is
            known, else None: filled by the solver (:mod:`carnac_env.solve`), never guessed.
        verdict: the whole :class:`~carnac_env.analysis.solved.Verdict` (the solver's move, its
            line, the nodes spent), or None where no verdict is known.
    """

    state: GameState = field(repr=False, compare=False)
    ply: int | None
    to_act: int | None
    value: float
    expected: tuple[float, float]
    sims: int
    search_value: float | None
    moves: tuple[MoveInfo, ...]
    best: int | None
    model: str
    solved: str | None = None
    verdict: Verdict | None = field(default=None, compare=False)

    @property
    def final(self) -> bool:
        """Whether the game is over (the numbers are then the result, not a prediction)."""
        return self.to_act is None

    @property
    def search_expected(self) -> tuple[float, float] | None:
        """``(Red, White)`` expected scores from the search's value, or None without a search."""
        if self.search_value is None or self.to_act is None:
            return None
        mine = expected_score(self.search_value)
        return (mine, 1.0 - mine) if self.to_act == 0 else (1.0 - mine, mine)

    @property
    def searched(self) -> bool:
        """Whether a search was run (its visit shares are then what the pictures show)."""
        return self.sims > 0 and not self.final

    def move(self, action: int) -> MoveInfo:
        """The :class:`MoveInfo` of the legal move ``action``.

        Raises:
            CarnacError: ``action`` is not a legal move here.
        """
        for info in self.moves:
            if info.action == action:
                return info
        raise CarnacError(f"action {action!r} is not a legal move of this position")

    def top(self, n: int = 5) -> tuple[MoveInfo, ...]:
        """The agent's ``n`` favourite moves (by visits with a search, else by prior)."""
        return self.moves[: max(0, int(n))]

    def weight(self, info: MoveInfo) -> float:
        """What the pictures show of a move: its visit share after a search, else its prior."""
        return info.share if self.searched else info.policy

    def summary(self) -> str:
        """One line: each side's expected score, and the agent's choice."""
        red, white = self.expected
        if self.final:
            result = self.state.result()
            outcome = "a draw" if result.winner is None else f"{PLAYER_NAMES[result.winner]} won"
            return f"game over: {outcome} (Red {red:.0%}, White {white:.0%})"
        line = f"value head: Red {red:.0%}, White {white:.0%} expected score"
        if self.search_expected is not None:
            line += f"; search ({self.sims} simulations): Red {self.search_expected[0]:.0%}"
        if self.best is not None:
            best = self.move(self.best)
            how = f"{best.share:.0%} of visits" if self.searched else f"prior {best.policy:.0%}"
            line += f"; {PLAYER_NAMES[self.to_act]}'s best: {best.text} ({how})"
        if self.verdict is not None:
            line += f"; solved: {self.verdict.line_text()}"
        elif self.solved:
            line += f"; solved: {self.solved}"
        return line

    def to_dict(self, top: int | None = None) -> dict[str, Any]:
        """JSON-ready: the numbers of this evaluation (``top``: only the first moves). At the
        end of the game ``moves`` is empty and ``no_moves`` says why in words (else None), so
        that a page shows that sentence instead of an empty table of moves."""
        board = self.state.board
        search = None
        if self.search_expected is not None:
            search = {
                "sims": self.sims,
                "value": round(float(self.search_value), 4),
                "expected": [round(x, 4) for x in self.search_expected],
            }
        best = None
        if self.best is not None:
            best = {"action": self.best, "text": self.move(self.best).text}
        moves = self.moves if top is None else self.top(top)
        return {
            "ply": self.ply,
            "board": board.name,
            "phase": PHASE_NAMES[self.state.phase],
            "to_act": self.to_act,
            "final": self.final,
            "model": self.model,
            "value": round(self.value, 4),
            "expected": [round(x, 4) for x in self.expected],
            "shown": [f"{x:.0%}" for x in self.expected],
            "search": search,
            "best": best,
            "moves": [m.to_dict() for m in moves],
            "legal": len(self.moves),
            "no_moves": "the game is over: there are no moves to weigh" if self.final else None,
            "pending": square_name(board, self.state.pending) if self.state.pending >= 0 else None,
            "solved": self.solved,
            "verdict": None if self.verdict is None else self.verdict.to_dict(),
            "summary": self.summary(),
        }

    # pictures (carnac_env.render.agent_view)
    def svg(self, cell: int = 40, labels: int = 5) -> str:
        """The board with the agent's view drawn on it: a heat map of the moves (visit share
        after a search, else the prior), its choice ringed, and each side's expected score."""
        from carnac_env.render.agent_view import evaluation_svg

        return evaluation_svg(self, cell=cell, labels=labels)

    def _repr_svg_(self) -> str:
        return self.svg()

    def png(self, cell: int = 48) -> Any:
        """:meth:`svg`'s picture as a Pillow image (``.save("view.png")``)."""
        from carnac_env.render.agent_view import evaluation_png

        return evaluation_png(self, cell=cell)


class Analyst:
    """The learned agent's eyes on one board: a network and the ``az`` agent's search over it.

    Args:
        board: a board name or :class:`~carnac_env.core.boards.Board`.
        model: the network (see :func:`resolve_model`): by default the model the ``az`` agent
            plays this board with.
        sims: simulations of each searched position (0: the raw network, no search).
        batch: positions evaluated in one network call when many are asked (:meth:`raw`).
        solve: positions with at most this many megaliths left also get the exact solver's
            verdict (:mod:`carnac_env.analysis.solved`; 0: never).
        solve_nodes: the most solver nodes one verdict may spend (past it: no verdict).

    One analyst is used by one thread at a time (it keeps its search's arrays); make one per
    thread. Everything it gives is deterministic: the same position, model and ``sims`` give the
    same numbers.

    Raises:
        CarnacError: a bad board, model or budget.
    """

    def __init__(
        self,
        board: Board | str,
        model: Any = None,
        *,
        sims: int = DEFAULT_SIMS,
        batch: int = 32,
        solve: int = DEFAULT_SOLVE,
        solve_nodes: int = DEFAULT_SOLVE_NODES,
    ) -> None:
        self.board = board if isinstance(board, Board) else make_board(board)
        self.sims = _checks.whole("sims", sims, 0, 100_000)
        self.batch = _checks.whole("batch", batch, 1, 1024)
        self.solve = _checks.whole("solve", solve, 0, self.board.megaliths)
        self.solve_nodes = _checks.whole("solve_nodes", solve_nodes, 1, 10**12)
        self.net, self.model = resolve_model(self.board, model)
        self._search: Any = None
        self._raw: Any = None

    def _searcher(self) -> Any:
        from carnac_env.search import PUCT, Network, Search

        if self._search is None:
            self._search = Search(self.board, Network(self.net), PUCT(PUCT_C), seed=0, lanes=LANES)
        return self._search

    def _check(self, state: GameState) -> None:
        if not isinstance(state, GameState):
            raise CarnacError(f"expected a GameState to analyse, got {type(state).__name__}")
        if state.board != self.board:
            raise CarnacError(f"the position is on board {state.board.name!r}; this analyst is for {self.board.name!r}")

    # ------------------------------------------------------------------ the raw network
    def raw(self, states: Sequence[GameState]) -> list[tuple[float, dict[int, float]]]:
        """The network alone on each unfinished position: ``(value for the player to act,
        {legal action: prior})``, ``batch`` positions per network call."""
        from carnac_env.search import PUCT, Network, Search

        for state in states:
            self._check(state)
            if state.is_over:
                raise CarnacError("a finished game has no moves to evaluate; its result is known")
        out: list[tuple[float, dict[int, float]]] = []
        if not states:
            return out
        if self._raw is None:
            self._raw = Search(self.board, Network(self.net), PUCT(PUCT_C), trees=self.batch, seed=0)
        trees = self._raw.trees
        for start in range(0, len(states), trees):
            chunk = list(states[start : start + trees])
            self._raw.set_games(chunk)
            self._raw.run(0)  # expands the roots: one network call for the whole chunk
            for t in range(len(chunk)):
                actions, priors = self._raw.policy(t)
                out.append((float(self._raw.root_value(t)), {int(a): float(p) for a, p in zip(actions, priors)}))
        return out

    # ------------------------------------------------------------------ the exact solver
    def solvable(self, state: GameState) -> bool:
        """Whether this analyst asks the solver about ``state``: unfinished, with at most
        :attr:`solve` megaliths left (never with ``solve=0``)."""
        return self.solve > 0 and not state.is_over and state.supply <= self.solve

    def verdict(self, state: GameState) -> Verdict | None:
        """The exact solver's verdict on ``state`` (:func:`carnac_env.analysis.solved.verdict`,
        within :attr:`solve_nodes` nodes), or None where it is not asked or gave up."""
        self._check(state)
        return verdict(state, nodes=self.solve_nodes) if self.solvable(state) else None

    # ------------------------------------------------------------------ one position
    def evaluate(
        self,
        state: GameState,
        *,
        sims: int | None = None,
        ply: int | None = None,
        raw: Any = None,
        solve: bool = True,
    ) -> Evaluation:
        """The agent's view of ``state``: the value head, the policy, (with ``sims`` > 0,
        default this analyst's) a search and (with ``solve``, where :meth:`solvable`) the exact
        solver's verdict. ``raw`` reuses a :meth:`raw` answer for ``state``."""
        self._check(state)
        sims = self.sims if sims is None else _checks.whole("sims", sims, 0, 100_000)
        state = state.copy()
        if state.is_over:
            winner = state.result().winner
            red = 0.5 if winner is None else (1.0 if winner == 0 else 0.0)
            value = 2.0 * red - 1.0
            return Evaluation(state, ply, None, value, (red, 1.0 - red), 0, None, (), None, self.model)
        value, priors = raw if raw is not None else self.raw([state])[0]
        visits: dict[int, int] = {}
        values: dict[int, float] = {}
        search_value = None
        best = None
        if sims > 0:
            search = self._searcher()
            search.set_games([state])
            search.run(sims)
            edges = search.root(0)
            total = int(edges.visits.sum())
            for action, n, v in zip(edges.actions, edges.visits, edges.values):
                visits[int(action)] = int(n)
                if n > 0:
                    values[int(action)] = float(v)
            search_value = float(search.root_value(0))
            best = int(search.best_action(0))
        else:
            total = 0
        mover = state.to_act
        moves = [
            MoveInfo(
                action,
                action_to_text(self.board, action, mover),
                prior,
                visits.get(action, 0),
                visits.get(action, 0) / total if total else 0.0,
                values.get(action),
            )
            for action, prior in priors.items()
        ]
        moves.sort(key=lambda m: (-m.visits, -m.policy, m.action))
        if best is None:
            best = moves[0].action
        mine = expected_score(value)
        expected = (mine, 1.0 - mine) if mover == 0 else (1.0 - mine, mine)
        known = self.verdict(state) if solve else None
        return Evaluation(
            state,
            ply,
            mover,
            float(value),
            expected,
            sims,
            search_value,
            tuple(moves),
            best,
            self.model,
            None if known is None else known.text,
            known,
        )

    def review(self, game: Any, *, mistakes: int = 3, search: str = "mistakes") -> Any:
        """The game reviewed move by move: see :func:`carnac_env.analysis.review`."""
        from carnac_env.analysis.review import review_game

        return review_game(self, game, mistakes=mistakes, search=search)


def analyse(state: GameState, model: Any = None, *, sims: int = DEFAULT_SIMS, solve: int = DEFAULT_SOLVE) -> Evaluation:
    """The learned agent's view of ``state``: :meth:`Analyst.evaluate` with a new analyst for
    its board (``model``, ``sims`` and ``solve`` as for :class:`Analyst`)."""
    if not isinstance(state, GameState):
        raise CarnacError(f"expected a GameState to analyse, got {type(state).__name__}")
    return Analyst(state.board, model, sims=sims, solve=solve).evaluate(state)
