"""The exact solver's verdict on a position, for the analysis: :func:`verdict` and :class:`Verdict`.

Where a position has at most ``solve`` megaliths left in the supply (:data:`DEFAULT_SOLVE`
unless told otherwise), the analysis asks the exact solver (:func:`carnac_env.solve.solve`)
for the game-theoretic result under the full tie-break chain, for the player to act: a win, a
draw or a loss against perfect play from both sides.

**"win in N".** ``N`` is the number of moves the player to act still makes (placements, tilts
and declines), this one included, along the *solver's line*: from the position, each side
plays the solver's move (:attr:`Solution.best_action <carnac_env.solve.Solution>`),
re-solving at every step, to the end of the game. A Carnac game always runs until the supply
is empty (or the board full), so ``N`` is not how fast the win comes but how many decisions
the player has left to get right; "win in 1" means this move is that player's last. A draw
has no ``N``. The line is one of the solver's best lines, not the only one: another winning
line may give the player another number of moves.

**Bounded, never guessed.** A verdict spends at most ``nodes`` solver nodes in all (the root
and the line): :data:`DEFAULT_SOLVE_NODES`, about 0.1 to 0.5 s on one core. A solver that gives
up on the root gives no verdict (None: unknown); one that gives up while following the line
gives the result without ``N`` ("win"). The solver's transposition table takes at most
:data:`SOLVE_TABLE_MB` MiB.

**Deterministic.** Each verdict is solved in a thread of its own, so it starts from an empty
transposition table (the solver keeps one per thread): the verdict, its move and its line
depend on the position alone, not on what was solved before.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from carnac_env import _checks
from carnac_env.core.game import PLAYER_NAMES, GameState
from carnac_env.core.notation import action_to_text
from carnac_env.errors import CarnacError, SolveLimitError

__all__ = ["DEFAULT_SOLVE", "DEFAULT_SOLVE_NODES", "SOLVE_TABLE_MB", "Verdict", "verdict"]

#: Positions with at most this many megaliths left are solved (0: none). Chosen so that a
#: solve stays well under a second: on small the median position with 7 megaliths left takes
#: about 20,000 nodes, with 8 about 150,000 (docs/analysis.md gives the measurement).
DEFAULT_SOLVE = 7
#: The most solver nodes one verdict may spend (the root and its line together).
DEFAULT_SOLVE_NODES = 200_000
#: The transposition table of the analysis's solver, in MiB.
SOLVE_TABLE_MB = 16

#: A verdict's words by result.
_WORDS = {1: "win", 0: "draw", -1: "loss"}


@dataclass(frozen=True)
class Verdict:
    """The exact solver's verdict on a position, for its player to act.

    Attributes:
        to_act: the player to act (0 Red, 1 White).
        result: +1 a win, 0 a draw, -1 a loss against perfect play (the full tie-break chain).
        moves: ``N``, the moves the player to act makes along the solver's line (see the module
            docstring), or None for a draw or where the line was not finished.
        best: the solver's move (one that achieves ``result``), and ``best_text`` its notation.
        line: the solver's line from the position, as action numbers (empty if not finished);
            ``line_texts`` the same moves in notation (each for the player who makes it).
        nodes: the solver nodes spent.
    """

    to_act: int
    result: int
    moves: int | None
    best: int
    best_text: str
    line: tuple[int, ...]
    nodes: int
    line_texts: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        """``"win in N"``, ``"draw"``, ``"loss in N"`` (``"win"``, ``"loss"`` without ``N``)."""
        words = _WORDS[self.result]
        if self.result == 0 or self.moves is None:
            return words
        return f"{words} in {self.moves}"

    def line_text(self) -> str:
        """The verdict with the solver's move in words: ``"win in 2, by c4 Rns"``; a loss
        names no move (every move loses)."""
        if self.result < 0:
            return f"{self.text} (every move loses)"
        return f"{self.text}, by {self.best_text}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields."""
        return {
            "to_act": self.to_act,
            "player": PLAYER_NAMES[self.to_act],
            "result": self.result,
            "moves": self.moves,
            "text": self.text,
            "best": {"action": self.best, "text": self.best_text},
            "line": list(self.line_texts),
            "line_actions": list(self.line),
            "nodes": self.nodes,
            "words": self.line_text(),
        }


def _solve_here(state: GameState, nodes: int, table_mb: int) -> Verdict | None:
    """:func:`verdict`'s work, in the calling thread (its table as the solver keeps it)."""
    from carnac_env.solve import solve

    left = nodes
    try:
        root = solve(state, max_megaliths_left=state.supply, table_mb=table_mb, node_limit=left)
    except SolveLimitError:
        return None
    left -= root.nodes
    mover = state.to_act
    best_text = action_to_text(state.board, root.best_action, mover)
    position = state.copy()
    line: list[int] = []
    texts: list[str] = []
    made = 0
    step = root
    while True:
        made += position.to_act == mover
        line.append(step.best_action)
        texts.append(action_to_text(state.board, step.best_action, position.to_act))
        position.apply(step.best_action)
        if position.is_over:
            break
        if left <= 0:
            return Verdict(mover, root.result, None, root.best_action, best_text, (), nodes - left)
        try:
            step = solve(position, max_megaliths_left=position.supply, table_mb=table_mb, node_limit=left)
        except SolveLimitError:
            return Verdict(mover, root.result, None, root.best_action, best_text, (), nodes)
        left -= step.nodes
    if position.result().reward(mover) != root.result:  # a line that misses its own value: no N claimed
        return Verdict(mover, root.result, None, root.best_action, best_text, (), nodes - left)
    n = None if root.result == 0 else made
    return Verdict(mover, root.result, n, root.best_action, best_text, tuple(line), nodes - left, tuple(texts))


def verdict(state: GameState, *, nodes: int = DEFAULT_SOLVE_NODES, table_mb: int = SOLVE_TABLE_MB) -> Verdict | None:
    """The exact solver's verdict on ``state`` for its player to act, or None where the solver
    gave up within ``nodes`` nodes (unknown, never a guess). Solved in a thread of its own from
    an empty transposition table of ``table_mb`` MiB (see the module docstring). The caller
    chooses which positions to solve: the cost grows steeply with the megaliths left.

    Raises:
        CarnacError: not a position, a finished game, or a bad budget.
    """
    if not isinstance(state, GameState):
        raise CarnacError(f"expected a GameState to solve, got {type(state).__name__}")
    if state.is_over:
        raise CarnacError("a finished game has no verdict to solve: its result is known")
    nodes = _checks.whole("nodes", nodes, 1, 10**12)
    table_mb = _checks.whole("table_mb", table_mb, 1, 4096)
    state = state.copy()
    out: list[Any] = []

    def work() -> None:
        try:
            out.append(_solve_here(state, nodes, table_mb))
        except BaseException as error:  # raised again in the caller's thread
            out.append(error)

    thread = threading.Thread(target=work, name="carnac-solve", daemon=True)
    thread.start()
    thread.join()
    if isinstance(out[0], BaseException):
        raise out[0]
    return out[0]
