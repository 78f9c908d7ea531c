"""A game reviewed by the learned agent: :class:`Review` and :class:`Mistake`.

Every position of the game gets the value head's expected score, always **from Red's side**
(in Carnac the same player may act twice in a row, so "the player to act" would flip back and
forth without the game changing hands): ``red[i]`` is Red's expected score after ``i`` moves,
and at the end the result itself (1 a Red win, 1/2 a draw, 0 a loss). A move's **drop** is how
much its mover's expected score fell from before it to after it (``red[i-1] - red[i]`` for
Red's moves, the opposite for White's).

**What is listed.** A move is a :class:`Mistake` only when it lost its mover more than
:data:`MISTAKE_DROP` of expected score (0.10 on the 0-to-1 scale: "10% of expected score") *and*
the agent would have played another move there (its search's choice, the ``az`` agent's move);
a forced move (the only legal one) never counts. A big drop on the agent's own choice is the
network changing its mind, not a lesson, so it is left out (and counted in
:attr:`Review.agreed`). The list is the biggest drops first; when nothing qualifies the review
says so plainly (:meth:`Review.nothing_listed`).

The drops come from the value head alone, so they are what the network believes, with its
blind spots: a drop on the last move, where the result replaces the prediction, says as much
about the network as about the move.

**Against perfect play.** Where the analyst solves positions (at most ``analyst.solve``
megaliths left, :mod:`carnac_env.analysis.solved`), ``solved[i]`` is the exact verdict on
position ``i`` for its player to act, and a move that changed its mover's solved result (a win
thrown away to a draw or a loss, or a draw to a loss) is a :class:`Blunder`, with the solver's
move that kept the result, in notation. The blunders come first in the review's words
(:meth:`Review.lines`) and in :meth:`Review.to_dict`'s ``"listed"``. The review solves from the
end of the game backwards and stops at the first position the solver gives up on (earlier ones,
with more megaliths left, cost more).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from carnac_env import _checks
from carnac_env.core.game import PLAYER_NAMES, GameState
from carnac_env.core.notation import action_to_text
from carnac_env.core.record import GameRecord
from carnac_env.errors import CarnacError

__all__ = ["MISTAKE_DROP", "SEARCHES", "Blunder", "Mistake", "Review", "review_game"]

#: Which positions a review searches: the mistakes' (the default), every one, or none.
SEARCHES = ("mistakes", "all", "none")
#: A move is listed as a mistake only if it lost its mover more than this much expected score
#: (on the 0-to-1 scale) and the agent preferred another move there.
MISTAKE_DROP = 0.10
#: With ``search="mistakes"``, the most positions searched per mistake asked for: the
#: candidates (drops over :data:`MISTAKE_DROP`) are searched biggest first until enough
#: mistakes are found, so that a game of the agent's own moves costs a bounded search.
SEARCHES_PER_MISTAKE = 3


@dataclass(frozen=True)
class Mistake:
    """A move after which its mover's expected score fell the most.

    Attributes:
        ply: the move's number (1: the first move).
        player: who made it (0 Red, 1 White).
        action, text: the move played, and its notation.
        before, after: the mover's expected score before and after it.
        best, best_text: the move the agent would have played there, and its notation.
        best_share: the visit share of that move in the agent's search (its prior with no search).
        played_share: the same number for the move played.
    """

    ply: int
    player: int
    action: int
    text: str
    before: float
    after: float
    best: int
    best_text: str
    best_share: float
    played_share: float

    @property
    def drop(self) -> float:
        """How much the mover's expected score fell."""
        return self.before - self.after

    @property
    def agent_agrees(self) -> bool:
        """Whether the agent would have played the same move (the drop is then the network
        changing its mind, not a choice it would have made otherwise)."""
        return self.best == self.action

    def line(self) -> str:
        """The mistake in words."""
        who = PLAYER_NAMES[self.player]
        shares = f"{self.best_share:.0%}; the move played {self.played_share:.0%}"
        advice = (
            "the agent would have played it too"
            if self.agent_agrees
            else f"the agent preferred {self.best_text} ({shares})"
        )
        return (
            f"move {self.ply}, {who}: {self.text}: {who}'s expected score {self.before:.2f} -> {self.after:.2f} "
            f"(-{self.drop:.2f}); {advice}"
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields."""
        return {
            "ply": self.ply,
            "player": self.player,
            "action": self.action,
            "text": self.text,
            "before": round(self.before, 4),
            "after": round(self.after, 4),
            "drop": round(self.drop, 4),
            "best": self.best,
            "best_text": self.best_text,
            "best_share": round(self.best_share, 4),
            "played_share": round(self.played_share, 4),
            "agent_agrees": self.agent_agrees,
            "line": self.line(),
        }


#: A result for its player in words.
_RESULT_WORDS = {1: "a win", 0: "a draw", -1: "a loss"}


@dataclass(frozen=True)
class Blunder:
    """A move that changed its mover's result against perfect play (both positions solved).

    Attributes:
        ply: the move's number (1: the first move).
        player: who made it (0 Red, 1 White).
        action, text: the move played, and its notation.
        before, after: the mover's exact result before and after it (+1, 0, -1).
        best, best_text: the solver's move there (it keeps ``before``), and its notation.
        verdict: the solver's verdict before the move, in words (``"win in 3"``).
    """

    ply: int
    player: int
    action: int
    text: str
    before: int
    after: int
    best: int
    best_text: str
    verdict: str

    def line(self) -> str:
        """The blunder in words."""
        who = PLAYER_NAMES[self.player]
        return (
            f"move {self.ply}, {who}: {self.text} turned {_RESULT_WORDS[self.before]} into "
            f"{_RESULT_WORDS[self.after]} against perfect play; {self.best_text} kept it ({self.verdict})"
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields."""
        return {
            "ply": self.ply,
            "player": self.player,
            "action": self.action,
            "text": self.text,
            "before": self.before,
            "after": self.after,
            "best": self.best,
            "best_text": self.best_text,
            "verdict": self.verdict,
            "line": self.line(),
        }


@dataclass(frozen=True)
class Review:
    """A game as the learned agent saw it (see the module docstring).

    Attributes:
        board_name: the board's name.
        actions: the moves, as action numbers; ``texts`` in notation, ``players`` their movers.
        red: Red's expected score at every position, ``len(actions) + 1`` of them (the last is
            the result if the game is over).
        positions: the :class:`~carnac_env.analysis.position.Evaluation` of every position
            (searched where the review searched).
        mistakes: the moves that lost their mover more than :data:`MISTAKE_DROP` of expected
            score where the agent preferred another move, the biggest drop first.
        sims: the simulations of each searched position.
        model: the network's name.
        solved: per position, the exact solver's verdict in words for its player to act
            (``"win in 3"``, see :mod:`carnac_env.analysis.solved`) where known, None where not
            (not asked, the solver gave up, or the game is over); None (no list) if the review
            solved nothing.
        blunders: the moves that changed their mover's solved result, in the game's order.
        agreed: the moves over :data:`MISTAKE_DROP` left out because the agent would have
            played them too (among those the review looked at).
        asked: the most mistakes the review was asked to list (0: none asked, nothing said).
    """

    board_name: str
    actions: tuple[int, ...]
    texts: tuple[str, ...]
    players: tuple[int, ...]
    red: tuple[float, ...]
    positions: tuple[Any, ...]
    mistakes: tuple[Mistake, ...]
    sims: int
    model: str
    solved: tuple[str | None, ...] | None = None
    blunders: tuple[Blunder, ...] = ()
    agreed: int = 0
    asked: int = 3

    @property
    def over(self) -> bool:
        """Whether the game reviewed is finished."""
        return bool(self.positions) and self.positions[-1].final

    def drops(self) -> list[float]:
        """Each move's drop for its mover (negative: its expected score rose)."""
        out = []
        for i, player in enumerate(self.players, start=1):
            change = self.red[i - 1] - self.red[i]
            out.append(change if player == 0 else -change)
        return out

    @staticmethod
    def threshold_text() -> str:
        """Which moves the review lists, in words (the page shows it above the list)."""
        return (
            f"a move is listed when the agent preferred another move and it lost its mover more than "
            f"{MISTAKE_DROP:.0%} of expected score"
        )

    def nothing_listed(self) -> str | None:
        """When no move qualifies as a mistake, that in words (None when some do)."""
        if self.mistakes or not self.asked:
            return None
        words = f"no move lost more than {MISTAKE_DROP:.0%} of expected score"
        if self.agreed:
            which = "1 move that did was" if self.agreed == 1 else f"{self.agreed} moves that did were"
            words += f" where the agent preferred another move ({which} the agent's own choice)"
        return words

    def _solved_head(self) -> str | None:
        """Where the solver reached, and whether a move changed a solved result."""
        if self.solved is None:
            return None
        first = next(i for i, v in enumerate(self.solved) if v is not None)
        if self.blunders:
            return f"solved from position {first} on; the moves that changed a solved result:"
        return f"solved from position {first} on: no move changed a solved result"

    def lines(self) -> list[str]:
        """The review in words: the curve's ends; where the solver reached, each blunder
        against perfect play (first: they are certain); then each mistake, or a plain
        sentence that none qualified."""
        head = f"Red's expected score (value head of {self.model}): {self.red[0]:.2f} at the start"
        head += f", {self.red[-1]:.2f} " + ("at the end (the result)" if self.over else "now")
        out = [head]
        solved = self._solved_head()
        if solved is not None:
            out.append(solved)
            out.extend(b.line() for b in self.blunders)
        out.extend(m.line() for m in self.mistakes)
        nothing = self.nothing_listed()
        if nothing is not None:
            out.append(nothing)
        return out

    def listed(self) -> list[dict[str, Any]]:
        """The moves to look at, in the order to show them: the blunders against perfect play
        first (in the game's order), then the mistakes not already listed as blunders (the
        biggest drop first); each a dict with ``kind`` (``"blunder"`` or ``"mistake"``),
        ``ply``, ``text`` (the move in notation), ``best_text`` (the better move in notation)
        and ``line`` (in words)."""
        out = [
            {"kind": "blunder", "ply": b.ply, "text": b.text, "best_text": b.best_text, "line": b.line()}
            for b in self.blunders
        ]
        seen = {b.ply for b in self.blunders}
        out.extend(
            {"kind": "mistake", "ply": m.ply, "text": m.text, "best_text": m.best_text, "line": m.line()}
            for m in self.mistakes
            if m.ply not in seen
        )
        return out

    def to_dict(self, positions: bool = False) -> dict[str, Any]:
        """JSON-ready: the curve, the moves and the mistakes (``positions``: every position's
        evaluation too)."""
        data: dict[str, Any] = {
            "board": self.board_name,
            "model": self.model,
            "sims": self.sims,
            "moves": [
                {"ply": i, "player": p, "text": t, "action": a}
                for i, (a, t, p) in enumerate(zip(self.actions, self.texts, self.players), start=1)
            ],
            "red": [round(x, 4) for x in self.red],
            "over": self.over,
            "mistakes": [m.to_dict() for m in self.mistakes],
            "solved": None if self.solved is None else list(self.solved),
            "blunders": [b.to_dict() for b in self.blunders],
            "lines": self.lines(),
            "threshold": MISTAKE_DROP,
            "threshold_text": self.threshold_text(),
            "nothing_listed": self.nothing_listed(),
            "agreed": self.agreed,
            "listed": self.listed(),
        }
        if positions:
            data["positions"] = [p.to_dict(top=5) for p in self.positions]
        return data

    # pictures (carnac_env.render.agent_view)
    def svg(self, width: int = 560, height: int = 240) -> str:
        """Red's expected score move by move, with the mistakes marked and numbered."""
        from carnac_env.render.agent_view import curve_svg

        return curve_svg(self, width=width, height=height)

    def _repr_svg_(self) -> str:
        return self.svg()

    def png(self, width: int = 560, height: int = 240) -> Any:
        """:meth:`svg`'s picture as a Pillow image (``.save("review.png")``)."""
        from carnac_env.render.agent_view import curve_png

        return curve_png(self, width=width, height=height)


def _actions_of(analyst: Any, game: Any) -> list[int]:
    """The action numbers of ``game``: a :class:`GameRecord` or a list of action numbers."""
    if isinstance(game, GameRecord):
        if game.board != analyst.board:
            raise CarnacError(f"the game is on board {game.board.name!r}; this analyst is for {analyst.board.name!r}")
        return [int(a) for a in game.actions()]
    if isinstance(game, Sequence) and not isinstance(game, str | bytes):
        return [_checks.whole("action", a, 0, analyst.board.num_actions - 1) for a in game]
    raise CarnacError(f"expected a GameRecord or a list of action numbers, got {type(game).__name__}")


def review_game(analyst: Any, game: Any, *, mistakes: int = 3, search: str = "mistakes") -> Review:
    """Review ``game`` (a record, or action numbers from the start) with ``analyst``: the value
    head on every position, then a search (``analyst.sims`` simulations) where ``search`` says.

    Raises:
        CarnacError: a game on another board, an illegal move, a bad option.
    """
    mistakes = _checks.whole("mistakes", mistakes, 0, 1000)
    search = _checks.choice("search", search, SEARCHES)
    actions = _actions_of(analyst, game)
    states, players, texts = _replay(analyst.board, actions)
    everywhere = search == "all" and analyst.sims > 0
    positions, raw = _evaluate_all(analyst, states, analyst.sims if everywhere else 0)
    verdicts = _solve_back(analyst, states)
    for i, known in verdicts.items():
        positions[i] = _with_verdict(positions[i], known)
    red = [p.expected[0] for p in positions]
    found: list[Mistake] = []
    agreed = searches = 0
    searching = search == "mistakes" and analyst.sims > 0
    for ply, before, after in _big_drops(red, players, positions):
        if len(found) >= mistakes or (searching and searches >= SEARCHES_PER_MISTAKE * mistakes):
            break
        if searching:  # search the candidate's position now: the agent's move there
            where = analyst.evaluate(states[ply - 1], ply=ply - 1, raw=raw.get(ply - 1), solve=False)
            positions[ply - 1] = _with_verdict(where, verdicts.get(ply - 1))
            searches += 1
        mistake = _mistake(positions[ply - 1], ply, players[ply - 1], actions[ply - 1], texts[ply - 1], before, after)
        if mistake.agent_agrees:
            agreed += 1
        else:
            found.append(mistake)
    searched = analyst.sims if (everywhere or searches) else 0
    return Review(
        analyst.board.name,
        tuple(actions),
        tuple(texts),
        tuple(players),
        tuple(red),
        tuple(positions),
        tuple(found),
        searched,
        analyst.model,
        _solved_texts(verdicts, len(states)),
        _blunders(states, actions, players, texts, verdicts),
        agreed,
        mistakes,
    )


def _replay(board: Any, actions: list[int]) -> tuple[list[GameState], list[int], list[str]]:
    """Every position of the game (``len(actions) + 1``), each move's mover and its notation.

    Raises:
        CarnacError: a move that is illegal where it is played, named by its number.
    """
    states = [GameState(board)]
    players: list[int] = []
    texts: list[str] = []
    for ply, action in enumerate(actions, start=1):
        state = states[-1]
        reason = state.why_illegal(action)
        if reason is not None:
            raise CarnacError(f"move {ply} of the game, {state.describe(action)}, is illegal: {reason}")
        players.append(state.to_act)
        texts.append(action_to_text(board, action, state.to_act))
        after = state.copy()
        after.apply(action)
        states.append(after)
    return states, players, texts


def _evaluate_all(analyst: Any, states: list[GameState], sims: int) -> tuple[list[Any], dict[int, Any]]:
    """Every position's evaluation (``sims`` simulations each, 0: the value head alone), and
    the network's raw outputs of the unfinished ones by index (one batch for them all)."""
    live = [i for i, s in enumerate(states) if not s.is_over]
    raw = dict(zip(live, analyst.raw([states[i] for i in live])))
    positions = [analyst.evaluate(s, sims=sims, ply=i, raw=raw.get(i), solve=False) for i, s in enumerate(states)]
    return positions, raw


def _with_verdict(evaluation: Any, known: Any) -> Any:
    """``evaluation`` with the solver's verdict ``known`` on it (unchanged if None)."""
    return evaluation if known is None else replace(evaluation, solved=known.text, verdict=known)


def _big_drops(red: list[float], players: list[int], positions: list[Any]) -> list[tuple[int, float, float]]:
    """The moves whose mover's expected score fell by more than :data:`MISTAKE_DROP` (never a
    forced move), as ``(ply, before, after)``, the biggest drop first (then the earliest)."""
    drops = []
    for ply, player in enumerate(players, start=1):
        if len(positions[ply - 1].moves) < 2:
            continue  # a forced move is nobody's choice
        before = red[ply - 1] if player == 0 else 1.0 - red[ply - 1]
        after = red[ply] if player == 0 else 1.0 - red[ply]
        if before - after > MISTAKE_DROP:
            drops.append((before - after, ply, before, after))
    drops.sort(key=lambda d: (-d[0], d[1]))
    return [(ply, before, after) for _, ply, before, after in drops]


def _mistake(where: Any, ply: int, player: int, action: int, text: str, before: float, after: float) -> Mistake:
    """The :class:`Mistake` of move ``ply``, with the agent's choice at ``where`` (the
    evaluation of the position before it)."""
    best = where.move(where.best)
    played = where.move(action)
    return Mistake(
        ply, player, action, text, before, after, best.action, best.text, where.weight(best), where.weight(played)
    )


def _solved_texts(verdicts: dict[int, Any], count: int) -> tuple[str | None, ...] | None:
    """:attr:`Review.solved`: each of the ``count`` positions' verdict in words, None where
    unknown; None if nothing was solved."""
    if not verdicts:
        return None
    return tuple(verdicts[i].text if i in verdicts else None for i in range(count))


def _solve_back(analyst: Any, states: list[GameState]) -> dict[int, Any]:
    """The solver's verdicts on ``states``, from the last unfinished one backwards while the
    analyst solves them (:meth:`Analyst.solvable`) and the solver does not give up."""
    verdicts: dict[int, Any] = {}
    for i in range(len(states) - 1, -1, -1):
        if states[i].is_over:
            continue
        if not analyst.solvable(states[i]):
            break
        known = analyst.verdict(states[i])
        if known is None:
            break
        verdicts[i] = known
    return verdicts


def _blunders(
    states: list[GameState], actions: list[int], players: list[int], texts: list[str], verdicts: dict[int, Any]
) -> tuple[Blunder, ...]:
    """The moves after which their mover's solved result is worse than before."""
    found = []
    for ply, action in enumerate(actions, start=1):
        before = verdicts.get(ply - 1)
        if before is None:
            continue
        mover = players[ply - 1]
        after_state = states[ply]
        if after_state.is_over:
            after = after_state.result().reward(mover)
        elif ply in verdicts:
            known = verdicts[ply]
            after = known.result if known.to_act == mover else -known.result
        else:
            continue
        if after < before.result:
            best = (before.best, before.best_text, before.text)
            found.append(Blunder(ply, mover, action, texts[ply - 1], before.result, int(after), *best))
    return tuple(found)
