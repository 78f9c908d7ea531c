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

from carnac_env.core.game import OVER, PLACE, RESPOND, GameState

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
    obs[:, OWN] = cells == player + 1
    obs[:, OPPONENT] = cells == 2 - player
    obs[:, STANDING_PLANE] = kinds == 1
    obs[:, LYING_PLANE] = kinds == 2
    if state.phase == RESPOND:
        obs[state.pending, AWAITING] = 1
        for first, second, colour in state.tilt_targets().values():
            plane = TILT_OWN if colour == player + 1 else TILT_OPPONENT
            obs[first, plane] = obs[second, plane] = 1
    if state.phase != OVER and state.to_act == player:
        obs[:, TO_ACT] = 1
    obs[:, SUPPLY] = state.supply
    return obs.reshape(board.rows, board.cols, NUM_PLANES)


def legal_mask(state: GameState, player: int | None = None) -> np.ndarray:
    """The int8 legal-action mask (length ``rows*cols*4 + 5``).

    With ``player`` given, the mask is all zeros unless that player is to act.
    """
    board = state.board
    mask = np.zeros(board.num_actions, dtype=np.int8)
    if state.phase == OVER or (player is not None and player != state.to_act):
        return mask
    if state.phase == PLACE:
        empty = np.frombuffer(bytes(state.kinds), dtype=np.uint8) == 0
        mask[: board.squares * 4] = np.repeat(empty, 4)
    else:
        base = board.squares * 4
        for direction in state.tilt_targets():
            mask[base + direction] = 1
        mask[base + 4] = 1
    return mask
