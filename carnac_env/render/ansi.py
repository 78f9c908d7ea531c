"""The board as text, for terminals and logs (no GUI library involved).

Each square is one letter: ``R``/``W`` a standing megalith showing red/white on top,
``r``/``w`` a square of a lying megalith, ``.`` an empty square. The two squares of a lying
megalith are joined (``r-r`` across a row, ``|`` between rows). The megalith awaiting a
tilt decision stands in brackets, ``[R]``, and the empty squares a legal tilt would cover
carry an arrow-like mark for its direction (``^`` north, ``>`` east, ``v`` south, ``<`` west).
Coordinates match the move notation; north is the top. With ``color=True`` the letters are
also coloured with ANSI escape codes: red letters for Red, and for White black letters on a
white background, readable on dark and light terminals alike (lying megaliths dimmer).

Below the board, the status lines give the supply, each side's dolmens now and who leads
by the tie-break, and whose turn it is; they wrap at word boundaries to ``width`` columns.
"""

from __future__ import annotations

import os
import sys
import textwrap
import unicodedata
from typing import TextIO

from carnac_env.core.actions import decode
from carnac_env.core.boards import DIRECTION_NAMES
from carnac_env.core.game import LYING, OVER, PLAYER_NAMES, RESPOND, STANDING, GameState
from carnac_env.core.notation import COLOUR_LETTERS, DIRECTION_LETTERS, action_to_text, column_name, square_name
from carnac_env.render.score import result_line, score_line

#: The width status lines wrap at, unless told otherwise.
STATUS_WIDTH = 78

_COLOUR_CODES = {1: "\x1b[1;31m", 2: "\x1b[1;30;107m"}
_DIM_CODES = {1: "\x1b[31m", 2: "\x1b[30;47m"}
_RESET = "\x1b[0m"
#: Marks on the empty squares a legal tilt would cover, by direction (N, E, S, W).
PREVIEW_MARKS = "^>v<"


def supports_color(stream: TextIO | None = None) -> bool:
    """Whether ``stream`` (stdout by default) is a terminal that takes ANSI colours
    (honouring the ``NO_COLOR`` and ``FORCE_COLOR`` conventions)."""
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    stream = sys.stdout if stream is None else stream
    return bool(getattr(stream, "isatty", lambda: False)()) and os.environ.get("TERM") != "dumb"


def render_text(
    state: GameState,
    color: bool = False,
    agent_names: tuple[str, str] | None = None,
    width: int = STATUS_WIDTH,
) -> str:
    """The board and a status block as text; see the module docstring for the symbols.

    Args:
        state: the position to draw.
        color: add ANSI colour codes around the letters.
        agent_names: optional names for players 0 and 1 in the status lines.
        width: the status lines wrap at word boundaries to this many columns.
    """
    board = state.board
    rows, cols = board.rows, board.cols
    names = agent_names or ("player_0", "player_1")
    previews: dict[int, str] = {}
    for direction, (first, second, _) in state.tilt_targets().items():
        previews[first] = previews[second] = PREVIEW_MARKS[direction]
    east_joins = set()
    south_joins = set()
    for first, second in state.lying:
        a, b = min(first, second), max(first, second)
        (east_joins if b == a + 1 and a // cols == b // cols else south_joins).add(a)

    def cell(square: int) -> str:
        colour, kind = state.cells[square], state.kinds[square]
        if kind == STANDING:
            text = COLOUR_LETTERS[colour]
        elif kind == LYING:
            text = COLOUR_LETTERS[colour].lower()
        else:
            text = previews.get(square, ".")
        if color and kind:
            text = (_COLOUR_CODES if kind == STANDING else _DIM_CODES)[colour] + text + _RESET
        return text

    label_width = len(str(rows))
    line_width = label_width + 3 * cols + 2

    def x_of(c: int) -> int:
        return label_width + 2 + 3 * c

    header = [" "] * line_width
    for c in range(cols):
        for i, ch in enumerate(column_name(c)):
            header[x_of(c) + i] = ch
    lines = ["".join(header).rstrip()]
    for r in range(rows):
        line = [" "] * line_width
        line[:label_width] = list(f"{r + 1:>{label_width}}")
        for c in range(cols):
            square = r * cols + c
            x = x_of(c)
            line[x] = cell(square)
            if square == state.pending:
                line[x - 1], line[x + 1] = "[", "]"
            if square in east_joins:
                line[x + 1] = line[x + 2] = "-"
        lines.append("".join(line).rstrip())
        if r < rows - 1 and any(r * cols + c in south_joins for c in range(cols)):
            marks = [" "] * line_width
            for c in range(cols):
                if r * cols + c in south_joins:
                    marks[x_of(c)] = "|"
            lines.append("".join(marks).rstrip())
    lines.append("")
    lines.extend(status_lines(state, names, width=width))
    return "\n".join(lines)


def status_lines(
    state: GameState, names: tuple[str, str] = ("player_0", "player_1"), *, width: int | None = STATUS_WIDTH
) -> list[str]:
    """Supply, each side's dolmens now and who leads, whose turn it is and what they must do
    (or the result and why once it is over), each wrapped at word boundaries to ``width``
    columns (continuation lines indented; ``None``: no wrapping)."""
    board = state.board
    lines = [f"Supply: {state.supply} of {board.megaliths} megaliths left"]
    if state.phase == OVER:
        result = state.result()
        for player in (0, 1):
            sizes = list(result.dolmens[player])
            noun = "dolmen" if len(sizes) == 1 else "dolmens"
            who = f"{PLAYER_NAMES[player]} ({names[player]})"
            lines.append(f"{who}: {len(sizes)} {noun} {sizes}, BGA score {result.scores[player]}")
        lines.append("Game over: " + result_line(result, names))
        return _wrap(lines, width)
    lines.append("Dolmens now: " + score_line(state))
    who = f"{PLAYER_NAMES[state.to_act]} ({names[state.to_act]})"
    if state.phase == RESPOND:
        options = []
        for direction, (first, second, colour) in state.tilt_targets().items():
            options.append(
                f"tilt {DIRECTION_LETTERS[direction]} ({DIRECTION_NAMES[direction]}: "
                f"{COLOUR_LETTERS[colour]} on {square_name(board, first)},{square_name(board, second)})"
            )
        lines.append(
            f"{who} to tilt or decline the megalith on {square_name(board, state.pending)}: "
            + "; ".join([*options, "decline"])
        )
    else:
        lines.append(f"{who} to place a megalith on an empty square")
    return _wrap(lines, width)


def _wrap(lines: list[str], width: int | None) -> list[str]:
    if width is None:
        return lines
    out: list[str] = []
    for line in lines:
        out.extend(textwrap.wrap(line, width=max(20, width), subsequent_indent="  ", break_long_words=False) or [""])
    return out


def refusal(state: GameState, action: int) -> str | None:
    """Why the player to act may not play ``action``, in their words (``"Red cannot tilt
    south: a megalith on c4 tilted south would leave the board"``), or ``None`` if legal."""
    reason = state.why_illegal(action)
    if reason is None:
        return None
    who = PLAYER_NAMES[state.to_act]
    board = state.board
    if not (isinstance(action, int) and 0 <= action < board.num_actions):
        return f"{who} cannot play that: {reason}"
    move = decode(board, action)
    if move.kind == "place":
        verb = f"place {action_to_text(board, action, state.to_act)}"
    elif move.kind == "tilt":
        verb = f"tilt {DIRECTION_NAMES[move.direction]}"
    else:
        verb = "decline"
    return f"{who} cannot {verb}: {reason}"


def cannot_tilt_note(before: GameState, action: int, after: GameState) -> str | None:
    """A line for a placement that leaves nothing to decide (``"The megalith on c4 cannot be
    tilted (no room on any side): White places next."``), else ``None``."""
    if before.phase == OVER or after.phase != before.phase or decode(before.board, action).kind != "place":
        return None
    square = square_name(before.board, action >> 2)
    return f"The megalith on {square} cannot be tilted (no room on any side): {PLAYER_NAMES[after.to_act]} places next."


def printable(text: str) -> str:
    """``text`` with control characters (escape sequences included) written as ``\\xNN``, and
    invisible format characters (right-to-left overrides such as U+202E, zero-width spaces
    and joiners, line separators) as ``\\uNNNN``, so text read from a file can neither drive
    the terminal nor reorder or hide what is shown around it."""
    return "".join(_escape(ch) if unicodedata.category(ch) in _HIDDEN else ch for ch in text)


#: Unicode categories escaped by :func:`printable`: controls, format characters (bidi
#: overrides and isolates, zero-width characters, the soft hyphen), line and paragraph
#: separators, surrogates and unassigned code points.
_HIDDEN = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Cn"})


def _escape(ch: str) -> str:
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"
