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

from carnac_env.core.actions import ORIENTATIONS, decline_number, place_number, place_square, tilt_base
from carnac_env.core.game import EMPTY, LYING, OVER, PLACE, RED, RESPOND, STANDING, WHITE, GameState

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

    This is the reference definition; the environments keep incremental copies of it.
    """
    board = state.board
    cells = np.frombuffer(bytes(state.cells), dtype=np.uint8)
    kinds = np.frombuffer(bytes(state.kinds), dtype=np.uint8)
    obs = np.zeros((board.squares, NUM_PLANES), dtype=np.int8)
    obs[:, OWN] = cells == player + RED
    obs[:, OPPONENT] = cells == WHITE - player
    obs[:, STANDING_PLANE] = kinds == STANDING
    obs[:, LYING_PLANE] = kinds == LYING
    if state.phase == RESPOND:
        obs[state.pending, AWAITING] = 1
        for first, second, colour in state.tilt_targets().values():
            plane = TILT_OWN if colour == player + RED else TILT_OPPONENT
            obs[first, plane] = obs[second, plane] = 1
    if state.phase != OVER and state.to_act == player:
        obs[:, TO_ACT] = 1
    obs[:, SUPPLY] = state.supply
    return obs.reshape(board.rows, board.cols, NUM_PLANES)


def _place_bits(state: GameState) -> np.ndarray:
    """The place part of the mask: the 4 orientations of every empty square."""
    return np.repeat(np.frombuffer(bytes(state.kinds), dtype=np.uint8) == EMPTY, ORIENTATIONS)


def legal_mask(state: GameState, player: int | None = None) -> np.ndarray:
    """The int8 legal-action mask (length ``rows*cols*4 + 5``).

    With ``player`` given, the mask is all zeros unless that player is to act.
    """
    board = state.board
    mask = np.zeros(board.num_actions, dtype=np.int8)
    if state.phase == OVER or (player is not None and player != state.to_act):
        return mask
    if state.phase == PLACE:
        mask[: tilt_base(board.squares)] = _place_bits(state)
    else:
        base = tilt_base(board.squares)
        for direction in state.tilt_targets():
            mask[base + direction] = 1
        mask[decline_number(board.squares)] = 1
    return mask


# _ROWS[colour, kind, player] = planes 0-3 of a square with that cell colour and kind, seen by player.
_ROWS = np.zeros((3, 3, 2, 4), dtype=np.int8)
for _colour in range(3):
    for _kind in range(3):
        for _player in range(2):
            _ROWS[_colour, _kind, _player] = (
                _colour == _player + RED,
                _colour == WHITE - _player,
                _kind == STANDING,
                _kind == LYING,
            )


def _place_slice(square: int) -> slice:
    """The mask entries of the 4 placements on ``square``."""
    return slice(place_number(square, 0), place_number(square, ORIENTATIONS))


_TO_ACT_ROWS = np.array([[[1], [0]], [[0], [1]], [[0], [0]]], dtype=np.int8)  # [to_act or 2 if over, player]


class ObservationTracker:
    """Both players' observation planes and the legal mask, kept up to date move by move.

    The environments call :meth:`update` after each action instead of recomputing
    :func:`observation_planes` from scratch; only the squares a move touches are written.
    The results are identical to the reference functions (checked by the tests).
    """

    def __init__(self, state: GameState) -> None:
        self.reset(state)

    def reset(self, state: GameState) -> None:
        """Rebuild everything from ``state``."""
        board = state.board
        self._shape = (board.rows, board.cols, NUM_PLANES)
        self._base = tilt_base(board.squares)
        self.planes = np.stack([observation_planes(state, p).reshape(board.squares, NUM_PLANES) for p in (0, 1)])
        #: The all-zeros mask, for a player who is not to act (never written to).
        self.no_actions = np.zeros(board.num_actions, dtype=np.int8)
        # The place bits are kept whatever the phase, ready for the next placement.
        self._place_mask = self.no_actions.copy()
        self._place_mask[: self._base] = _place_bits(state)
        self._marked: list[int] = []
        self._pending = -1
        self._mark_pending(state)

    def update(self, state: GameState, action: int) -> None:
        """Bring the planes up to date after ``action`` was applied to ``state``."""
        planes = self.planes
        base = self._base
        place = self._place_mask
        if action < base:
            square = place_square(action)
            planes[:, square, :4] = _ROWS[state.cells[square], state.kinds[square]]
            place[_place_slice(square)] = 0
            planes[:, :, SUPPLY] = state.supply
        elif action < base + 4:
            origin = self._pending
            first, second = state.lying[-1]
            planes[:, origin, :4] = 0
            planes[:, first, :4] = planes[:, second, :4] = _ROWS[state.cells[first], LYING]
            place[_place_slice(origin)] = 1
            place[_place_slice(first)] = 0
            place[_place_slice(second)] = 0
        if self._marked:
            planes[:, self._marked, AWAITING:TO_ACT] = 0
            self._marked = []
        self._mark_pending(state)

    def _mark_pending(self, state: GameState) -> None:
        planes = self.planes
        phase = state.phase
        planes[:, :, TO_ACT] = _TO_ACT_ROWS[2 if phase == OVER else state.to_act]
        self._pending = state.pending
        if phase == RESPOND:
            marked = [state.pending]
            planes[:, state.pending, AWAITING] = 1
            mask = self.no_actions.copy()
            for direction, (first, second, colour) in state.tilt_targets().items():
                # Red's own-colour plane is Red's tilt plane; White sees it as the opponent's.
                red_plane = TILT_OWN if colour == RED else TILT_OPPONENT
                planes[0, first, red_plane] = planes[0, second, red_plane] = 1
                white_plane = TILT_OPPONENT if colour == RED else TILT_OWN
                planes[1, first, white_plane] = planes[1, second, white_plane] = 1
                marked += (first, second)
                mask[self._base + direction] = 1
            mask[self._base + 4] = 1  # decline
            self._marked = marked
            self.mask_to_act = mask
        elif phase == PLACE:
            self.mask_to_act = self._place_mask
        else:
            self.mask_to_act = self.no_actions

    def observation(self, player: int) -> np.ndarray:
        """A fresh copy of ``player``'s observation, shape ``(rows, cols, NUM_PLANES)``."""
        return self.planes[player].reshape(self._shape).copy()
