"""An agent's error rate on an endgame set.

:func:`endgame_errors` asks an agent for its move in every position of a board's set (a fresh
agent per position, seeded from the evaluation seed and the position's index, so the same seed
gives the same moves) and counts the moves that lose value, over all positions and split by the
position's value, each share with its Wilson 95% interval (:class:`EndgameErrors`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from carnac_env import _checks
from carnac_env.agents import make, model_record
from carnac_env.arena.ratings import wilson
from carnac_env.core.boards import Board
from carnac_env.core.notation import action_to_text
from carnac_env.errors import CarnacError
from carnac_env.evaluate.endgames.sets import EndgameSet, load_endgames
from carnac_env.models import pinned_models

__all__ = ["EndgameErrors", "JudgedMoves", "Share", "endgame_errors", "position_seed"]


@dataclass(frozen=True)
class Share:
    """A count of errors among positions, with its share and Wilson 95% interval."""

    errors: int
    positions: int

    @property
    def share(self) -> float:
        """``errors / positions`` (0 for no positions)."""
        return self.errors / self.positions if self.positions else 0.0

    @property
    def interval(self) -> tuple[float, float]:
        """The Wilson 95% interval of the share."""
        return wilson(self.share, self.positions)

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready form: errors, positions, share and the interval (rounded to 4 places)."""
        low, high = self.interval
        return {
            "errors": self.errors,
            "positions": self.positions,
            "share": round(self.share, 4),
            "interval_95": [round(low, 4), round(high, 4)],
        }


class JudgedMoves:
    """Moves judged against solved values: ``moves`` holds, per move, ``(value, value of the
    move, the move in notation)``, both values for the player who moved (1 won, 0 drawn, -1
    lost). A move whose value is below the position's throws it away. Lost positions count in
    no share: there is nothing to throw away."""

    moves: tuple[tuple[int, int, str], ...]

    def _count(self, value: int | None) -> Share:
        judged = [(v, m) for v, m, _ in self.moves if v >= 0 and (value is None or v == value)]
        return Share(sum(1 for v, m in judged if m < v), len(judged))

    @property
    def all(self) -> Share:
        """Errors (a move that loses value) over every won or drawn position."""
        return self._count(None)

    @property
    def won(self) -> Share:
        """Won positions played to a draw or a loss."""
        return self._count(1)

    @property
    def drawn(self) -> Share:
        """Drawn positions played to a loss."""
        return self._count(0)

    @property
    def won_to_loss(self) -> int:
        """Won positions played to a loss."""
        return sum(1 for v, m, _ in self.moves if v == 1 and m == -1)

    def shares(self) -> dict[str, Any]:
        """The JSON-ready counts: ``all``, ``won`` and ``drawn`` (:meth:`Share.to_dict`) and ``won_to_loss``."""
        return {
            "all": self.all.to_dict(),
            "won": self.won.to_dict(),
            "drawn": self.drawn.to_dict(),
            "won_to_loss": self.won_to_loss,
        }


@dataclass(frozen=True)
class EndgameErrors(JudgedMoves):
    """An agent's moves on one board's endgame set, judged against the solved values
    (a set holds no lost position).

    Attributes:
        agent: the agent's spec (or its class name for an agent object).
        board: the board's name.
        set_id: the set's id (``small-v1``).
        seed: the evaluation seed.
        moves: per position, ``(value, value of the agent's move, the move in notation)``.
        model: which model file the agent played (:func:`~carnac_env.agents.protocol.model_record`),
            or None for an agent without one.
    """

    agent: str
    board: str
    set_id: str
    seed: int
    moves: tuple[tuple[int, int, str], ...]
    model: dict[str, str] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready summary (counts, shares and intervals; not the moves)."""
        return {
            "agent": self.agent,
            "board": self.board,
            "set": self.set_id,
            "seed": self.seed,
            **self.shares(),
            **({"model": self.model} if self.model else {}),
        }


def position_seed(seed: int, agent: str, set_id: str, index: int) -> int:
    """The seed of the agent asked about position ``index`` of set ``set_id`` (63 bits)."""
    digest = hashlib.sha256(f"carnac-endgames\0{seed}\0{agent}\0{set_id}\0{index}".encode()).hexdigest()
    return int(digest[:15], 16)


def endgame_errors(
    agent: str | Any,
    board: str | Board = "medium",
    seed: int = 0,
    endgames: str | Path | EndgameSet | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> EndgameErrors:
    """How often ``agent``'s move throws away a win or a draw on ``board``'s endgame set.

    Args:
        agent: an agent spec (a fresh agent per position, seeded by :func:`position_seed`), or
            an agent object (asked as it is; the caller owns its seeding).
        board: the board whose newest shipped set is played (ignored when ``endgames`` is given).
        seed: the evaluation seed; the same seed gives the same moves (for agents with a
            ``sims`` budget rather than ``seconds``).
        endgames: a set, a set id or a set file instead of the board's newest.
        progress: called as ``progress(done, total)`` after each position.

    Returns:
        An :class:`EndgameErrors`.

    Raises:
        CarnacError: a bad spec, board, seed or set, or an agent that plays an illegal move
            (naming it and the position).
    """
    seed = _checks.whole("seed", seed, 0, _checks.MAX_SEED)
    with pinned_models():  # each model file read once: every position plays the bytes recorded
        chosen = (
            endgames if isinstance(endgames, EndgameSet) else load_endgames(board if endgames is None else endgames)
        )
        if isinstance(agent, str):
            if not agent.strip():
                raise CarnacError("the agent must be a spec such as 'greedy', got an empty string")
            name = agent.strip()
            model = model_record(make(name), chosen.board)  # fails early on a bad spec
        else:
            name = type(agent).__name__
            model = model_record(make(agent), chosen.board)  # refuses what is not an agent
        moves = []
        for index, position in enumerate(chosen.positions):
            player = make(name, seed=position_seed(seed, name, chosen.id, index)) if isinstance(agent, str) else agent
            state = position.state.copy()
            action = player.act(state)
            if action not in position.actions:
                raise CarnacError(
                    f"agent {name!r} played {action!r} in position {index} of {chosen.id}, which is not a legal move"
                )
            text = action_to_text(chosen.board, int(action), position.state.to_act)
            moves.append((position.value, position.value_of(int(action)), text))
            if progress is not None:
                progress(index + 1, len(chosen.positions))
        return EndgameErrors(name, chosen.board.name, chosen.id, seed, tuple(moves), model)
