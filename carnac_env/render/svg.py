"""The board as SVG text: for Jupyter's inline display and the web replays (no library needed).

The picture follows :mod:`carnac_env.render.image` (the same style,
:mod:`carnac_env.render.style`; north at the top, coordinates as in the move notation):
standing megaliths as raised squares, lying ones as one slab across their two squares, the
megalith awaiting a decision ringed in gold with its four faces, the legal tilts as pale
dashed outlines with an arrow, the last move's squares marked with a blue dot, and the dolmens
outlined (Red's in gold, White's in blue): at the end, or on every position with
``dolmens=True`` (the web replays). Under the board: whose turn it is (or the result), the
supply, and each side's dolmens now with its Board Game Arena score and who leads (or why the
winner won).

An SVG is split in two layers so a replay page can draw the board once and swap only the
pieces: :func:`board_layer` (squares and coordinates) and :func:`pieces_layer` (everything
that changes). :func:`state_svg` puts them together.

>>> from carnac_env.core.game import GameState
>>> svg = state_svg(GameState("small"))
>>> svg.startswith("<svg")
True
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from html import escape

from carnac_env.core.boards import Board
from carnac_env.core.game import OVER, STANDING, GameState
from carnac_env.core.notation import column_name
from carnac_env.core.scoring import dolmens
from carnac_env.render.score import final_dolmens_line, score_line, tie_break_reason, turn_line
from carnac_env.render.style import (
    BACKGROUND,
    BLOCK_EDGE,
    BLOCK_OUTER,
    BLOCK_TOP,
    BOARD_RIM,
    DOLMEN_LINES,
    FACE_COLOURS,
    FACE_EDGES,
    FACE_SHADES,
    MARK_COLOUR,
    PENDING_RING,
    SOFT_TEXT,
    SQUARE_COLOUR,
    SQUARE_LINE,
    SVG_FONT,
    TEXT_COLOUR,
    hex_colour,
    shade,
)

_FONT = SVG_FONT
_rgb = hex_colour
#: Lines of text under the board: whose turn, the supply (or the final dolmens), and two for
#: the dolmens now (or why the winner won), with room for one more when a line wraps.
STATUS_LINES = 5


@dataclass(frozen=True)
class SvgLayout:
    """Pixel geometry of an SVG picture of ``board`` with squares of ``cell`` pixels."""

    board: Board
    cell: int = 40

    @property
    def left(self) -> int:
        return round(self.cell * 0.6)

    top = left

    @property
    def width(self) -> int:
        return max(self.left + self.board.cols * self.cell + self.cell // 3, 430)

    @property
    def status_top(self) -> int:
        return self.top + self.board.rows * self.cell + self.cell // 4

    @property
    def height(self) -> int:
        return self.status_top + 22 * STATUS_LINES + 12

    @property
    def status_chars(self) -> int:
        """About how many characters of the status text fit on one line."""
        return max(24, (self.width - self.left - 8) // 8)

    def origin(self, square: int) -> tuple[int, int]:
        r, c = divmod(square, self.board.cols)
        return self.left + c * self.cell, self.top + r * self.cell


def board_layer(layout: SvgLayout) -> str:
    """The parts that never change: background, board, squares and coordinates."""
    board, cell = layout.board, layout.cell
    w, h = board.cols * cell, board.rows * cell
    out = [
        f'<rect width="{layout.width}" height="{layout.height}" fill="{_rgb(BACKGROUND)}"/>',
        f'<rect x="{layout.left - 3}" y="{layout.top - 3}" width="{w + 6}" height="{h + 6}" fill="{_rgb(BOARD_RIM)}"/>',
        f'<rect x="{layout.left}" y="{layout.top}" width="{w}" height="{h}" fill="{_rgb(SQUARE_LINE)}"/>',
    ]
    for square in range(board.squares):
        x, y = layout.origin(square)
        side = cell - 2
        out.append(f'<rect x="{x + 1}" y="{y + 1}" width="{side}" height="{side}" fill="{_rgb(SQUARE_COLOUR)}"/>')
    size = round(cell * 0.3)
    style = f'font-size="{size}" fill="{_rgb(SOFT_TEXT)}" style="{_FONT}" text-anchor="middle"'
    for c in range(board.cols):
        x = layout.left + c * cell + cell // 2
        out.append(f'<text x="{x}" y="{layout.top - 7}" {style}>{column_name(c)}</text>')
    for r in range(board.rows):
        y = layout.top + r * cell + cell // 2 + size // 3
        out.append(f'<text x="{layout.left // 2}" y="{y}" {style}>{r + 1}</text>')
    return "".join(out)


def pieces_layer(
    state: GameState,
    layout: SvgLayout,
    *,
    marks: Iterable[int] = (),
    names: tuple[str, str] | None = None,
    outlines: bool | None = None,
    status: bool = True,
) -> str:
    """The parts that change with the position: megaliths, previews, dolmens, marks and (with
    ``status``) the text under the board. The dolmens are outlined once the game is over, or
    on every position with ``outlines=True``."""
    out: list[str] = []
    show = outlines if outlines is not None else state.phase == OVER
    found = dolmens(state.board, state.cells) if show else []
    _wash(out, layout, found)
    _lying(out, layout, state)
    _standing(out, layout, state)
    for direction, (first, second, colour) in state.tilt_targets().items():
        _preview(out, layout, direction, first, second, colour)
    _outlines(out, layout, found)
    r = max(2, layout.cell // 12)
    for square in marks:
        x, y = layout.origin(square)
        out.append(
            f'<circle class="mark" cx="{x + layout.cell - 2 * r}" cy="{y + 2 * r}" r="{r}" fill="{_rgb(MARK_COLOUR)}"/>'
        )
    if status:
        _status(out, layout, state, names)
    return "".join(out)


def state_svg(
    state: GameState,
    *,
    cell: int = 40,
    marks: Iterable[int] = (),
    names: tuple[str, str] | None = None,
    outlines: bool | None = None,
) -> str:
    """The whole picture of ``state`` as one standalone ``<svg>`` element (``outlines`` as in
    :func:`pieces_layer`)."""
    layout = SvgLayout(state.board, cell)
    pieces = pieces_layer(state, layout, marks=marks, names=names, outlines=outlines)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{layout.width}" height="{layout.height}" '
        f'viewBox="0 0 {layout.width} {layout.height}">'
        f"{board_layer(layout)}<g>{pieces}</g></svg>"
    )


def states_svg(states: Sequence[GameState], *, scale: float = 1.0, cell: int = 24) -> str:
    """Several positions side by side in one ``<svg>`` (a near-square grid), each board and its
    pieces as :func:`state_svg` draws them, without the status lines: the picture of the JAX
    engine's states (``carnac_env.jax.State.to_svg``), one per lane of a batch."""
    if not states:
        return '<svg xmlns="http://www.w3.org/2000/svg" width="0" height="0"/>'
    per_row = math.ceil(math.sqrt(len(states)))
    cell = max(8, round(cell * scale))
    layouts = [SvgLayout(state.board, cell) for state in states]
    width = max(layout.left + layout.board.cols * cell + cell // 3 for layout in layouts)
    height = max(layout.status_top for layout in layouts)
    total_w, total_h = per_row * width, math.ceil(len(states) / per_row) * height
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{total_w}" height="{total_h}" '
        f'viewBox="0 0 {total_w} {total_h}">',
        f'<rect width="{total_w}" height="{total_h}" fill="{_rgb(BACKGROUND)}"/>',
    ]
    for index, (state, layout) in enumerate(zip(states, layouts)):
        x, y = (index % per_row) * width, (index // per_row) * height
        parts.append(f'<svg x="{x}" y="{y}" width="{width}" height="{height}">')
        parts.append(board_layer(layout) + pieces_layer(state, layout, status=False) + "</svg>")
    parts.append("</svg>")
    return "".join(parts)


# --------------------------------------------------------------------------- the pieces
def _wash(out: list[str], layout: SvgLayout, found: list[tuple[int, list[int]]]) -> None:
    cell = layout.cell
    for colour, group in found:
        for square in group:
            x, y = layout.origin(square)
            out.append(
                f'<rect x="{x + 1}" y="{y + 1}" width="{cell - 2}" height="{cell - 2}" '
                f'fill="{_rgb(FACE_COLOURS[colour])}" fill-opacity="0.4"/>'
            )


def _lying(out: list[str], layout: SvgLayout, state: GameState) -> None:
    cell, cols = layout.cell, state.board.cols
    inset = round(cell * 0.13)
    for first, second in state.lying:
        a, b = sorted((first, second))
        horizontal = b // cols == a // cols
        x, y = layout.origin(a)
        w = (2 * cell if horizontal else cell) - 2 * inset
        h = (cell if horizontal else 2 * cell) - 2 * inset
        colour = state.cells[a]
        out.append(
            f'<rect class="lying" x="{x + inset}" y="{y + inset}" width="{w}" height="{h}" rx="{cell // 8}" '
            f'fill="{_rgb(FACE_COLOURS[colour])}" stroke="{_rgb(FACE_EDGES[colour])}" stroke-width="2"/>'
        )


def _standing(out: list[str], layout: SvgLayout, state: GameState) -> None:
    cell = layout.cell
    half = round(cell * 0.31)
    for square in range(state.board.squares):
        if state.kinds[square] != STANDING:
            continue
        x, y = layout.origin(square)
        cx, cy = x + cell // 2, y + cell // 2
        colour = state.cells[square]
        if square == state.pending:
            _block(out, cx, cy, cell, colour, *state.pending_colours)
            continue
        out.append(
            f'<rect class="standing" x="{cx - half}" y="{cy - half}" width="{2 * half}" height="{2 * half}" '
            f'rx="{cell // 16}" fill="{_rgb(FACE_COLOURS[colour])}" stroke="{_rgb(FACE_EDGES[colour])}" '
            'stroke-width="2"/>'
        )


def _block(out: list[str], cx: int, cy: int, cell: int, top: int, ns: int, ew: int) -> None:
    """The megalith awaiting a decision: a gold ring, its four long faces and its top end."""
    o, i = round(cell * BLOCK_OUTER), round(cell * BLOCK_TOP)
    pad = round(cell * 0.47)
    out.append(
        f'<rect x="{cx - pad}" y="{cy - pad}" width="{2 * pad}" height="{2 * pad}" rx="{cell // 10}" '
        f'fill="none" stroke="{_rgb(PENDING_RING)}" stroke-width="{max(2, cell // 16)}"/>'
    )
    faces = (
        ([(-o, -o), (o, -o), (i, -i), (-i, -i)], ns, FACE_SHADES["N"]),
        ([(-o, o), (o, o), (i, i), (-i, i)], ns, FACE_SHADES["S"]),
        ([(-o, -o), (-i, -i), (-i, i), (-o, o)], ew, FACE_SHADES["W"]),
        ([(o, -o), (i, -i), (i, i), (o, o)], ew, FACE_SHADES["E"]),
    )
    edge = _rgb(BLOCK_EDGE)
    for points, colour, factor in faces:
        text = " ".join(f"{cx + dx},{cy + dy}" for dx, dy in points)
        out.append(f'<polygon points="{text}" fill="{_rgb(shade(FACE_COLOURS[colour], factor))}" stroke="{edge}"/>')
    out.append(
        f'<rect class="pending" x="{cx - i}" y="{cy - i}" width="{2 * i}" height="{2 * i}" '
        f'fill="{_rgb(FACE_COLOURS[top])}" stroke="{edge}" stroke-width="2"/>'
    )


def _preview(out: list[str], layout: SvgLayout, direction: int, first: int, second: int, colour: int) -> None:
    """A tilt's landing squares: a pale wash, a dashed border and an arrow (never a slab)."""
    cell, cols = layout.cell, layout.board.cols
    a, b = sorted((first, second))
    horizontal = b // cols == a // cols
    x, y = layout.origin(a)
    inset = round(cell * 0.16)
    w = (2 * cell if horizontal else cell) - 2 * inset
    h = (cell if horizontal else 2 * cell) - 2 * inset
    edge = _rgb(FACE_EDGES[colour])
    out.append(
        f'<rect class="preview" x="{x + inset}" y="{y + inset}" width="{w}" height="{h}" rx="{cell // 8}" '
        f'fill="{_rgb(FACE_COLOURS[colour])}" fill-opacity="0.4" stroke="{edge}" stroke-width="2" '
        f'stroke-dasharray="{cell // 9} {cell // 9}"/>'
    )
    cx, cy = x + inset + w // 2, y + inset + h // 2
    dx, dy = ((0, -1), (1, 0), (0, 1), (-1, 0))[direction]
    k = round(cell * 0.1)
    corners = ((-dx * k + dy * k, -dy * k + dx * k), (dx * k, dy * k), (-dx * k - dy * k, -dy * k - dx * k))
    points = " ".join(f"{cx + px},{cy + py}" for px, py in corners)
    out.append(f'<polyline points="{points}" fill="none" stroke="{edge}" stroke-width="3"/>')


def _outlines(out: list[str], layout: SvgLayout, found: list[tuple[int, list[int]]]) -> None:
    """Each dolmen's border, just inside its squares, in its owner's colour."""
    cell, cols, rows = layout.cell, layout.board.cols, layout.board.rows
    inset = max(2, cell // 16)
    for colour, group in found:
        members = set(group)
        path = []
        for square in group:
            r, c = divmod(square, cols)
            x, y = layout.origin(square)
            x0, y0, x1, y1 = x + inset, y + inset, x + cell - inset, y + cell - inset
            for dr, dc, seg in (
                (-1, 0, (x0, y0, x1, y0)),
                (1, 0, (x0, y1, x1, y1)),
                (0, -1, (x0, y0, x0, y1)),
                (0, 1, (x1, y0, x1, y1)),
            ):
                nr, nc = r + dr, c + dc
                if 0 <= nr < rows and 0 <= nc < cols and nr * cols + nc in members:
                    continue
                path.append("M{} {}L{} {}".format(*seg))
        out.append(
            f'<path class="dolmen" d="{"".join(path)}" stroke="{_rgb(DOLMEN_LINES[colour])}" '
            f'stroke-width="{max(2, cell // 14)}" fill="none" stroke-linecap="square"/>'
        )


def _status(out: list[str], layout: SvgLayout, state: GameState, names: tuple[str, str] | None) -> None:
    y = layout.status_top
    x = layout.left
    if state.phase == OVER:
        result = state.result()
        parts = [(turn_line(state, names), TEXT_COLOUR), (final_dolmens_line(result), SOFT_TEXT)]
        parts.append(("Why: " + tie_break_reason(result), TEXT_COLOUR))
    else:
        parts = [
            (turn_line(state, names), TEXT_COLOUR),
            (f"Supply {state.supply}/{state.board.megaliths}", SOFT_TEXT),
            ("Dolmens now: " + score_line(state, bga=True), TEXT_COLOUR),
        ]
    # Wrapped at spaces, never inside "BGA 205" (a no-break space holds the pair together).
    lines = [
        (line, colour)
        for text, colour in parts
        for line in textwrap.wrap(text.replace("BGA ", "BGA\u00a0"), layout.status_chars) or [""]
    ]
    for index, (text, colour) in enumerate(lines[:STATUS_LINES]):
        out.append(
            f'<text class="status" x="{x}" y="{y + 18 + 22 * index}" font-size="15" fill="{_rgb(colour)}" '
            f'style="{_FONT}">{escape(text)}</text>'
        )
