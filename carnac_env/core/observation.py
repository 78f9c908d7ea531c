"""The observation planes and the legal-action mask, computed from a game state.

``observation`` has shape ``(rows, cols, NUM_PLANES)`` and dtype int8, seen by one player
(colours are relative to that player):

====  ===================  =====================================================
plane name                 meaning
====  ===================  =====================================================
0     own colour           the square shows the observing player's colour
1     opponent colour      the square shows the opponent's colour
2     standing             the square holds a standing megalith
3     lying                the square holds (half of) a lying megalith
4     awaiting tilt        the megalith awaiting a tilt-or-decline decision
5     tilt shows own       a legal tilt would cover this square with the observer's colour
6     tilt shows opponent  a legal tilt would cover this square with the opponent's colour
7     to act               all ones when the observing player is the one to act
8     supply               every square holds the number of megaliths left in the supply
====  ===================  =====================================================

Planes 0-3 are the public contract of carnac-rules.md. Planes 4-6 say whether a decision
is pending and what each legal tilt would show (tilts north and south cover different
squares, as do east and west, so the landing squares identify the direction); plane 7 says
whose move it is (the mask alone would not, for the player who waits); plane 8 the supply.
Together with the board's fixed rules they determine the legal actions and the rest of the
game: the observation is Markov.
"""

from __future__ import annotations

import numpy as np

from carnac_env.core.actions import ORIENTATIONS, place_number, place_square, tilt_base
from carnac_env.core.arithmetic import RED, WHITE, opponent_colour, own_colour
from carnac_env.core.game import LYING, OVER, RESPOND, STANDING, GameState

PLANE_NAMES = (
    "own colour",
    "opponent colour",
    "standing",
    "lying",
    "awaiting tilt",
    "tilt shows own",
    "tilt shows opponent",
    "to act",
    "supply",
)
NUM_PLANES = len(PLANE_NAMES)
OWN, OPPONENT, STANDING_PLANE, LYING_PLANE, AWAITING, TILT_OWN, TILT_OPPONENT, TO_ACT, SUPPLY = range(NUM_PLANES)


def observation_planes(state: GameState, player: int) -> np.ndarray:
    """The ``(rows, cols, NUM_PLANES)`` int8 observation of ``state`` seen by ``player``.

    This is the reference definition, written plainly from the state and kept as the
    oracle of the tests; the environments read :class:`ObservationTracker`, which keeps the
    same planes up to date move by move.
    """
    board = state.board
    cells = np.frombuffer(bytes(state.cells), dtype=np.uint8)
    kinds = np.frombuffer(bytes(state.kinds), dtype=np.uint8)
    obs = np.zeros((board.squares, NUM_PLANES), dtype=np.int8)
    obs[:, OWN] = cells == own_colour(player)
    obs[:, OPPONENT] = cells == opponent_colour(player)
    obs[:, STANDING_PLANE] = kinds == STANDING
    obs[:, LYING_PLANE] = kinds == LYING
    if state.phase == RESPOND:
        obs[state.pending, AWAITING] = 1
        for first, second, colour in state.tilt_targets().values():
            plane = TILT_OWN if colour == own_colour(player) else TILT_OPPONENT
            obs[first, plane] = obs[second, plane] = 1
    if state.phase != OVER and state.to_act == player:
        obs[:, TO_ACT] = 1
    obs[:, SUPPLY] = state.supply
    return obs.reshape(board.rows, board.cols, NUM_PLANES)


def legal_mask(state: GameState, player: int | None = None) -> np.ndarray:
    """The int8 legal-action mask (length ``rows*cols*4 + 5``), read from :meth:`GameState.moves`.

    With ``player`` given, the mask is all zeros unless that player is to act. Once the game
    is over the mask is all ones, for every player (Pgx's convention): no action is legal any
    more (:meth:`GameState.legal_actions` is empty and any step is refused or ignored), but a
    policy fed the last observation (Gymnasium's next-step autoreset does this) never meets an
    empty mask, whose -inf logits would be NaN.
    """
    board = state.board
    if state.phase == OVER:
        return np.ones(board.num_actions, dtype=np.int8)
    mask = np.zeros(board.num_actions, dtype=np.int8)
    if player is not None and player != state.to_act:
        return mask
    moves = state.moves()
    base = tilt_base(board.squares)
    if moves.place:
        mask[:base] = np.frombuffer(place_bits(state), dtype=np.int8)
    for direction in moves.tilts:
        mask[base + direction] = 1
    mask[base + 4] = moves.decline
    return mask


def _rows() -> list[list[list[bytes]]]:
    """``_ROWS[colour][kind][player]``: planes 0-3 of a square with that cell colour and kind,
    seen by ``player``, as 4 bytes."""
    return [
        [
            [
                bytes(
                    (colour == own_colour(player), colour == opponent_colour(player), kind == STANDING, kind == LYING)
                )
                for player in (0, 1)
            ]
            for kind in range(3)
        ]
        for colour in range(3)
    ]


_ROWS = _rows()
_FREE, _TAKEN = b"\x01" * ORIENTATIONS, bytes(ORIENTATIONS)
_BLANK = bytes(4)  # planes 0-3 of an empty square
#: By the colour a tilt shows: the plane it marks in Red's view and in White's.
_TILT_PLANES = {RED: (TILT_OWN, TILT_OPPONENT), WHITE: (TILT_OPPONENT, TILT_OWN)}
_NO_MARKS = bytes(TO_ACT - AWAITING)


class ObservationTracker:
    """Both players' observation planes and the legal mask, kept up to date move by move.

    The one observation path of the environments (AEC, Gymnasium): they call :meth:`update`
    after each action instead of recomputing :func:`observation_planes` from scratch; only
    what a move changes is written. Legality is read from :meth:`GameState.moves` (the
    place bits are the empty squares, kept square by square; the tilts and the decline are
    those of the moves). The results are identical to the reference functions (the tests
    compare them after every move).

    Attributes:
        mask_to_act: the legal mask of the player to act, one byte per action (read only).
        to_act: the player the mask belongs to.
    """

    def __init__(self, state: GameState) -> None:
        self.reset(state)

    def reset(self, state: GameState) -> None:
        """Rebuild everything from ``state``."""
        board = state.board
        squares = board.squares
        self._shape = (board.rows, board.cols, NUM_PLANES)
        self._base = tilt_base(squares)
        self._red, self._white = (bytearray(plane) for plane in _start_planes(state))
        self._acting = [state.phase != OVER and state.to_act == p for p in (0, 1)]
        self._all = (bytes(squares), b"\x01" * squares)
        self._supply_rows: dict[int, bytes] = {}
        #: The all-zeros mask, for a player who is not to act.
        self.no_actions = bytes(board.num_actions)
        # The place bits are kept whatever the phase, ready for the next placement; the
        # response mask is all zeros but for its last 5 entries (the tilts and decline).
        self._place = bytearray(place_bits(state)) + bytes(5)
        self._respond = bytearray(board.num_actions)
        self._marked: list[int] = []
        self._pending = -1
        self._make_views()
        self._mark_pending(state)

    def _make_views(self) -> None:
        """numpy views of the planes and masks (the same memory), copied out by
        :meth:`observation` and :meth:`mask`."""
        self._views = [np.frombuffer(plane, dtype=np.int8).reshape(self._shape) for plane in (self._red, self._white)]
        self._mask_views = {
            "place": np.frombuffer(self._place, dtype=np.int8),
            "respond": np.frombuffer(self._respond, dtype=np.int8),
            "none": np.zeros(len(self.no_actions), dtype=np.int8),
            "over": np.ones(len(self.no_actions), dtype=np.int8),
        }

    def update(self, state: GameState, action: int) -> None:
        """Bring the planes up to date after ``action`` was applied to ``state``."""
        red, white, place = self._red, self._white, self._place
        if action < self._base:
            square = place_square(action)
            at = square * NUM_PLANES
            red[at : at + 4], white[at : at + 4] = _ROWS[state.cells[square]][STANDING]
            at = place_number(square, 0)
            place[at : at + ORIENTATIONS] = _TAKEN
            supply = self._supply_rows.get(state.supply)
            if supply is None:
                supply = self._supply_rows[state.supply] = bytes((state.supply,)) * len(self._all[0])
            red[SUPPLY::NUM_PLANES] = white[SUPPLY::NUM_PLANES] = supply
        elif action < self._base + 4:
            origin = self._pending
            first, second = state.lying[-1]
            lying_red, lying_white = _ROWS[state.cells[first]][LYING]
            for square, on_red, on_white in ((origin, _BLANK, _BLANK), (first, lying_red, lying_white)):
                at = square * NUM_PLANES
                red[at : at + 4], white[at : at + 4] = on_red, on_white
            at = second * NUM_PLANES
            red[at : at + 4], white[at : at + 4] = lying_red, lying_white
            for square, bits in ((origin, _FREE), (first, _TAKEN), (second, _TAKEN)):
                at = place_number(square, 0)
                place[at : at + ORIENTATIONS] = bits
        for square in self._marked:
            at = square * NUM_PLANES
            red[at + AWAITING : at + TO_ACT] = white[at + AWAITING : at + TO_ACT] = _NO_MARKS
        self._mark_pending(state)

    def _mark_pending(self, state: GameState) -> None:
        moves = state.moves()
        to_act = self.to_act = state.to_act
        playing = moves.place or moves.decline
        acting = self._acting
        if acting[0] != (playing and to_act == 0):
            acting[0] = not acting[0]
            self._red[TO_ACT::NUM_PLANES] = self._all[acting[0]]
        if acting[1] != (playing and to_act == 1):
            acting[1] = not acting[1]
            self._white[TO_ACT::NUM_PLANES] = self._all[acting[1]]
        self._pending = pending = state.pending
        if moves.decline:
            red, white = self._red, self._white
            at = pending * NUM_PLANES
            red[at + AWAITING] = white[at + AWAITING] = 1
            marked = [pending]
            tail = bytearray(5)
            for direction, (first, second, colour) in moves.tilts.items():
                # Red's own-colour plane is Red's tilt plane; White sees it as the opponent's.
                red_plane, white_plane = _TILT_PLANES[colour]
                first, second = first * NUM_PLANES, second * NUM_PLANES
                red[first + red_plane] = red[second + red_plane] = 1
                white[first + white_plane] = white[second + white_plane] = 1
                marked.append(first // NUM_PLANES)
                marked.append(second // NUM_PLANES)
                tail[direction] = 1
            tail[4] = 1
            self._respond[self._base :] = tail
            self._marked = marked
            self._mask_kind = "respond"
            self.mask_to_act: bytes | bytearray = self._respond
        else:
            self._marked = []
            # Once the game is over no action is legal (mask_to_act), though :meth:`mask` shows all ones.
            self._mask_kind = "place" if moves.place else "over"
            self.mask_to_act = self._place if moves.place else self.no_actions

    # The numpy views share the bytearrays' memory; copies and pickles rebuild them.
    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k not in ("_views", "_mask_views", "mask_to_act")}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._make_views()
        self.mask_to_act = {"place": self._place, "respond": self._respond, "over": self.no_actions}[self._mask_kind]

    def is_legal(self, action: int) -> bool:
        """Whether the action number ``action`` (a plain int) is legal for the player to act
        (never once the game is over, though :meth:`mask` is then all ones)."""
        return 0 <= action < len(self.no_actions) and self.mask_to_act[action] == 1

    def observation(self, player: int) -> np.ndarray:
        """A fresh copy of ``player``'s observation, shape ``(rows, cols, NUM_PLANES)``."""
        return self._views[player].copy()

    def mask(self, player: int) -> np.ndarray:
        """A fresh int8 legal mask for ``player``: all zeros unless ``player`` is to act; all
        ones for both players once the game is over (:func:`legal_mask`'s convention)."""
        kind = self._mask_kind
        return self._mask_views[kind if kind == "over" or player == self.to_act else "none"].copy()


def place_bits(state: GameState) -> bytes:
    """The place part of the legal mask as bytes, one per place action: 1 for the four
    orientations of every empty square (whatever the phase; :meth:`GameState.moves` says
    whether they count now)."""
    return b"".join(_TAKEN if kind else _FREE for kind in state.kinds)


_FRESH: dict[object, tuple[bytes, bytes]] = {}


def _start_planes(state: GameState) -> tuple[bytes, bytes]:
    """Both players' planes of ``state`` as bytes, from :func:`observation_planes` (kept per
    board for the start of a game, which every reset begins with)."""
    fresh = state.placed == 0 and state.to_act == 0 and state.phase != OVER
    planes = _FRESH.get(state.board) if fresh else None
    if planes is None:
        planes = (observation_planes(state, 0).tobytes(), observation_planes(state, 1).tobytes())
        if fresh:
            _FRESH[state.board] = planes
    return planes
