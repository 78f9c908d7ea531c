"""The package's argument checks: whole numbers, real numbers, flags, seeds and choices.

Every public entry point that takes a number or a flag from a user checks it here, so that
every refusal reads the same way and every check refuses the same things:

* a bool is never a number (``True`` is not ``1`` here, nor ``1.0``), and a number is never
  a flag (``1`` is not ``True``);
* numpy scalars count as what they hold (``np.int64(3)`` is a whole number, ``np.bool_`` a flag);
* a real number must be finite unless the check says otherwise (no NaN, no infinity).

Each function returns the value as a plain Python ``int``, ``float`` or ``bool`` and raises
:class:`~carnac_env.errors.CarnacError` naming the value, what it is for and what was
expected. ``name`` is how the message names the value, e.g. ``"mcts option sims"`` or
``"seed"``. Nothing here imports more than numpy.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Iterable
from typing import Any, TypeVar

import numpy as np

from carnac_env.errors import CarnacError

__all__ = ["choice", "flag", "is_flag", "is_whole", "number", "seed", "whole"]

T = TypeVar("T")

#: The largest seed accepted anywhere (seeds are hashed or fed to numpy's SeedSequence).
MAX_SEED = 2**63 - 1


_FLAGS = (bool, np.bool_)
_INTEGERS = (int, np.integer)


def is_flag(value: Any) -> bool:
    """Whether ``value`` is a bool (Python's or numpy's)."""
    return isinstance(value, _FLAGS)


def is_whole(value: Any) -> bool:
    """Whether ``value`` is an integer that is not a bool (Python's or numpy's)."""
    # Plain ints first: these checks run in search loops (a playout's start is validated).
    return type(value) is int or (isinstance(value, _INTEGERS) and not isinstance(value, _FLAGS))


def _bound(value: float) -> str:
    """A bound as the message shows it: whole numbers in full (``1048576``, not ``1.04858e+06``)."""
    return str(value) if isinstance(value, int) else f"{value:g}"


def _range_text(low: float | None, high: float | None) -> str:
    if low is not None and high is not None:
        if isinstance(low, int) and isinstance(high, int):
            return f" in {low}..{high}"
        return f" in [{_bound(low)}, {_bound(high)}]"
    if low is not None:
        return f" >= {_bound(low)}"
    if high is not None:
        return f" <= {_bound(high)}"
    return ""


def whole(name: str, value: Any, low: int | None = None, high: int | None = None) -> int:
    """``value`` as an ``int`` in ``low..high`` (either bound may be None).

    Accepts Python and numpy integers and objects with ``__index__``; refuses bools, floats
    (even ``3.0``), strings and None.

    Raises:
        CarnacError: not a whole number, or out of range; the message names ``name``.
    """
    expected = f"a whole number{_range_text(low, high)}"
    if is_flag(value):
        raise CarnacError(f"{name}={value!r} is a bool; expected {expected}")
    try:
        result = operator.index(value)
    except TypeError:
        raise CarnacError(f"{name}={value!r}; expected {expected}") from None
    if (low is not None and result < low) or (high is not None and result > high):
        raise CarnacError(f"{name}={value!r}; expected {expected}")
    return int(result)


def number(
    name: str,
    value: Any,
    low: float | None = None,
    high: float | None = None,
    *,
    finite: bool = True,
    low_open: bool = False,
) -> float:
    """``value`` as a ``float`` in ``[low, high]`` (``(low, high]`` with ``low_open``).

    Accepts ints, floats and numpy numbers; refuses bools, strings, None and complex numbers.
    With ``finite`` (the default) NaN and the infinities are refused; NaN is refused always.

    Raises:
        CarnacError: not a real number, not finite, or out of range; the message names ``name``.
    """
    bound = _range_text(low, high)
    if low_open and low is not None:
        bound = f" > {low:g}" if high is None else f" in ({low:g}, {high:g}]"
    expected = f"a {'finite ' if finite else ''}number{bound}"
    if is_flag(value) or not isinstance(value, int | float | np.integer | np.floating):
        raise CarnacError(f"{name}={value!r}; expected {expected}")
    try:
        result = float(value)
    except OverflowError:  # an int beyond the floats
        raise CarnacError(f"{name}={value!r}; expected {expected}"[:500]) from None
    if math.isnan(result) or (finite and math.isinf(result)):
        raise CarnacError(f"{name}={value!r}; expected {expected}")
    if low is not None and (result < low or (low_open and result == low)):
        raise CarnacError(f"{name}={value!r}; expected {expected}")
    if high is not None and result > high:
        raise CarnacError(f"{name}={value!r}; expected {expected}")
    return result


def flag(name: str, value: Any) -> bool:
    """``value`` as a ``bool``: only ``True`` and ``False`` (Python's or numpy's).

    Raises:
        CarnacError: anything else (``1``, ``"yes"``, None); the message names ``name``.
    """
    if not is_flag(value):
        raise CarnacError(f"{name}={value!r}; expected True or False")
    return bool(value)


def seed(value: Any, name: str = "seed", *, optional: bool = False) -> int | None:
    """A seed: a whole number in ``0 .. 2**63 - 1``, or None when ``optional``.

    Raises:
        CarnacError: anything else (negative, too large, a bool, a float, a string).
    """
    if value is None and optional:
        return None
    try:
        return whole(name, value, 0, MAX_SEED)
    except CarnacError:
        none = "None or " if optional else ""
        raise CarnacError(f"{name}={value!r}; expected {none}a whole number in 0..2**63-1") from None


def choice(name: str, value: Any, options: Iterable[T]) -> T:
    """``value`` if it is one of ``options`` (compared with ``==``, bools never matching
    numbers), else a CarnacError listing them."""
    options = list(options)
    for option in options:
        if is_flag(option) == is_flag(value) and isinstance(value, str) == isinstance(option, str) and option == value:
            return option
    raise CarnacError(f"{name}={value!r}; expected one of {', '.join(repr(o) for o in options)}")
