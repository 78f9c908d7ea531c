"""The one check of a position: :func:`validate`.

Positions come from many places besides play: hand-built diagrams, a batch slot being
loaded, a playout's start, a JAX state being made, a position unpickled or assembled field
by field. Every one of them is checked here, so that a position the package accepts is one
the rules could have produced, field by field, and so that every engine may rely on the
same facts (arrays of the right size, counts that add up, a pending megalith that stands).
The facts are :func:`carnac_env.core.fields.check_fields`'s. This module adds that the
position is a :class:`~carnac_env.core.game.GameState`.
"""

from __future__ import annotations

from typing import Any

from carnac_env.core.fields import check_fields
from carnac_env.core.game import GameState
from carnac_env.errors import CarnacError

__all__ = ["validate"]


def validate(state: Any, *, name: str = "state") -> None:
    """Check that ``state`` is a :class:`GameState` whose fields agree (every fact of
    :func:`~carnac_env.core.fields.check_fields`); raise if it is not.

    Args:
        state: the position.
        name: how messages name it (``"the state"``, ``"set_state's state"``...).

    Raises:
        CarnacError: not a GameState, or the first fact that fails, naming the field, its
            value and what was expected. ``state`` is not changed.
    """
    if not isinstance(state, GameState):
        raise CarnacError(f"{name} must be a GameState, got {type(state).__name__}")
    check_fields(state, name=name)
