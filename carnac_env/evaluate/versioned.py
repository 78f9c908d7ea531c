"""What panels and endgame sets share: versioned ``NAME-vVERSION.json`` files, written once and
never rewritten, each naming its format, its name and version, and the board and rules it holds.

:func:`check_identity` and :func:`check_board` read those common fields of a file's JSON object;
``bad`` turns a complaint into the caller's error, naming its file (``panel file PATH: ...``,
``endgame set PATH: ...``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from carnac_env.core.boards import Board, make_board
from carnac_env.errors import CarnacError

__all__ = ["check_board", "check_identity", "is_whole_from", "versioned_ids"]

_VERSIONED_ID = re.compile(r"^([a-z][a-z0-9_]*)-v([1-9][0-9]*)$")
_NAME = re.compile(r"[a-z][a-z0-9_]*")


def versioned_ids(folder: Path) -> list[str]:
    """The ``NAME-vVERSION`` ids of the ``.json`` files in ``folder`` (panels, endgame sets),
    sorted by name then version (so ``v10`` comes after ``v9``); other names are ignored."""
    found = []
    for path in folder.glob("*.json"):
        match = _VERSIONED_ID.match(path.stem)
        if match:
            found.append((match.group(1), int(match.group(2)), path.stem))
    return [stem for _, _, stem in sorted(found)]


def is_whole_from(value: Any, low: int) -> bool:
    """Whether ``value`` is an int (not a bool) of at least ``low``."""
    return not isinstance(value, bool) and isinstance(value, int) and value >= low


def check_identity(data: dict[str, Any], file_format: int, bad: Callable[[str], CarnacError]) -> tuple[str, int]:
    """The ``(name, version)`` of a versioned file whose ``format`` must be ``file_format``.

    Raises:
        CarnacError: from ``bad``, naming the field: another format, a name that is not
        lower-case letters, digits and ``_``, or a version that is not a whole number from 1.
    """
    if data.get("format") != file_format:
        raise bad(f"format must be {file_format}, got {data.get('format')!r}")
    name, version = data.get("name"), data.get("version")
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise bad(f"name must be lower-case letters, digits and _, got {name!r}")
    if not is_whole_from(version, 1):
        raise bad(f"version must be a whole number from 1, got {version!r}")
    return name, version


def check_board(data: dict[str, Any], bad: Callable[[str], CarnacError]) -> Board:
    """The :class:`~carnac_env.core.boards.Board` of a versioned file's ``board`` and ``rules``.

    Raises:
        CarnacError: from ``bad``: ``rules`` that is not an object, or a board and rules that
        :func:`~carnac_env.core.boards.make_board` refuses (its reason is quoted).
    """
    rules = data.get("rules")
    if not isinstance(rules, dict):
        raise bad(f"rules must be an object, got {rules!r}")
    try:
        return make_board(data.get("board"), **rules)
    except (CarnacError, TypeError) as err:
        raise bad(f"board {data.get('board')!r} with rules {rules!r} is not a board: {err}") from None
