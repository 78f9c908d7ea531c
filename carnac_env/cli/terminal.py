"""What the terminal commands (``carnac play``, ``carnac replay``) share."""

from __future__ import annotations

from typing import TextIO

__all__ = ["SEAT_NAMES", "read_line"]

SEAT_NAMES = ("Red", "White")


def read_line(prompt: str, stdin: TextIO) -> str | None:
    """Print ``prompt`` and read one line from ``stdin``, stripped; ``None`` at the end of input."""
    print(prompt, end="", flush=True)
    line = stdin.readline()
    if not line:
        print()
        return None
    return line.strip()
