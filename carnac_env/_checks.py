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
import re
from collections.abc import Iterable
from typing import Any, TypeVar

import numpy as np

from carnac_env.errors import CarnacError

__all__ = [
    "choice",
    "flag",
    "is_flag",
    "is_whole",
    "json_constant",
    "number",
    "number_text",
    "seed",
    "shown",
    "whole",
    "whole_text",
]

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


def shown(value: Any) -> str:
    """``repr(value)`` for a message, short: a whole number of more than 40 digits is said by its
    size (``an integer of 401 digits``; Python refuses to print one of more than 4300), and any
    other text longer than 200 characters is cut, with its length."""
    if is_whole(value) and abs(int(value)) >= 10**40:
        digits = len(str(abs(int(value)))) if abs(int(value)).bit_length() < 14000 else None
        size = f"{digits} digits" if digits else f"{abs(int(value)).bit_length()} bits"
        return f"<{'a negative ' if value < 0 else 'an '}integer of {size}>"
    text = repr(value)
    return text if len(text) <= 200 else f"{text[:80]}... ({len(text)} characters)"


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
        raise CarnacError(f"{name}={shown(value)}; expected {expected}") from None
    if (low is not None and result < low) or (high is not None and result > high):
        raise CarnacError(f"{name}={shown(value)}; expected {expected}")
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
        raise CarnacError(f"{name}={shown(value)}; expected {expected}")
    try:
        result = float(value)
    except OverflowError:  # an int beyond the floats
        raise CarnacError(f"{name}={shown(value)}; expected {expected}") from None
    if math.isnan(result) or (finite and math.isinf(result)):
        raise CarnacError(f"{name}={value!r}; expected {expected}")
    if low is not None and (result < low or (low_open and result == low)):
        raise CarnacError(f"{name}={value!r}; expected {expected}")
    if high is not None and result > high:
        raise CarnacError(f"{name}={value!r}; expected {expected}")
    return result


#: What :func:`whole_text` reads: an optional sign, then ASCII digits (underscores between them,
#: as Python writes numbers). Python's ``int()`` and ``str.isdigit`` also take other scripts'
#: digits (``"٣"`` is 3); a number in a spec, a setting or a file is never read from those.
_WHOLE_TEXT = re.compile(r"[+-]?[0-9]+(?:_[0-9]+)*")
#: What :func:`number_text` reads: a decimal number in ASCII, with an optional exponent
#: (``inf`` and ``nan`` are read, to be refused by name, where the check asks for a finite one).
_NUMBER_TEXT = re.compile(
    r"[+-]?(?:(?:[0-9]+(?:_[0-9]+)*(?:\.(?:[0-9]+(?:_[0-9]+)*)?)?|\.[0-9]+(?:_[0-9]+)*)(?:[eE][+-]?[0-9]+)?"
    r"|inf(?:inity)?|nan)",
    re.IGNORECASE,
)
#: The longest number text read (a longer one is refused before it is converted).
MAX_NUMBER_TEXT = 100


def whole_text(name: str, text: str, low: int | None = None, high: int | None = None) -> int:
    """The whole number written in ``text``: ASCII digits only, with an optional sign
    (surrounding spaces are ignored); then :func:`whole`'s range check.

    Raises:
        CarnacError: text that is not such a number (another script's digits, a fraction,
            more than :data:`MAX_NUMBER_TEXT` characters), or a number out of range; the
            message names ``name`` and the text.
    """
    expected = f"a whole number{_range_text(low, high)} in ASCII digits"
    stripped = text.strip() if isinstance(text, str) else text
    if not isinstance(stripped, str) or len(stripped) > MAX_NUMBER_TEXT or not _WHOLE_TEXT.fullmatch(stripped):
        raise CarnacError(f"{name}={shown(text)}; expected {expected}")
    return whole(name, int(stripped), low, high)


def number_text(
    name: str,
    text: str,
    low: float | None = None,
    high: float | None = None,
    *,
    finite: bool = True,
    low_open: bool = False,
) -> float:
    """The real number written in ``text``: ASCII digits, an optional sign, point and exponent
    (surrounding spaces are ignored); then :func:`number`'s checks (finite by default).

    Raises:
        CarnacError: text that is not such a number (another script's digits, more than
            :data:`MAX_NUMBER_TEXT` characters), or a number refused by :func:`number`.
    """
    stripped = text.strip() if isinstance(text, str) else text
    if not isinstance(stripped, str) or len(stripped) > MAX_NUMBER_TEXT or not _NUMBER_TEXT.fullmatch(stripped):
        raise CarnacError(f"{name}={shown(text)}; expected a {'finite ' if finite else ''}number in ASCII digits")
    try:
        value = float(stripped)
    except ValueError:  # pragma: no cover - the pattern admits only what float reads
        raise CarnacError(f"{name}={shown(text)}; expected a number in ASCII digits") from None
    return number(name, value, low, high, finite=finite, low_open=low_open)


def json_constant(word: str) -> Any:
    """``parse_constant`` for :func:`json.loads` on a file the package reads: ``NaN``,
    ``Infinity`` and ``-Infinity`` (which Python's json reads, though JSON has no such
    numbers) are refused. It raises ``ValueError``, which the reader turns into its error naming
    the file: ``json.loads(text, parse_constant=_checks.json_constant)``."""
    raise ValueError(f"{word} is not a JSON number (NaN and infinities are refused)")


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
        raise CarnacError(f"{name}={shown(value)}; expected {none}a whole number in 0..2**63-1") from None


def choice(name: str, value: Any, options: Iterable[T]) -> T:
    """``value`` if it is one of ``options`` (compared with ``==``, bools never matching
    numbers), else a CarnacError listing them."""
    options = list(options)
    for option in options:
        if is_flag(option) == is_flag(value) and isinstance(value, str) == isinstance(option, str) and option == value:
            return option
    raise CarnacError(f"{name}={shown(value)}; expected one of {', '.join(repr(o) for o in options)}")
