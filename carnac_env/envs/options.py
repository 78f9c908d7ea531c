"""What the environments' constructors and ``reset`` accept: options, seeds, moves and actions.

The option names and choices of the Gymnasium envs are declared here once: the single env
(:mod:`carnac_env.envs.gym`) takes :data:`ENV_OPTIONS`, the vector env
(:mod:`carnac_env.envs.vector`) the same and its own (:data:`VECTOR_OPTIONS`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from carnac_env import _checks
from carnac_env.core.boards import RULE_OPTIONS
from carnac_env.core.record import GameRecord
from carnac_env.errors import CarnacError, UnknownOptionError

__all__ = [
    "ENV_OPTIONS",
    "ILLEGAL_ACTION_MODES",
    "SEATS",
    "VECTOR_OPTIONS",
    "as_action",
    "check_options",
    "check_seat",
    "check_seed",
    "moves_option",
]

#: The learner's seats: 0 (Red, moves first), 1 (White), or ``"random"`` (drawn for every game).
SEATS = (0, 1, "random")
#: What an illegal learner action does: ``"lose"`` (the episode ends with -1) or ``"raise"``.
ILLEGAL_ACTION_MODES = ("lose", "raise")
#: The options of the single-agent Gymnasium env (besides the rules options).
ENV_OPTIONS = (
    "board",
    "opponent",
    "seat",
    "render_mode",
    "illegal_action",
    "observation",
    "image_scale",
    "mask_in_observation",
)
#: The vector env's options: the single env's and its own.
VECTOR_OPTIONS = ("num_envs", *ENV_OPTIONS, "max_episode_steps", "autoreset_mode")


def check_seed(seed: Any) -> int | None:
    """``seed`` as an int, or ``None``: what ``reset(seed=...)`` accepts.

    Raises:
        CarnacError: not ``None`` and not a whole number in 0..2**63-1 (bools are refused).
    """
    return _checks.seed(seed, optional=True)


def check_seat(seat: Any) -> int | str:
    """``seat`` if it is one of :data:`SEATS`.

    Raises:
        CarnacError: any other value, naming the seats.
    """
    return _checks.choice("seat", seat, SEATS)


def moves_option(options: dict[str, Any] | None) -> Any:
    """The ``"moves"`` reset option, checked to be a list of moves or a GameRecord (or ``None``).

    Raises:
        CarnacError: ``options`` is not a dict, or ``"moves"`` is a string, a number or anything
            else that is not a list or tuple of moves (action numbers or notation) or a GameRecord.
    """
    if options is None:
        return None
    if not isinstance(options, dict):
        raise CarnacError(f"options={options!r}; expected a dict such as {{'moves': ['c4 Rns', 'tilt N']}} or None")
    moves = options.get("moves")
    if moves is None or isinstance(moves, GameRecord):
        return moves
    if not isinstance(moves, list | tuple):
        raise CarnacError(
            f"reset option 'moves' is {moves!r}; expected a list of moves (action numbers or notation "
            "such as ['c4 Rns', 'tilt N']) or a GameRecord"
        )
    return moves


def check_options(rules: dict[str, Any], accepted: tuple[str, ...], who: str) -> None:
    """Refuse keyword arguments that are neither in ``accepted`` nor rules options.

    Raises:
        UnknownOptionError: (a TypeError and a CarnacError) naming them and every accepted option.
    """
    unknown = sorted(set(rules) - set(RULE_OPTIONS))
    if unknown:
        # Python's own wording, which code that retries without an optional keyword looks for.
        what = "an unexpected keyword argument" if len(unknown) == 1 else "unexpected keyword arguments"
        raise UnknownOptionError(
            f"{who} got {what} {', '.join(map(repr, unknown))}; expected any of "
            f"{', '.join(accepted)}, or the rules options {', '.join(RULE_OPTIONS)}"
        )


def as_action(action: Any) -> Any:
    """A Python or numpy integer (or a 0-d integer array) as a Python int; anything else
    unchanged (then refused by the rules, which say why)."""
    if type(action) is int:
        return action
    if isinstance(action, np.ndarray) and action.shape == () and np.issubdtype(action.dtype, np.integer):
        return int(action)
    return int(action) if _checks.is_whole(action) else action
