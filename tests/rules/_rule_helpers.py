"""Helpers the rules tests share: the public action encoding, the faces of a megalith worked
out from the rules text, and the check that an engine rejects an illegal action.

The expected values of the rules tests come from carnac-rules.md (a megalith as a 1x1x2 block
with coloured faces, the turn structure, the end of the game, dolmens and the tie-break), not
from the core's helper tables: the point is to catch mistakes in the engines.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from _engines import BatchPosition, CorePosition, JaxPosition, Position

from carnac_env.errors import IllegalActionError

RED, WHITE = 1, 2  # cell values seen from above
N, E, S, W = 0, 1, 2, 3
STEPS = {N: (-1, 0), E: (0, 1), S: (1, 0), W: (0, -1)}
LETTERS = "NESW"


def sq(state: Any, r: int, c: int) -> int:
    """Square index of row ``r`` (0 = north) and column ``c`` (0 = west)."""
    return r * state.board.cols + c


def place_a(state: Any, r: int, c: int, o: int) -> int:
    """The place action from the public encoding: (row*C + col)*4 + o."""
    return (r * state.board.cols + c) * 4 + o


def tilt_a(state: Any, d: int) -> int:
    return state.board.rows * state.board.cols * 4 + d


def decline_a(state: Any) -> int:
    return state.board.rows * state.board.cols * 4 + 4


def block_faces(mover: int, o: int) -> dict[str, int]:
    """The six faces of a megalith placed upright by ``mover`` with orientation ``o``.

    From the rules: the two end faces differ (one red, one white); bit 0 of ``o`` picks the
    top end (0: the mover's own colour); bit 1 picks which pair of opposite long faces
    carries the top colour (0: north/south, 2: east/west); the other pair has the other
    colour (long faces alternate around the block).
    """
    own, other = (RED, WHITE) if mover == 0 else (WHITE, RED)
    top = own if o & 1 == 0 else other
    bottom = other if top == own else own
    if o & 2 == 0:
        return {"up": top, "down": bottom, "N": top, "S": top, "E": bottom, "W": bottom}
    return {"up": top, "down": bottom, "N": bottom, "S": bottom, "E": top, "W": top}


def face_up_after_tilt(faces: dict[str, int], d: int) -> int:
    """A tilt towards ``d`` lays the block on its face pointing ``d``; the opposite long face
    ends up on top."""
    return faces[{N: "S", S: "N", E: "W", W: "E"}[d]]


def assert_rejected(state: Position, action: Any, *fragments: str) -> None:
    """``action`` is illegal in ``state``, by each engine's own convention.

    * core: ``apply`` raises IllegalActionError naming the action and the fragments; the state
      is unchanged;
    * batch: ``BatchGame.step`` raises IllegalActionError naming the fragments and no game
      changes; once a game is over, its slot already holds a fresh game (the auto-reset);
    * jax: the illegal action ends the game, -1 for the player who chose it and +1 for the
      other, the board unchanged (Pgx's convention); a finished game ignores any action.
    """
    before = state.copy()
    if isinstance(state, CorePosition):
        with pytest.raises(IllegalActionError) as info:
            state.game.apply(action)
        message = str(info.value)
        assert f"action {action!r}" in message or f"action {action}" in message, message
        for fragment in fragments:
            assert fragment in message, f"{fragment!r} not in {message!r}"
        assert state.game == before.game
        assert state.game.diagram() == before.game.diagram()
    elif isinstance(state, BatchPosition):
        if state.is_over:
            fresh = state.restarted
            assert fresh is not None and fresh.phase == 0 and fresh.to_act == 0
            assert fresh.supply == state.board.megaliths and fresh.empty == state.board.squares
            return
        with pytest.raises(IllegalActionError) as info:
            state.games.step(np.array([action]))
        message = str(info.value)
        for fragment in fragments:
            assert fragment in message, f"{fragment!r} not in {message!r}"
        assert state.games.get_state(0) == before.games.get_state(0)
    else:
        assert isinstance(state, JaxPosition)
        after = state._raw_step(action)
        if state.is_over:
            assert np.asarray(after.rewards).tolist() == [0.0, 0.0]
        else:
            assert bool(after.terminated)
            loser = state.to_act
            assert np.asarray(after.rewards).tolist() == [-1.0 if p == loser else 1.0 for p in (0, 1)]
        for field in ("cells", "kinds", "supply", "pending"):
            assert np.array_equal(np.asarray(getattr(after._x, field)), np.asarray(getattr(state.state._x, field)))
    assert state.diagram() == before.diagram()
    assert state.legal_actions() == before.legal_actions()
