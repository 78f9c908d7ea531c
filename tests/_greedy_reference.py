"""greedy's heuristic stated a second time, in plain Python on the rules core: the reference the
compiled form (carnac_env.search.lookahead, which is what plays) is checked against, bit for bit.

It lives in the tests on purpose: the package states the heuristic once, compiled
(carnac_env.agents.greedy), and this independent statement exists only to catch a change in
it. The evaluation scores a position for one player as the sum over that player's colour groups
minus the same sum for the opponent's: ``DOLMEN + size`` for a dolmen, ``PARTIAL * (size /
(min_dolmen - 1)) ** 2`` for a smaller group touching an empty square, else 0; a finished game
adds ``WIN`` times the result. A placement is worth the least of the positions after each legal
reply (a one-ply minimax).
"""

from __future__ import annotations

from carnac_env.core.game import OVER, RED, RESPOND, WHITE, GameState
from carnac_env.core.scoring import groups
from carnac_env.search.lookahead import DOLMEN, PARTIAL, WIN


def evaluate(state: GameState, player: int) -> float:
    """The static evaluation of ``state`` for ``player`` (0 Red, 1 White); see the module docstring.

    The groups come from the core's scoring (:func:`carnac_env.core.scoring.groups`).
    """
    board = state.board
    total = 0.0
    for colour in (RED, WHITE):
        sign = 1.0 if colour == player + 1 else -1.0
        for group in groups(board, state.cells, colour):
            total += sign * group_value(state, group)
    if state.phase == OVER:
        total += WIN * state.result().reward(player)
    return total


def group_value(state: GameState, group: list[int]) -> float:
    """What one colour group of ``state`` is worth to its owner: ``DOLMEN + size`` for a
    dolmen, ``PARTIAL * (size / (min_dolmen - 1)) ** 2`` for a smaller group that touches an
    empty square, else 0."""
    board = state.board
    size = len(group)
    if size >= board.min_dolmen:
        return DOLMEN + size
    kinds, neighbours = state.kinds, board.neighbours
    if any(not kinds[other] for square in group for other in neighbours[square]):
        return PARTIAL * (size / max(board.min_dolmen - 1, 1)) ** 2
    return 0.0


class _Evaluations:
    """:func:`evaluate` for one player, remembered by position: the four orientations of a
    placement share their tilt outcomes and their decline, so about half the evaluations
    of :func:`action_values` repeat. The evaluation reads only the squares and whether the
    game is over, so that is the key."""

    def __init__(self, player: int) -> None:
        self.player = player
        self.known: dict[tuple[bytes, bytes, bool], float] = {}

    def __call__(self, state: GameState) -> float:
        key = (bytes(state.cells), bytes(state.kinds), state.phase == OVER)
        value = self.known.get(key)
        if value is None:
            value = self.known[key] = evaluate(state, self.player)
        return value


def response_values(state: GameState, player: int, value_of: _Evaluations | None = None) -> list[tuple[float, int]]:
    """``(value for player, action)`` for each legal response (tilts, then decline) in the
    ``RESPOND`` phase of ``state``."""
    value_of = value_of or _Evaluations(player)
    out = []
    for action in state.legal_actions():
        after = state.copy()
        after.apply_unchecked(action)
        out.append((value_of(after), action))
    return out


def reference_action_values(state: GameState) -> list[tuple[float, int]]:
    """``(value, action)`` for every legal action of the player to act, as greedy sees it:
    after a placement the opponent's most harmful response is assumed (see the module
    docstring). The reference, in Python; ``carnac_env.agents.greedy.action_values`` is the same, compiled."""
    player = state.to_act
    value_of = _Evaluations(player)
    if state.phase == RESPOND:
        return response_values(state, player, value_of)
    out = []
    for action in state.legal_actions():
        after = state.copy()
        after.apply_unchecked(action)
        if after.phase == RESPOND:
            value = min(v for v, _ in response_values(after, player, value_of))
        else:
            value = value_of(after)
        out.append((value, action))
    return out
