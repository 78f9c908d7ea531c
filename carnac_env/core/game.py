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
"""

from __future__ import annotations

import operator
from collections.abc import Iterable

import numpy as np

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
    tilt_colours,
)
from carnac_env.core.boards import DIRECTION_NAMES, Board, make_board
from carnac_env.core.notation import action_to_text, square_name
from carnac_env.core.scoring import Result, score
from carnac_env.errors import CarnacError, IllegalActionError

#: Phases of the turn.
PLACE, RESPOND, OVER = 0, 1, 2
PHASE_NAMES = ("place", "respond", "over")

#: What a square holds (``GameState.kinds``).
EMPTY, STANDING, LYING = 0, 1, 2
#: Cell colours (``GameState.cells``): 0 empty, player + 1 otherwise.
RED, WHITE = 1, 2
COLOUR_NAMES = ("", "Red", "White")
PLAYER_NAMES = ("Red", "White")


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
        pending_colours: in ``RESPOND``, the cell colours that a tilt north/south and a tilt
            east/west of the pending megalith would show, else ``(0, 0)``.
        empty: number of empty squares.
    """

    __slots__ = (
        "_result",
        "board",
        "cells",
        "empty",
        "kinds",
        "lying",
        "pending",
        "pending_colours",
        "phase",
        "supply",
        "to_act",
    )

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
        self.pending_colours = (0, 0)
        self.empty = board.squares
        self._result: Result | None = None

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
        other.pending_colours = self.pending_colours
        other.empty = self.empty
        other._result = self._result
        return other

    __copy__ = copy

    def __deepcopy__(self, memo: dict) -> GameState:
        return self.copy()

    def __getstate__(self) -> dict:
        return {name: getattr(self, name) for name in self.__slots__}

    def __setstate__(self, data: dict) -> None:
        for name, value in data.items():
            setattr(self, name, value)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GameState):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in self.__slots__ if name != "_result")

    __hash__ = None  # mutable

    def __repr__(self) -> str:
        return (
            f"GameState(board={self.board.name!r}, phase={PHASE_NAMES[self.phase]!r}, "
            f"to_act={self.to_act}, supply={self.supply}, pending={self.pending})"
        )

    def _repr_svg_(self) -> str:
        """The board as SVG, for Jupyter's inline display (drawn by :mod:`carnac_env.render.svg`)."""
        from carnac_env.render.svg import state_svg  # only when a notebook asks

        return state_svg(self)

    # ----------------------------------------------------------------- reading the state
    @property
    def is_over(self) -> bool:
        """Whether the game has ended."""
        return self.phase == OVER

    @property
    def placed(self) -> int:
        """Megaliths placed so far."""
        return self.board.megaliths - self.supply

    def tilt_targets(self) -> dict[int, tuple[int, int, int]]:
        """The legal tilts of the megalith awaiting a decision.

        Returns:
            ``{direction: (square, square, colour)}``: the two squares the megalith would
            cover and the cell colour they would show. Empty outside the ``RESPOND`` phase.
        """
        if self.phase != RESPOND:
            return {}
        return self._tilt_targets(self.pending, self.pending_colours)

    def _tilt_targets(self, square: int, colours: tuple[int, int]) -> dict[int, tuple[int, int, int]]:
        kinds = self.kinds
        targets = {}
        for direction, pair in enumerate(self.board.tilt_squares[square]):
            if pair is not None and not kinds[pair[0]] and not kinds[pair[1]]:
                targets[direction] = (pair[0], pair[1], colours[direction & 1])
        return targets

    def tilts_after_place(self, square: int, orientation: int) -> dict[int, tuple[int, int, int]]:
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
        if isinstance(square, bool) or not isinstance(square, int | np.integer) or not 0 <= square < board.squares:
            raise CarnacError(f"square {square!r} is not on the board (0..{board.squares - 1})")
        if isinstance(orientation, bool) or orientation not in (0, 1, 2, 3):
            raise CarnacError(f"orientation {orientation!r} is not one of 0, 1, 2, 3")
        if self.kinds[square]:
            raise CarnacError(f"square {square_name(board, int(square))} is not empty")
        if self.supply == 1 and not board.last_tilt:
            return {}
        _, north_south, east_west = tilt_colours(self.to_act, int(orientation))
        return self._tilt_targets(int(square), (north_south, east_west))

    def tilt_directions(self) -> list[int]:
        """The directions (0 north, 1 east, 2 south, 3 west) the pending megalith may tilt."""
        return list(self.tilt_targets())

    def legal_actions(self) -> list[int]:
        """Every legal action number, in increasing order; empty once the game is over."""
        if self.phase == PLACE:
            kinds = self.kinds
            return [
                a
                for s in range(self.board.squares)
                if not kinds[s]
                for a in range(place_number(s, 0), place_number(s, ORIENTATIONS))
            ]
        if self.phase == RESPOND:
            base = tilt_base(self.board.squares)
            return [base + d for d in self.tilt_targets()] + [decline_number(self.board.squares)]
        return []

    def why_illegal(self, action: int) -> str | None:
        """``None`` if ``action`` is legal now, otherwise the reason in words."""
        board = self.board
        try:
            if isinstance(action, bool):
                raise TypeError
            action = operator.index(action)
        except TypeError:
            return f"an action must be an integer, got {type(action).__name__}"
        if not 0 <= action < board.num_actions:
            return f"actions run from 0 to {board.num_actions - 1} on a {board.rows} x {board.cols} board"
        if self.phase == OVER:
            return "the game is over"
        move = decode(board, action)
        if move.kind == "place":
            if self.phase == RESPOND:
                return (
                    f"{PLAYER_NAMES[self.to_act]} must first tilt or decline the megalith "
                    f"standing on {square_name(board, self.pending)}"
                )
            if self.kinds[move.square]:
                what = "a standing" if self.kinds[move.square] == STANDING else "a lying"
                return f"square {square_name(board, move.square)} already holds {what} megalith"
            return None
        if self.phase == PLACE:
            verb = "tilt" if move.kind == TILT else "decline"
            return f"there is no megalith to {verb}: {PLAYER_NAMES[self.to_act]} must place"
        if move.kind == TILT and move.direction not in self.tilt_targets():
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
        if (
            isinstance(action, int | np.integer)
            and not isinstance(action, bool)
            and 0 <= action < self.board.num_actions
        ):
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
        if not (isinstance(orientation, int) and 0 <= orientation < 4):
            raise IllegalActionError(f"orientation {orientation!r} is not one of 0, 1, 2, 3")
        if not (isinstance(square, int) and 0 <= square < self.board.squares):
            raise IllegalActionError(f"square {square!r} is not on the board (0..{self.board.squares - 1})")
        self.apply(place_action(self.board, square, orientation))

    def tilt(self, direction: int) -> None:
        """Tilt the megalith awaiting a decision towards ``direction`` (0 N, 1 E, 2 S, 3 W)."""
        if not (isinstance(direction, int) and 0 <= direction < 4):
            raise IllegalActionError(f"direction {direction!r} is not one of 0 (N), 1 (E), 2 (S), 3 (W)")
        self.apply(tilt_action(self.board, direction))

    def decline(self) -> None:
        """Decline to tilt: the megalith stands for good and its placer places again."""
        self.apply(decline_action(self.board))

    def _place(self, square: int, orientation: int) -> None:
        mover = self.to_act
        top, north_south, east_west = tilt_colours(mover, orientation)
        self.cells[square] = top
        self.kinds[square] = STANDING
        self.supply -= 1
        self.empty -= 1
        last = self.supply == 0
        if (not last or self.board.last_tilt) and self._tilt_targets(square, (north_south, east_west)):
            self.phase = RESPOND
            self.pending = square
            self.pending_colours = (north_south, east_west)
            self.to_act = 1 - mover
        elif last or self.empty == 0:
            self._end()
        else:
            self.to_act = 1 - mover

    def _tilt(self, direction: int) -> None:
        origin = self.pending
        first, second = self.board.tilt_squares[origin][direction]
        colour = self.pending_colours[direction & 1]
        cells, kinds = self.cells, self.kinds
        cells[origin] = 0
        kinds[origin] = EMPTY
        cells[first] = cells[second] = colour
        kinds[first] = kinds[second] = LYING
        self.lying.append((first, second))
        self.empty -= 1
        self._clear_pending()
        # The tilter places next; the origin square is empty again, so only the supply can end it.
        if self.supply == 0:
            self._end()
        else:
            self.phase = PLACE

    def _decline(self) -> None:
        self._clear_pending()
        self.to_act = 1 - self.to_act
        # A decline implies two empty squares, so only the supply can end the game here.
        if self.supply == 0:
            self._end()
        else:
            self.phase = PLACE

    def _clear_pending(self) -> None:
        self.pending = -1
        self.pending_colours = (0, 0)

    def _end(self) -> None:
        self.phase = OVER
        self._clear_pending()

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
            diagram: one line per row, north first; one character per square, spaces
                ignored: ``.`` empty, ``R``/``W`` a standing megalith showing red/white,
                ``r``/``w`` a square of a lying megalith. Lying squares pair up with an
                east neighbour of the same letter first, else a south one.
            to_act: the player to place (the position is in the ``PLACE`` phase).
            supply: megaliths left; by default the board's megaliths minus those drawn.

        Raises:
            CarnacError: a diagram of the wrong size, an unknown character, lying squares
                that do not pair up, or a supply that does not fit.
        """
        state = cls(board, **rules)
        state._fill_from_rows(_diagram_rows(state.board, diagram))
        state._pair_lying_squares()
        state._set_diagram_counts(supply, to_act)
        return state

    def _fill_from_rows(self, rows: list[str]) -> None:
        """Set cells and kinds from diagram rows (already checked for size)."""
        for square, char in enumerate("".join(rows)):
            if char not in _DIAGRAM_CODES:
                raise CarnacError(
                    f"diagram square {square_name(self.board, square)} has {char!r}; expected one of . R W r w"
                )
            self.cells[square], self.kinds[square] = _DIAGRAM_CODES[char]

    def _pair_lying_squares(self) -> None:
        """Pair the lying squares into megaliths in ``lying``: each square in reading order
        with an unpaired neighbour of its colour, east first, else south, backtracking when
        a choice leaves a square without a partner."""
        pairs = self._match_lying(0, bytearray(self.board.squares))
        if pairs is None:
            raise CarnacError(self._why_unpairable())
        self.lying.extend(pairs)

    def _match_lying(self, start: int, paired: bytearray) -> list[tuple[int, int]] | None:
        """Pairs for every unpaired lying square from ``start`` on, or None if impossible."""
        square = next((s for s in range(start, self.board.squares) if self.kinds[s] == LYING and not paired[s]), None)
        if square is None:
            return []
        for other in self._lying_partners(square, paired):
            paired[square] = paired[other] = 1
            rest = self._match_lying(square + 1, paired)
            if rest is not None:
                return [(square, other), *rest]
            paired[square] = paired[other] = 0
        return None

    def _lying_partners(self, square: int, paired: bytearray) -> list[int]:
        """The east, then the south, neighbour of ``square`` that can pair with it."""
        board = self.board
        r, c = divmod(square, board.cols)
        candidates = (square + 1 if c + 1 < board.cols else None, square + board.cols if r + 1 < board.rows else None)
        return [
            other
            for other in candidates
            if other is not None
            and self.kinds[other] == LYING
            and not paired[other]
            and self.cells[other] == self.cells[square]
        ]

    def _why_unpairable(self) -> str:
        """The message for lying squares that do not pair up: a square with no lying
        neighbour of its colour if there is one, else the lying squares as a whole."""
        board, cells, kinds = self.board, self.cells, self.kinds
        lying = [s for s in range(board.squares) if kinds[s] == LYING]
        for square in lying:
            if not any(kinds[o] == LYING and cells[o] == cells[square] for o in board.neighbours[square]):
                return (
                    f"diagram square {square_name(board, square)} is a lying megalith with no "
                    "partner of its colour next to it"
                )
        names = " ".join(square_name(board, s) for s in lying)
        return f"diagram lying squares {names} cannot be paired into megaliths of one colour each"

    def _set_diagram_counts(self, supply: int | None, to_act: int) -> None:
        """Set ``empty``, ``supply`` and ``to_act`` of a diagram position, checking they fit."""
        board = self.board
        used = sum(1 for k in self.kinds if k == STANDING) + len(self.lying)
        self.empty = sum(1 for k in self.kinds if k == EMPTY)
        self.supply = board.megaliths - used if supply is None else supply
        if not 0 < self.supply <= board.megaliths - used or self.empty == 0:
            raise CarnacError(
                f"supply {self.supply} does not fit a position with {used} megaliths on the "
                f"board of a {board.megaliths}-megalith game and {self.empty} empty squares "
                "(a playable position needs a supply >= 1 and an empty square)"
            )
        if to_act not in (0, 1):
            raise CarnacError(f"to_act={to_act!r}; expected 0 (Red) or 1 (White)")
        self.to_act = to_act

    def diagram(self) -> str:
        """The inverse of :meth:`from_diagram`: one line per row, north first."""
        letters = {code: char for char, code in _DIAGRAM_CODES.items()}
        cols = self.board.cols
        out = []
        for r in range(self.board.rows):
            out.append("".join(letters[self.cells[s], self.kinds[s]] for s in range(r * cols, (r + 1) * cols)))
        return "\n".join(out)


#: Diagram characters and the (cell colour, kind) each stands for.
_DIAGRAM_CODES = {
    ".": (0, EMPTY),
    "R": (RED, STANDING),
    "W": (WHITE, STANDING),
    "r": (RED, LYING),
    "w": (WHITE, LYING),
}


def _diagram_rows(board: Board, diagram: str | Iterable[str]) -> list[str]:
    """The rows of a diagram without spaces, checked to match the board's size."""
    lines = diagram.strip().splitlines() if isinstance(diagram, str) else list(diagram)
    rows = ["".join(line.split()) for line in lines if line.strip()]
    if len(rows) != board.rows or any(len(r) != board.cols for r in rows):
        raise CarnacError(
            f"diagram is {len(rows)} rows of lengths {[len(r) for r in rows]}; "
            f"expected {board.rows} rows of {board.cols} squares"
        )
    return rows
