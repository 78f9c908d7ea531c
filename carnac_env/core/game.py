"""The Carnac game state and every rule of play: place, tilt, decline, the end of the game.

A :class:`GameState` is a plain mutable object. Read it, ``copy()`` it (cheap: two small
bytearrays and a short list), pickle it, and advance it with :meth:`GameState.apply`
(any action number) or the named moves :meth:`~GameState.place`,
:meth:`~GameState.tilt` and :meth:`~GameState.decline`. A move that the rules forbid
raises :class:`~carnac_env.errors.IllegalActionError` and changes nothing.

The turn structure, in the words of the rules:

1. The player to place puts a megalith from the supply upright on an empty square, in
   one of 4 orientations (phase ``PLACE``).
2. If it can be tilted in at least one direction, the other player responds (phase
   ``RESPOND``): tilt it, then place the next megalith; or decline, and the placer places
   again. Declining may repeat without limit.
3. If it cannot be tilted, the other player places next.
4. The game ends when the supply is empty or no empty square remains. With ``last_tilt``
   (the default) the final megalith may still be tilted or declined first.

Where each rule is written: what the player to act may do is :meth:`GameState.moves`, the
one statement of legality that :meth:`~GameState.legal_actions`,
:meth:`~GameState.why_illegal`, :func:`carnac_env.core.observation.legal_mask` and the
environments' observation tracker all read; a tilt's landing squares are
:meth:`~GameState.tilt_targets`; the arithmetic of colours, of the response and of the end
of the game (:func:`~carnac_env.core.arithmetic.game_ends`, checked after every move) is in
:mod:`carnac_env.core.arithmetic`, shared with the batched and JAX engines. Hand-built
positions come from :meth:`GameState.from_diagram` (:mod:`carnac_env.core.diagram`) and are
checked by :func:`carnac_env.core.validate.validate`'s check of the fields. The codes the fields
hold (phases, square kinds) are stated in :mod:`carnac_env.core.fields` and re-exported here.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from carnac_env._checks import is_flag, is_whole, whole
from carnac_env.core.actions import (
    ORIENTATIONS,
    TILT,
    decline_action,
    decline_number,
    decode,
    place_action,
    place_number,
    place_orientation,
    place_square,
    tilt_action,
    tilt_base,
)
from carnac_env.core.arithmetic import (
    RED,
    WHITE,
    game_ends,
    gets_response,
    other_colour,
    tilt_colour,
    tilt_colours,
)
from carnac_env.core.boards import DIRECTION_NAMES, Board, make_board
from carnac_env.core.diagram import diagram_of, position_from_diagram
from carnac_env.core.fields import EMPTY, LYING, OVER, PHASE_NAMES, PLACE, RESPOND, STANDING
from carnac_env.core.notation import action_to_text, square_name
from carnac_env.core.scoring import Result, score
from carnac_env.errors import CarnacError, IllegalActionError

__all__ = [
    "COLOUR_NAMES",
    "EMPTY",
    "LYING",
    "OVER",
    "PHASE_NAMES",
    "PLACE",
    "PLAYER_NAMES",
    "RED",
    "RESPOND",
    "STANDING",
    "WHITE",
    "GameState",
    "Moves",
]

#: Cell colours (``GameState.cells``): 0 empty, player + 1 otherwise (RED 1, WHITE 2).
COLOUR_NAMES = ("", "Red", "White")
PLAYER_NAMES = ("Red", "White")

#: A tilt's landing: the two squares it covers and the cell colour they show.
Target = tuple[int, int, int]
_NO_TARGETS: dict[int, Target] = {}


class Moves(NamedTuple):
    """What the player to act may do now (:meth:`GameState.moves`).

    Attributes:
        place: whether the player places now: on any empty square, in any of the 4
            orientations (and on no other square).
        tilts: the legal tilts of the megalith awaiting a decision,
            ``{direction: (square, square, colour)}`` (read it, do not change it).
        decline: whether the player may decline (exactly when a megalith awaits a decision).
    """

    place: bool
    tilts: Mapping[int, Target]
    decline: bool


_PLACING = Moves(True, _NO_TARGETS, False)
_NOTHING = Moves(False, _NO_TARGETS, False)


class GameState:
    """One game of Carnac in progress.

    Attributes (read them freely; change them only through the move methods):
        board: the :class:`~carnac_env.core.boards.Board` (immutable, shared).
        cells: bytearray, one entry per square in row-major order: the colour seen from
            above, 0 empty, 1 red, 2 white.
        kinds: bytearray, per square: 0 empty, 1 standing megalith, 2 lying megalith.
        lying: the lying megaliths as ``(square, square)`` pairs, in the order they fell.
        supply: megaliths not yet placed.
        phase: ``PLACE``, ``RESPOND`` or ``OVER``.
        to_act: the player (0 Red, 1 White) who acts now; after the end, the last to act.
        pending: in ``RESPOND``, the square of the megalith awaiting a tilt decision, else -1.
        pending_colour: in ``RESPOND``, the cell colour that a tilt north or south of the
            pending megalith would show (a tilt east or west shows the other), else 0.
        empty: number of empty squares.

    :attr:`pending_colours` gives both colours, ``(north/south, east/west)``.
    """

    __slots__ = (
        "_result",
        "_targets",
        "board",
        "cells",
        "empty",
        "kinds",
        "lying",
        "pending",
        "pending_colour",
        "phase",
        "supply",
        "to_act",
    )
    #: The slots that make up the position (the others are caches).
    _FIELDS = ("board", "cells", "empty", "kinds", "lying", "pending", "pending_colour", "phase", "supply", "to_act")

    def __init__(self, board: Board | str = "medium", **rules: object) -> None:
        """A new game on ``board`` (a name or a Board), with optional rules options."""
        if not isinstance(board, Board) or rules:
            board = make_board(board, **rules)
        self.board = board
        self.cells = bytearray(board.squares)
        self.kinds = bytearray(board.squares)
        self.lying: list[tuple[int, int]] = []
        self.supply = board.megaliths
        self.phase = PLACE
        self.to_act = 0
        self.pending = -1
        self.pending_colour = 0
        self.empty = board.squares
        self._result: Result | None = None
        self._targets: tuple[int, int, Moves] | None = None  # the moves of the pending megalith, once

    # ----------------------------------------------------------------- copying, equality
    def copy(self) -> GameState:
        """An independent copy (the board is immutable and shared)."""
        other = GameState.__new__(GameState)
        other.board = self.board
        other.cells = self.cells[:]
        other.kinds = self.kinds[:]
        other.lying = self.lying[:]
        other.supply = self.supply
        other.phase = self.phase
        other.to_act = self.to_act
        other.pending = self.pending
        other.pending_colour = self.pending_colour
        other.empty = self.empty
        other._result = self._result
        other._targets = self._targets  # never changed in place, so it may be shared
        return other

    __copy__ = copy

    def __deepcopy__(self, memo: dict) -> GameState:
        return self.copy()

    def __getstate__(self) -> dict:
        return {name: getattr(self, name) for name in self._FIELDS}

    def __setstate__(self, data: dict) -> None:
        data = dict(data)
        if "pending_colours" in data:  # pickles from before pending_colour: (north/south, east/west)
            data["pending_colour"] = data.pop("pending_colours")[0]
        for name, value in data.items():
            if name in self._FIELDS:
                setattr(self, name, value)
        self._result = None
        self._targets = None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GameState):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in self._FIELDS)

    __hash__ = None  # mutable

    def __repr__(self) -> str:
        return (
            f"GameState(board={self.board.name!r}, phase={PHASE_NAMES[self.phase]!r}, "
            f"to_act={self.to_act}, supply={self.supply}, pending={self.pending})"
        )

    # ----------------------------------------------------------------- reading the state
    @property
    def is_over(self) -> bool:
        """Whether the game has ended."""
        return self.phase == OVER

    @property
    def placed(self) -> int:
        """Megaliths placed so far."""
        return self.board.megaliths - self.supply

    @property
    def pending_colours(self) -> tuple[int, int]:
        """``(north_south, east_west)``: the cell colours a tilt of the pending megalith would
        show north or south and east or west; ``(0, 0)`` when none is pending."""
        colour = self.pending_colour
        return (colour, other_colour(colour)) if colour else (0, 0)

    def tilt_targets(self) -> dict[int, Target]:
        """The legal tilts of the megalith awaiting a decision.

        Returns:
            ``{direction: (square, square, colour)}``: the two squares the megalith would
            cover and the cell colour they would show. Empty outside the ``RESPOND`` phase.
        """
        return dict(self._pending_targets())

    def _pending_targets(self) -> dict[int, Target]:
        """:meth:`tilt_targets`, computed once per pending megalith (do not change it)."""
        return self._responding().tilts if self.phase == RESPOND else _NO_TARGETS

    def _responding(self) -> Moves:
        """:meth:`moves` in the ``RESPOND`` phase, computed once per pending megalith."""
        cached = self._targets
        if cached is not None and cached[0] == self.pending and cached[1] == self.pending_colour:
            return cached[2]
        moves = Moves(False, self._tilt_targets(self.pending, self.pending_colour), True)
        self._targets = (self.pending, self.pending_colour, moves)
        return moves

    def _tilt_targets(self, square: int, north_south: int) -> dict[int, Target]:
        """The tilt rule: a megalith standing on ``square`` may tilt towards a direction when
        both squares it would cover are on the board and empty."""
        kinds = self.kinds
        targets = {}
        for direction, pair in enumerate(self.board.tilt_squares[square]):
            if pair is not None and not kinds[pair[0]] and not kinds[pair[1]]:
                targets[direction] = (pair[0], pair[1], tilt_colour(north_south, direction))
        return targets

    def moves(self) -> Moves:
        """What the player to act may do now: the one statement of legality.

        In ``PLACE``: place on any empty square in any orientation; in ``RESPOND``: tilt the
        pending megalith towards any of :meth:`tilt_targets`, or decline; once ``OVER``:
        nothing. :meth:`legal_actions`, :meth:`why_illegal`, the legal mask and the
        environments' observation tracker are all read from this.
        """
        if self.phase == PLACE:
            return _PLACING
        if self.phase == RESPOND:
            return self._responding()
        return _NOTHING

    def tilts_after_place(self, square: int, orientation: int) -> dict[int, Target]:
        """The tilts the opponent could choose if the player to place put a megalith on empty
        ``square`` with ``orientation`` (0..3) now: the same form as :meth:`tilt_targets`.

        Empty when no tilt would fit or when, under ``last_tilt=False``, this is the final
        megalith. For previews (renderers, the GUI, agents); the state is not changed.

        Raises:
            CarnacError: not the place phase, a square off the board or not empty, or an
                orientation outside 0..3.
        """
        board = self.board
        if self.phase != PLACE:
            raise CarnacError(f"tilts_after_place needs the place phase; the game is in {PHASE_NAMES[self.phase]!r}")
        square = whole("square", square, 0, board.squares - 1)
        orientation = whole("orientation", orientation, 0, 3)
        if self.kinds[square]:
            raise CarnacError(f"square {square_name(board, square)} is not empty")
        _, north_south, _ = tilt_colours(self.to_act, orientation)
        targets = self._tilt_targets(square, north_south)
        if not gets_response(bool(targets), self.supply - 1, board.last_tilt):
            return {}
        return targets

    def legal_actions(self) -> list[int]:
        """Every legal action number, in increasing order; empty once the game is over."""
        moves = self.moves()
        if moves.place:
            kinds = self.kinds
            return [
                a
                for s in range(self.board.squares)
                if not kinds[s]
                for a in range(place_number(s, 0), place_number(s, ORIENTATIONS))
            ]
        if moves.decline:
            base = tilt_base(self.board.squares)
            return [base + d for d in moves.tilts] + [decline_number(self.board.squares)]
        return []

    def legal_action_at(self, u: float) -> int:
        """The legal action of rank ``floor(u * count)`` among the ``count`` legal actions in
        increasing order, for ``u`` in [0, 1).

        With ``u`` drawn uniformly this is a uniformly random legal move: the one random legal
        move of the core's family (the ``random`` agent, the environments' random opponent).

        Raises:
            CarnacError: the game is over (no legal action).
        """
        moves = self.moves()
        if moves.place:
            rank, orientation = divmod(int(u * ORIENTATIONS * self.empty), ORIENTATIONS)
            square = -1
            for _ in range(rank + 1):
                square = self.kinds.index(EMPTY, square + 1)
            return place_number(square, orientation)
        if not moves.decline:
            raise CarnacError("the game is over; there is no legal action")
        pick = int(u * (len(moves.tilts) + 1))
        base = tilt_base(self.board.squares)
        return base + list(moves.tilts)[pick] if pick < len(moves.tilts) else base + 4

    def why_illegal(self, action: Any) -> str | None:
        """``None`` if ``action`` is legal now, otherwise the reason in words."""
        board = self.board
        if type(action) is not int:
            try:
                if is_flag(action):
                    raise TypeError
                action = operator.index(action)
            except TypeError:
                return f"an action must be an integer, got {type(action).__name__}"
        if not 0 <= action < board.num_actions:
            return f"actions run from 0 to {board.num_actions - 1} on a {board.rows} x {board.cols} board"
        moves = self.moves()
        if not (moves.place or moves.decline):
            return "the game is over"
        move = decode(board, action)
        if move.kind == "place":
            if not moves.place:
                return (
                    f"{PLAYER_NAMES[self.to_act]} must first tilt or decline the megalith "
                    f"standing on {square_name(board, self.pending)}"
                )
            if self.kinds[move.square]:
                what = "a standing" if self.kinds[move.square] == STANDING else "a lying"
                return f"square {square_name(board, move.square)} already holds {what} megalith"
            return None
        if not moves.decline:
            verb = "tilt" if move.kind == TILT else "decline"
            return f"there is no megalith to {verb}: {PLAYER_NAMES[self.to_act]} must place"
        if move.kind == TILT and move.direction not in moves.tilts:
            return self._why_tilt_illegal(move.direction)
        return None

    def _why_tilt_illegal(self, direction: int) -> str:
        """Why the pending megalith cannot tilt towards ``direction`` (a tilt not in
        :meth:`tilt_targets`): it would leave the board, or land on taken squares."""
        board = self.board
        pair = board.tilt_squares[self.pending][direction]
        where = f"a megalith on {square_name(board, self.pending)} tilted {DIRECTION_NAMES[direction]}"
        if pair is None:
            return f"{where} would leave the board"
        blocked = [square_name(board, s) for s in pair if self.kinds[s]]
        return f"{where} would need {' and '.join(blocked)}, which {'is' if len(blocked) == 1 else 'are'} not empty"

    def describe(self, action: object) -> str:
        """``"action 123 (c4 Rns)"``: an action number with its notation for the player to act
        (just ``"action X"`` for a value outside the action space)."""
        if is_whole(action) and 0 <= action < self.board.num_actions:
            return f"action {int(action)} ({action_to_text(self.board, int(action), self.to_act)})"
        return f"action {action!r}"

    def result(self) -> Result:
        """The outcome: winner, dolmen sizes and BGA scores. Only once the game is over."""
        if self.phase != OVER:
            raise CarnacError("the game is not over yet; use score_now() for the current standing")
        if self._result is None:
            self._result = score(self.board, self.cells)
        return self._result

    def score_now(self) -> Result:
        """Score the position as it stands, whether or not the game is over."""
        return score(self.board, self.cells)

    # ----------------------------------------------------------------- moves
    def apply(self, action: int) -> None:
        """Play ``action`` (an action number) for the player to act.

        Raises:
            IllegalActionError: the action is not legal now; the state is unchanged.
        """
        reason = self.why_illegal(action)
        if reason is not None:
            raise IllegalActionError(self.describe(action) + " is illegal: " + reason)
        self.apply_unchecked(operator.index(action))

    def apply_unchecked(self, action: int) -> None:
        """Play ``action`` without checking it: the fast path for search, rollouts and replays.

        The caller guarantees that ``action`` is a plain ``int`` in :meth:`legal_actions`
        (for example one drawn from that list or from the legal-action mask). An illegal
        action here corrupts the state; use :meth:`apply` for anything that comes from a user.
        """
        base = tilt_base(self.board.squares)
        if action < base:
            self._place(place_square(action), place_orientation(action))
        elif action < base + 4:
            self._tilt(action - base)
        else:
            self._decline()

    def place(self, square: int, orientation: int) -> None:
        """Place a megalith from the supply upright on empty ``square`` (row-major index)
        with ``orientation`` 0..3 (see :mod:`carnac_env.core.actions`)."""
        if not (is_whole(orientation) and 0 <= orientation < 4):
            raise IllegalActionError(f"orientation {orientation!r} is not one of 0, 1, 2, 3")
        if not (is_whole(square) and 0 <= square < self.board.squares):
            raise IllegalActionError(f"square {square!r} is not on the board (0..{self.board.squares - 1})")
        self.apply(place_action(self.board, square, orientation))

    def tilt(self, direction: int) -> None:
        """Tilt the megalith awaiting a decision towards ``direction`` (0 N, 1 E, 2 S, 3 W)."""
        if not (is_whole(direction) and 0 <= direction < 4):
            raise IllegalActionError(f"direction {direction!r} is not one of 0 (N), 1 (E), 2 (S), 3 (W)")
        self.apply(tilt_action(self.board, direction))

    def decline(self) -> None:
        """Decline to tilt: the megalith stands for good and its placer places again."""
        self.apply(decline_action(self.board))

    def _place(self, square: int, orientation: int) -> None:
        mover = self.to_act
        top, north_south, _ = tilt_colours(mover, orientation)
        self.cells[square] = top
        self.kinds[square] = STANDING
        self.supply -= 1
        self.empty -= 1
        targets = self._tilt_targets(square, north_south)
        if gets_response(bool(targets), self.supply, self.board.last_tilt):
            self.phase = RESPOND
            self.pending = square
            self.pending_colour = north_south
            self._targets = (square, north_south, Moves(False, targets, True))
            self.to_act = 1 - mover
        else:
            self._next_placement(1 - mover)

    def _tilt(self, direction: int) -> None:
        origin = self.pending
        first, second = self.board.tilt_squares[origin][direction]
        colour = tilt_colour(self.pending_colour, direction)
        cells, kinds = self.cells, self.kinds
        cells[origin] = 0
        kinds[origin] = EMPTY
        cells[first] = cells[second] = colour
        kinds[first] = kinds[second] = LYING
        self.lying.append((first, second))
        self.empty -= 1
        self._clear_pending()
        self._next_placement(self.to_act)  # the tilter places next

    def _decline(self) -> None:
        self._clear_pending()
        self.to_act = 1 - self.to_act
        self._next_placement(self.to_act)  # the placer places again

    def _clear_pending(self) -> None:
        self.pending = -1
        self.pending_colour = 0
        self._targets = None

    def _next_placement(self, placer: int) -> None:
        """After a move that leaves no megalith pending: the end of the game if the one
        end-of-game rule says so (the last to act stays ``to_act``), else ``placer`` places."""
        if game_ends(self.pending, self.supply, self.empty):
            self.phase = OVER
        else:
            self.phase = PLACE
            self.to_act = placer

    # ----------------------------------------------------------------- hand-built positions
    @classmethod
    def from_diagram(
        cls,
        board: Board | str,
        diagram: str | Iterable[str],
        *,
        to_act: int = 0,
        supply: int | None = None,
        **rules: object,
    ) -> GameState:
        """Build a position from a picture of the board, for tests and teaching.

        Args:
            board: the board (name or Board), with optional ``rules`` options.
            diagram: one line per row, north first (a string, or an iterable of strings);
                one character per square, spaces ignored: ``.`` empty, ``R``/``W`` a
                standing megalith showing red/white, ``r``/``w`` a square of a lying
                megalith. Lying squares pair up with an east neighbour of the same letter
                first, else a south one.
            to_act: the player to place, 0 (Red) or 1 (White); the position is in the
                ``PLACE`` phase.
            supply: megaliths left (a whole number); by default the board's megaliths minus
                those drawn.

        Raises:
            CarnacError: a diagram that is not text or of the wrong size, an unknown
                character, lying squares that do not pair up, a ``to_act`` other than 0 or 1,
                or a supply that is not a whole number or does not fit (see
                :func:`carnac_env.core.validate.validate`).
        """
        return position_from_diagram(cls(board, **rules), diagram, to_act=to_act, supply=supply)

    def diagram(self) -> str:
        """The inverse of :meth:`from_diagram`: one line per row, north first."""
        return diagram_of(self)
