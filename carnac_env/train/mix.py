"""The boards a run trains on: one board, or a weighted mix of boards for one general model.

A run on ``--board general`` (:data:`GENERAL`) trains one rules-conditioned network on a mix
(:data:`DEFAULT_MIX`, or ``--mix``): every built-in board with a weight, and ``custom`` for
random custom boards (:func:`random_board`). The weights share out each iteration's games in
groups of ``games_per_board``, in a fixed, smooth order (:meth:`BoardMix.schedule`: the board
furthest behind its share plays next, so every iteration's mix is close to the weights and
the run's sequence depends on nothing random but the custom boards). The mix is written like
``small:1,large:2,custom:0.5``.

Custom boards are drawn within :data:`CUSTOM_LIMITS`, the range of the built-in boards with
some room around it: the general model is trained there, and plays any board the core allows
(it is fully convolutional), but is only measured on the built-in boards.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from carnac_env.core.boards import BOARDS, MAX_MEGALITHS, Board, make_board
from carnac_env.errors import CarnacError

__all__ = [
    "CUSTOM",
    "CUSTOM_LIMITS",
    "DEFAULT_MIX",
    "GENERAL",
    "BoardMix",
    "largest_custom_board",
    "parse_mix",
    "random_board",
]

#: The name of a run on a mix of boards (``carnac train --board general``).
GENERAL = "general"
#: The mix's name for random custom boards.
CUSTOM = "custom"
#: The mix of a general run, by games: the bigger boards, where the models are weakest and each
#: game is longer, weigh more; custom boards keep the network honest between the built-in sizes.
DEFAULT_MIX = "petit_menec:1,small:1,medium:1,kerlescan:1.5,large:2,kermario:1.5,le_menec:2,custom:1"
#: The range random custom boards are drawn from: ``rows`` and ``cols`` (each, with
#: ``rows <= cols`` drawn and then transposed half the time), ``fill`` (megaliths per square)
#: and ``min_dolmen`` (3 with probability ``min_dolmen_three``, else 4 or 5).
CUSTOM_LIMITS = {"rows": (4, 12), "cols": (4, 20), "fill": (0.2, 0.6), "min_dolmen": (3, 5)}


def parse_mix(text: str) -> dict[str, float]:
    """``"small:1,large:2,custom:0.5"`` as ``{"small": 1.0, "large": 2.0, "custom": 0.5}``.

    Raises:
        CarnacError: an unknown board, a weight that is not a positive finite number, a board
            named twice, or an empty mix.
    """
    if not isinstance(text, str) or not text.strip():
        raise CarnacError(f"board mix {text!r} is empty; expected NAME:WEIGHT pairs such as {DEFAULT_MIX!r}")
    mix: dict[str, float] = {}
    for part in text.split(","):
        name, sep, weight = part.strip().partition(":")
        if name not in BOARDS and name != CUSTOM:
            raise CarnacError(
                f"board mix {text!r}: unknown board {name!r}; expected some of {', '.join(BOARDS)} or {CUSTOM}"
            )
        if name in mix:
            raise CarnacError(f"board mix {text!r}: {name!r} is named twice")
        try:
            value = float(weight) if sep else 1.0
        except ValueError:
            value = float("nan")
        if not np.isfinite(value) or value <= 0 or value > 1000:
            raise CarnacError(f"board mix {text!r}: weight {weight!r} of {name!r}; expected a number in (0, 1000]")
        mix[name] = value
    return mix


def largest_custom_board() -> Board:
    """The largest board :func:`random_board` can draw (the most rows and columns of
    :data:`CUSTOM_LIMITS`, the most megaliths it places): what a run's memory is sized for."""
    rows, cols = CUSTOM_LIMITS["rows"][1], CUSTOM_LIMITS["cols"][1]
    megaliths = min(round(rows * cols * CUSTOM_LIMITS["fill"][1]), MAX_MEGALITHS)
    return make_board("custom", rows=rows, cols=cols, megaliths=megaliths, min_dolmen=3)


def random_board(rng: np.random.Generator) -> Board:
    """A random custom board within :data:`CUSTOM_LIMITS` (drawn with ``rng``)."""
    low_r, high_r = CUSTOM_LIMITS["rows"]
    low_c, high_c = CUSTOM_LIMITS["cols"]
    rows = int(rng.integers(low_r, high_r + 1))
    cols = int(rng.integers(max(low_c, rows), high_c + 1))
    if rng.random() < 0.5 and cols <= high_r:  # a tall board, where it stays within the limits
        rows, cols = cols, rows
    low_f, high_f = CUSTOM_LIMITS["fill"]
    megaliths = int(np.clip(round(rows * cols * rng.uniform(low_f, high_f)), 4, MAX_MEGALITHS))
    min_dolmen = 3 if rng.random() < 0.6 else int(rng.integers(4, CUSTOM_LIMITS["min_dolmen"][1] + 1))
    last_tilt = bool(rng.random() < 0.75)
    return make_board("custom", rows=rows, cols=cols, megaliths=megaliths, min_dolmen=min_dolmen, last_tilt=last_tilt)


@dataclass(frozen=True)
class BoardMix:
    """A run's boards and their weights (by games).

    Attributes:
        weights: board name (or :data:`CUSTOM`) -> weight, in the mix's order.
    """

    weights: dict[str, float]

    @classmethod
    def of(cls, board: str, mix: str = "") -> BoardMix:
        """The mix of a run on ``board``: :data:`GENERAL` takes ``mix`` (default
        :data:`DEFAULT_MIX`); any other board trains alone (``mix`` must then be empty).

        Raises:
            CarnacError: a bad mix, or a mix given for a single board.
        """
        if board == GENERAL:
            return cls(parse_mix(mix or DEFAULT_MIX))
        if mix:
            raise CarnacError(f"a board mix ({mix!r}) is for --board {GENERAL}, not for a run on {board!r}")
        make_board(board)
        return cls({board: 1.0})

    @property
    def general(self) -> bool:
        """Whether the run trains on more than one board (or on custom ones)."""
        return len(self.weights) > 1 or CUSTOM in self.weights

    @property
    def builtin(self) -> list[str]:
        """The built-in boards of the mix, in its order."""
        return [name for name in self.weights if name != CUSTOM]

    def schedule(self, start: int, count: int) -> list[str]:
        """The names of groups ``start .. start + count - 1`` of the run's sequence: group ``g``
        goes to the board whose games most lag its share after groups ``0 .. g - 1`` (ties: the
        mix's order)."""
        names = list(self.weights)
        share = np.asarray([self.weights[n] for n in names]) / sum(self.weights.values())
        given = np.zeros(len(names))
        out = []
        for g in range(start + count):
            pick = int(np.argmax((g + 1) * share - given))
            given[pick] += 1
            if g >= start:
                out.append(names[pick])
        return out

    def describe(self) -> dict[str, object]:
        """The mix as a model header's ``boards`` field."""
        return {
            "mix": dict(self.weights),
            "custom_limits": {k: list(v) for k, v in CUSTOM_LIMITS.items()} if CUSTOM in self.weights else None,
        }
