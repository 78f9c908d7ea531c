"""The learned agent's view as pictures: the board with a heat map of its moves, and a game's
review as a curve. SVG (for Jupyter, ``carnac serve`` and the web replay) and Pillow images.

The numbers come from :mod:`carnac_env.analysis` (an ``Evaluation``, a ``Review``); this module
only draws them, reading their fields, and imports nothing above the renderers.

* :func:`policy_layer`: an SVG group to lay over a board drawn with
  :class:`~carnac_env.render.svg.SvgLayout`: each square tinted by the weight of the moves on
  it (the search's visit share after a search, else the network's prior; a placement's four
  orientations summed, a tilt as a frame round its two landing squares that leaves the board's
  tilt preview inside it uncovered), the strongest labelled with their percentage (a tilt's on
  its first square, off the preview's arrow; the decline's along the foot of its square,
  smaller until it fits), the agent's choice ringed (with its orientation, or "decline"), and where the
  exact solver found a win or a draw (``evaluation.verdict``), the solver's move ringed dashed.
* :func:`evaluation_svg` / :func:`evaluation_png`: the board, that layer, and under it a bar
  of each side's expected score and the numbers in words.
* :func:`curve_svg` / :func:`curve_png`: Red's expected score after every move, the half-way
  line, the mistakes circled and numbered (in the mover's colour); "Red ahead" and "White
  ahead" stand up the left margin, so that no point of the curve ever sits on them.

Every colour is :mod:`carnac_env.render.style`'s.
"""

from __future__ import annotations

from html import escape
from typing import Any, NamedTuple

from carnac_env.core.actions import decode
from carnac_env.core.game import PLACE, PLAYER_NAMES, RESPOND
from carnac_env.core.notation import square_name
from carnac_env.render.style import (
    ANALYSIS_BEST,
    ANALYSIS_HEAT,
    ANALYSIS_LABEL,
    ANALYSIS_LABEL_EDGE,
    ANALYSIS_SOLVED,
    BACKGROUND,
    CURVE_LINE,
    CURVE_MIDDLE,
    FACE_COLOURS,
    FACE_EDGES,
    RED_AHEAD,
    RED_TEXT,
    SOFT_TEXT,
    SVG_FONT,
    TEXT_COLOUR,
    WHITE_AHEAD,
    WHITE_TEXT,
    hex_colour,
)
from carnac_env.render.svg import SvgLayout, board_layer, pieces_layer

__all__ = ["curve_png", "curve_svg", "evaluation_png", "evaluation_svg", "heat_shapes", "policy_layer"]

_rgb = hex_colour
#: The least and most opacity of a square's tint (the most for the strongest move).
LOW, HIGH = 0.06, 0.62


def heat_shapes(evaluation: Any, left: int, top: int, cell: int, cols: int, labels: int = 5) -> list[dict[str, Any]]:
    """The heat map of ``evaluation`` as boxes on a board whose square a1 has its corner at
    ``(left, top)``: one dict per square or tilt slab, with ``box`` (x0, y0, x1, y1), ``t``
    (its weight over the strongest, 0 to 1), ``label`` (a percentage, or None), ``title``
    (the moves it stands for, in words), ``best`` (whether the agent's choice is there),
    ``solver`` (whether the solver's move is there, for a solved win or draw) and ``note``
    (the choice's orientation or "decline")."""
    if evaluation.final or not evaluation.moves:
        return []
    grid = _Grid(left, top, cell, cols)
    phase = evaluation.state.phase
    if phase == PLACE:
        shapes = _placement_shapes(evaluation, grid)
    elif phase == RESPOND:
        shapes = _response_shapes(evaluation, grid)
    else:
        shapes = []
    _label(shapes, labels)
    return shapes


class _Grid(NamedTuple):
    """Where a board's squares are drawn: square a1's corner at ``(left, top)``, ``cell``
    pixels a side, ``cols`` to a row."""

    left: int
    top: int
    cell: int
    cols: int

    def box(self, square: int) -> tuple[int, int, int, int]:
        """``(x0, y0, x1, y1)`` of ``square``."""
        r, c = divmod(square, self.cols)
        return (
            self.left + c * self.cell,
            self.top + r * self.cell,
            self.left + (c + 1) * self.cell,
            self.top + (r + 1) * self.cell,
        )


def _how(evaluation: Any) -> str:
    """What a weight is: a share of the search's visits, or the network's prior."""
    return "of visits" if evaluation.searched else "prior"


def _solver_move(evaluation: Any) -> int | None:
    """The solver's move where it found a win or a draw (``evaluation.verdict``), else None."""
    verdict = getattr(evaluation, "verdict", None)
    return verdict.best if verdict is not None and verdict.result >= 0 else None


def _placement_shapes(evaluation: Any, grid: _Grid) -> list[dict[str, Any]]:
    """In the place phase: one shape per square, weighing its four orientations together."""
    board = evaluation.state.board
    how = _how(evaluation)
    best = decode(board, evaluation.best)
    solver = _solver_move(evaluation)
    solver_square = None if solver is None else decode(board, solver).square
    per_square: dict[int, list[Any]] = {}
    for info in evaluation.moves:
        per_square.setdefault(decode(board, info.action).square, []).append(info)
    shapes = []
    for square, infos in per_square.items():
        weight = sum(evaluation.weight(i) for i in infos)
        infos.sort(key=lambda i: -evaluation.weight(i))
        title = f"{square_name(board, square)}: {weight:.0%} {how} (" + ", ".join(
            f"{i.text.split(' ')[1]} {evaluation.weight(i):.0%}" for i in infos
        )
        shapes.append(
            {
                "box": grid.box(square),
                "weight": weight,
                "title": title + ")",
                "best": square == best.square,
                "solver": square == solver_square,
                "note": evaluation.move(evaluation.best).text.split(" ")[1] if square == best.square else None,
            }
        )
    return shapes


def _response_shapes(evaluation: Any, grid: _Grid) -> list[dict[str, Any]]:
    """In the respond phase: one shape per tilt (its two landing squares, inset) and the
    decline (on the pending megalith's square)."""
    state = evaluation.state
    how = _how(evaluation)
    solver = _solver_move(evaluation)
    targets = state.tilt_targets()
    shapes = []
    for info in evaluation.moves:
        move = decode(state.board, info.action)
        weight = evaluation.weight(info)
        frame, at = 0, None
        if move.kind == "tilt":
            a, b = sorted(targets[move.direction][:2])
            (x0, y0, _, _), (_, _, x1, y1) = grid.box(a), grid.box(b)
            area = (x0, y0, x1, y1)
            frame = tilt_frame(grid.cell)
            ax0, ay0, ax1, ay1 = grid.box(a)
            at = ((ax0 + ax1) // 2, (ay0 + ay1) // 2)  # off the preview's arrow, which is mid-slab
            note = None
        else:  # decline: on the pending megalith itself
            area = grid.box(state.pending)
            note = "decline"
        shapes.append(
            {
                "box": area,
                "weight": weight,
                "title": f"{info.text}: {weight:.0%} {how}",
                "best": info.action == evaluation.best,
                "solver": info.action == solver,
                "note": note,
                "decline": move.kind == "decline",
                "frame": frame,
                "at": at,
            }
        )
    return shapes


#: How far the boards' tilt previews stand in from their squares' edges, as a fraction of the
#: square (:mod:`carnac_env.render.image` and :mod:`carnac_env.render.svg` draw them so).
PREVIEW_INSET = 0.16


def tilt_frame(cell: int) -> int:
    """The width of a tilt's tint: a frame around its two landing squares, from a pixel inside
    their edge to a pixel short of the tilt preview (inset :data:`PREVIEW_INSET`), so that the
    preview's colour (what the tilt would show) stays visible under the heat map."""
    return max(1, round(cell * PREVIEW_INSET) - 2)


#: The narrowest a heat-map label's text is drawn (pixels).
MIN_LABEL_FONT = 6


def decline_font(cell: int, text: str, measure: Any = None) -> int:
    """The font size of the decline's label ``text`` (``"decline 4%"``): the usual small label
    size, made smaller until the text fits its cell with 2 pixels to spare each side.
    ``measure(text, size)`` gives the text's width (Pillow's); without it, the width is
    estimated at 0.62 of the size per character (bold sans-serif), and the SVG also caps it
    with ``textLength``."""
    size = max(8, round(max(9, round(cell * 0.3)) * 0.8))
    room = cell - 4
    width = measure or (lambda t, n: 0.62 * n * len(t))
    while size > MIN_LABEL_FONT and width(text, size) > room:
        size -= 1
    return size


def _label(shapes: list[dict[str, Any]], labels: int) -> None:
    """Give each shape its ``t`` (weight over the strongest's) and its ``label``: the
    percentage of the ``labels`` strongest (of at least 0.5%) and of the agent's choice."""
    strongest = max((s["weight"] for s in shapes), default=0.0) or 1.0
    ranked = sorted(range(len(shapes)), key=lambda k: -shapes[k]["weight"])
    shown = {k for k in ranked[: max(0, labels)] if shapes[k]["weight"] >= 0.005}
    for k, shape in enumerate(shapes):
        shape["t"] = shape["weight"] / strongest
        shape["label"] = f"{shape['weight']:.0%}" if k in shown or shape["best"] else None


def policy_layer(evaluation: Any, layout: SvgLayout, *, labels: int = 5) -> str:
    """The heat map of ``evaluation`` (see :func:`heat_shapes`) as an SVG group over a board
    drawn with ``layout``; it takes no clicks (``pointer-events="none"``)."""
    cell = layout.cell
    shapes = heat_shapes(evaluation, layout.left, layout.top, cell, layout.board.cols, labels)
    if not shapes:
        return ""
    size = max(9, round(cell * 0.3))
    small = max(8, round(size * 0.8))

    def label(font_size: int) -> str:
        return (
            f'font-size="{font_size}" font-weight="bold" text-anchor="middle" fill="{_rgb(ANALYSIS_LABEL)}" '
            f'stroke="{_rgb(ANALYSIS_LABEL_EDGE)}" stroke-width="{max(2, font_size // 5)}" paint-order="stroke" '
            f'style="{SVG_FONT}"'
        )

    out = [f'<g class="analysis" pointer-events="none" data-source="{"search" if evaluation.searched else "policy"}">']
    for shape in shapes:
        x0, y0, x1, y1 = shape["box"]
        opacity = 0.0 if shape.get("decline") else LOW + (HIGH - LOW) * shape["t"]
        frame = shape.get("frame", 0)
        if frame:  # a tilt: a frame around its preview, never over it
            half = frame / 2
            paint = (
                f'fill="none" stroke="{_rgb(ANALYSIS_HEAT)}" stroke-opacity="{opacity:.3f}" stroke-width="{frame}" '
                f'pointer-events="visibleStroke"'
            )
            x, y, w, h = x0 + 1 + half, y0 + 1 + half, x1 - x0 - 2 - frame, y1 - y0 - 2 - frame
        else:
            paint = f'fill="{_rgb(ANALYSIS_HEAT)}" fill-opacity="{opacity:.3f}"'
            x, y, w, h = x0 + 1, y0 + 1, x1 - x0 - 2, y1 - y0 - 2
        out.append(
            f'<rect class="heat" x="{x:g}" y="{y:g}" width="{w:g}" height="{h:g}" {paint}>'
            f"<title>{escape(shape['title'])}</title></rect>"
        )
    for shape in shapes:
        x0, y0, x1, y1 = shape["box"]
        cx, cy = (x0 + x1) // 2, (y0 + y1) // 2
        if shape["best"]:
            out.append(
                f'<rect class="best" x="{x0 + 2}" y="{y0 + 2}" width="{x1 - x0 - 4}" height="{y1 - y0 - 4}" '
                f'rx="{cell // 8}" fill="none" stroke="{_rgb(ANALYSIS_BEST)}" stroke-width="{max(2, cell // 14)}"/>'
            )
        if shape.get("solver"):
            inset = 2 + max(3, cell // 10)
            out.append(
                f'<rect class="solved-best" x="{x0 + inset}" y="{y0 + inset}" width="{x1 - x0 - 2 * inset}" '
                f'height="{y1 - y0 - 2 * inset}" fill="none" stroke="{_rgb(ANALYSIS_SOLVED)}" '
                f'stroke-width="{max(2, cell // 16)}" stroke-dasharray="{max(3, cell // 8)} {max(2, cell // 12)}">'
                f"<title>the solver's move</title></rect>"
            )
        if shape["label"] is None:
            continue
        if shape.get("decline"):  # along the foot of the pending megalith's square, within it
            text = f"decline {shape['label']}"
            fit = decline_font(cell, text)
            cap = (
                f' textLength="{cell - 4}" lengthAdjust="spacingAndGlyphs"' if 0.62 * fit * len(text) > cell - 4 else ""
            )
            out.append(f'<text class="heat-label" x="{cx}" y="{y1 - 3}"{cap} {label(fit)}>{text}</text>')
            continue
        if shape.get("at"):
            cx, cy = shape["at"]
        text_y = cy + size // 3 - (size // 2 if shape["note"] else 0)
        out.append(f'<text class="heat-label" x="{cx}" y="{text_y}" {label(size)}>{shape["label"]}</text>')
        if shape["note"]:
            out.append(
                f'<text class="heat-note" x="{cx}" y="{text_y + small + 1}" {label(small)}>'
                f"{escape(shape['note'])}</text>"
            )
    out.append("</g>")
    return "".join(out)


def _words(evaluation: Any) -> list[tuple[str, tuple[int, int, int]]]:
    """The lines under the board: the expected scores, the search, the choice, the solver."""
    red, white = evaluation.expected
    if evaluation.final:
        return [(evaluation.summary(), TEXT_COLOUR)]
    lines = [(f"Value head ({evaluation.model}): Red {red:.0%}, White {white:.0%} expected score", TEXT_COLOUR)]
    if evaluation.search_expected is not None:
        lines.append(
            (
                f"Search, {evaluation.sims} simulations: Red {evaluation.search_expected[0]:.0%}; "
                "the tints are its visit shares",
                SOFT_TEXT,
            )
        )
    else:
        lines.append(("No search: the tints are the network's prior", SOFT_TEXT))
    best = evaluation.move(evaluation.best)
    how = f"{best.share:.0%} of visits" if evaluation.searched else f"prior {best.policy:.0%}"
    lines.append((f"{PLAYER_NAMES[evaluation.to_act]} to act; the agent's move: {best.text} ({how})", TEXT_COLOUR))
    verdict = getattr(evaluation, "verdict", None)
    if verdict is not None:
        ringed = "; ringed dashed" if verdict.result >= 0 else ""
        lines.append((f"Solved: {PLAYER_NAMES[evaluation.to_act]}'s {verdict.line_text()}{ringed}", TEXT_COLOUR))
    elif evaluation.solved:
        lines.append((f"Solved: {evaluation.solved}", TEXT_COLOUR))
    return lines


def evaluation_svg(evaluation: Any, *, cell: int = 40, labels: int = 5) -> str:
    """The board of ``evaluation`` with its heat map, each side's expected score as a bar,
    and the numbers in words, as one standalone ``<svg>``."""
    state = evaluation.state
    layout = SvgLayout(state.board, cell)
    width, height = layout.width, layout.height
    y = layout.status_top + 2
    board_w = state.board.cols * cell
    red = evaluation.expected[0]
    split = layout.left + round(board_w * red)
    bar = (
        f'<g class="expected"><rect x="{layout.left}" y="{y}" width="{split - layout.left}" height="16" '
        f'fill="{_rgb(FACE_COLOURS[1])}"/><rect x="{split}" y="{y}" width="{layout.left + board_w - split}" '
        f'height="16" fill="{_rgb(FACE_COLOURS[2])}" stroke="{_rgb(FACE_EDGES[2])}" stroke-width="0.5"/>'
        f'<text x="{layout.left + 4}" y="{y + 12}" font-size="12" fill="#ffffff" style="{SVG_FONT}">'
        f"Red {red:.0%}</text>"
        f'<text x="{layout.left + board_w - 4}" y="{y + 12}" font-size="12" text-anchor="end" '
        f'fill="{_rgb(TEXT_COLOUR)}" style="{SVG_FONT}">White {1 - red:.0%}</text></g>'
    )
    words = "".join(
        f'<text class="status" x="{layout.left}" y="{y + 36 + 20 * i}" font-size="14" fill="{_rgb(colour)}" '
        f'style="{SVG_FONT}">{escape(text)}</text>'
        for i, (text, colour) in enumerate(_words(evaluation)[:4])
    )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        f'role="img" aria-label="{escape(evaluation.summary())}">'
        f"{board_layer(layout)}<g>{pieces_layer(state, layout, outlines=True, status=False)}</g>"
        f"{policy_layer(evaluation, layout, labels=labels)}{bar}{words}</svg>"
    )


# --------------------------------------------------------------------------- the review's curve
def _ticks(moves: int) -> list[int]:
    step = next(s for s in (1, 2, 5, 10, 20, 50, 100, 200, 500) if moves / s <= 10)
    return list(range(0, moves + 1, step))


#: Where the curve's "Red ahead" and "White ahead" stand: turned up the axis in the left
#: margin, their foot at this x (the axis's numbers are right of them, the plot further right).
SIDE_X = 14


def _side_font(plot_height: float) -> int:
    """The font size of "Red ahead" and "White ahead": 11, smaller where half the plot's
    height is too short for "White ahead"."""
    return max(6, min(11, int(plot_height / 2 / (0.6 * len("White ahead")))))


def _curve_geometry(review: Any, width: int, height: int) -> dict[str, Any]:
    left, right, top, bottom = 46, 14, 36, 34  # top: room for a ringed point at 1 under the title
    n = max(1, len(review.red) - 1)
    plot_w, plot_h = width - left - right, height - top - bottom

    def x(i: float) -> float:
        return left + plot_w * i / n

    def y(p: float) -> float:
        return top + plot_h * (1.0 - p)

    return {"left": left, "top": top, "w": plot_w, "h": plot_h, "x": x, "y": y, "n": n}


def curve_svg(review: Any, *, width: int = 560, height: int = 240) -> str:
    """Red's expected score after every move of ``review``, as one ``<svg>``: the half where
    Red leads tinted red, the other grey, the mistakes circled in their mover's colour and
    numbered as in :attr:`~carnac_env.analysis.review.Review.mistakes`. Each point is a
    ``circle.point`` with ``data-step`` (its position: moves played) and a ``<title>``."""
    g = _curve_geometry(review, width, height)
    x, y = g["x"], g["y"]
    font = f'style="{SVG_FONT}"'
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="review-curve" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="Red\'s expected score move by move">',
        f'<rect width="{width}" height="{height}" fill="{_rgb(BACKGROUND)}"/>',
        f'<rect x="{g["left"]}" y="{g["top"]}" width="{g["w"]}" height="{g["h"] / 2:.1f}" fill="{_rgb(RED_AHEAD)}"/>',
        f'<rect x="{g["left"]}" y="{y(0.5):.1f}" width="{g["w"]}" height="{g["h"] / 2:.1f}" '
        f'fill="{_rgb(WHITE_AHEAD)}"/>',
        f'<text x="{g["left"]}" y="17" font-size="13" fill="{_rgb(TEXT_COLOUR)}" {font}>'
        f"Red's expected score after each move (value head of {escape(review.model)})</text>",
        f'<line x1="{g["left"]}" y1="{y(0.5):.1f}" x2="{g["left"] + g["w"]}" y2="{y(0.5):.1f}" '
        f'stroke="{_rgb(CURVE_MIDDLE)}" stroke-dasharray="4 3"/>',
    ]
    for p, text in ((1.0, "1"), (0.5, "0.5"), (0.0, "0")):
        out.append(
            f'<text x="{g["left"] - 6}" y="{y(p) + 4:.1f}" font-size="11" text-anchor="end" '
            f'fill="{_rgb(SOFT_TEXT)}" {font}>{text}</text>'
        )
    side = _side_font(g["h"])
    for text, p, colour in (("Red ahead", 0.75, RED_TEXT), ("White ahead", 0.25, WHITE_TEXT)):
        # in the left margin, turned up the axis: never under the curve's points
        out.append(
            f'<text class="side" x="{SIDE_X}" y="{y(p):.1f}" transform="rotate(-90 {SIDE_X} {y(p):.1f})" '
            f'font-size="{side}" text-anchor="middle" fill="{_rgb(colour)}" {font}>{text}</text>'
        )
    for tick in _ticks(g["n"]):
        out.append(
            f'<text x="{x(tick):.1f}" y="{g["top"] + g["h"] + 15}" font-size="11" text-anchor="middle" '
            f'fill="{_rgb(SOFT_TEXT)}" {font}>{tick}</text>'
        )
    out.append(
        f'<text x="{g["left"] + g["w"] / 2:.1f}" y="{height - 4}" font-size="11" text-anchor="middle" '
        f'fill="{_rgb(SOFT_TEXT)}" {font}>moves played</text>'
    )
    points = " ".join(f"{x(i):.1f},{y(p):.1f}" for i, p in enumerate(review.red))
    out.append(f'<polyline points="{points}" fill="none" stroke="{_rgb(CURVE_LINE)}" stroke-width="2"/>')
    numbered = {m.ply: k for k, m in enumerate(review.mistakes, start=1)}
    for i, p in enumerate(review.red):
        if i == 0:
            what = "the start"
        else:
            what = f"move {i}, {PLAYER_NAMES[review.players[i - 1]]}: {review.texts[i - 1]}"
        out.append(
            f'<circle class="point" data-step="{i}" cx="{x(i):.1f}" cy="{y(p):.1f}" r="3" fill="{_rgb(CURVE_LINE)}">'
            f"<title>{escape(what)}: Red {p:.2f}</title></circle>"
        )
    for ply, k in numbered.items():
        mistake = review.mistakes[k - 1]
        colour = _rgb(RED_TEXT if mistake.player == 0 else WHITE_TEXT)
        cx, cy = x(ply), y(review.red[ply])
        out.append(
            f'<circle class="mistake" data-step="{ply}" cx="{cx:.1f}" cy="{cy:.1f}" r="8" fill="none" '
            f'stroke="{colour}" stroke-width="2.5"><title>{escape(mistake.line())}</title></circle>'
        )
        label_x = cx + 11 if cx < g["left"] + g["w"] - 16 else cx - 11
        anchor = "start" if label_x > cx else "end"
        out.append(
            f'<text class="mistake-number" x="{label_x:.1f}" y="{cy + 4:.1f}" font-size="12" font-weight="bold" '
            f'text-anchor="{anchor}" fill="{colour}" {font}>{k}</text>'
        )
    out.append("</svg>")
    return "".join(out)


# --------------------------------------------------------------------------- Pillow images
def evaluation_png(evaluation: Any, *, cell: int = 48, labels: int = 5) -> Any:
    """:func:`evaluation_svg`'s picture drawn with Pillow (an ``RGB`` image)."""
    from PIL import Image, ImageDraw

    from carnac_env.render.image import ImageRenderer
    from carnac_env.render.style import font

    state = evaluation.state
    renderer = ImageRenderer(state.board, cell, status=False)
    board_image = renderer.draw_image(state, dolmens=True)
    layout = renderer.layout
    lines = _words(evaluation)
    width = max(board_image.width, 520)
    height = board_image.height + 28 + 20 * len(lines) + 8
    image = Image.new("RGB", (width, height), BACKGROUND)
    image.paste(board_image, (0, 0))
    overlay = Image.new("RGBA", image.size, (0, 0, 0, 0))
    draw = ImageDraw.Draw(overlay)
    shapes = heat_shapes(evaluation, layout.left, layout.top, cell, state.board.cols, labels)
    for shape in shapes:
        x0, y0, x1, y1 = shape["box"]
        opacity = 0.0 if shape.get("decline") else LOW + (HIGH - LOW) * shape["t"]
        tint = (*ANALYSIS_HEAT, round(255 * opacity))
        if shape.get("frame"):  # a tilt: a frame around its preview, never over it
            draw.rectangle((x0 + 1, y0 + 1, x1 - 2, y1 - 2), outline=tint, width=shape["frame"])
        else:
            draw.rectangle((x0 + 1, y0 + 1, x1 - 2, y1 - 2), fill=tint)
    image = Image.alpha_composite(image.convert("RGBA"), overlay).convert("RGB")
    draw = ImageDraw.Draw(image)
    size = max(9, round(cell * 0.3))
    stroke = max(1, size // 6)
    for shape in shapes:
        x0, y0, x1, y1 = shape["box"]
        cx, cy = (x0 + x1) // 2, (y0 + y1) // 2
        if shape["best"]:
            draw.rounded_rectangle(
                (x0 + 2, y0 + 2, x1 - 3, y1 - 3), radius=cell // 8, outline=ANALYSIS_BEST, width=max(2, cell // 14)
            )
        if shape.get("solver"):  # dashed, as in the SVG: a dash along each side
            inset = 2 + max(3, cell // 10)
            dash, gap, width = max(3, cell // 8), max(2, cell // 12), max(2, cell // 16)
            left, top, right, bottom = x0 + inset, y0 + inset, x1 - inset - 1, y1 - inset - 1
            for a in range(left, right, dash + gap):
                b = min(a + dash, right)
                draw.line((a, top, b, top), fill=ANALYSIS_SOLVED, width=width)
                draw.line((a, bottom, b, bottom), fill=ANALYSIS_SOLVED, width=width)
            for a in range(top, bottom, dash + gap):
                b = min(a + dash, bottom)
                draw.line((left, a, left, b), fill=ANALYSIS_SOLVED, width=width)
                draw.line((right, a, right, b), fill=ANALYSIS_SOLVED, width=width)
        if shape.get("at"):
            cx, cy = shape["at"]
        if shape["label"] is not None:
            text = f"decline {shape['label']}" if shape.get("decline") else shape["label"]
            decline = shape.get("decline")
            where = (cx, y1 - size // 2) if decline else (cx, cy - (size // 2 if shape["note"] else 0))
            fit = decline_font(cell, text, lambda t, n: _ink_width(draw, t, font(n), stroke)) if decline else size
            draw.text(
                where,
                text,
                font=font(fit),
                fill=ANALYSIS_LABEL,
                anchor="mm",
                stroke_width=stroke,
                stroke_fill=ANALYSIS_LABEL_EDGE,
            )
            if shape["note"] and not shape.get("decline"):
                draw.text(
                    (cx, cy + size // 2 + 1),
                    shape["note"],
                    font=font(round(size * 0.8)),
                    fill=ANALYSIS_LABEL,
                    anchor="mm",
                    stroke_width=1,
                    stroke_fill=ANALYSIS_LABEL_EDGE,
                )
    y = board_image.height + 2
    board_w = state.board.cols * cell
    split = layout.left + round(board_w * evaluation.expected[0])
    draw.rectangle((layout.left, y, split, y + 16), fill=FACE_COLOURS[1])
    draw.rectangle((split, y, layout.left + board_w, y + 16), fill=FACE_COLOURS[2], outline=FACE_EDGES[2])
    draw.text(
        (layout.left + 4, y + 8), f"Red {evaluation.expected[0]:.0%}", font=font(12), fill=(255, 255, 255), anchor="lm"
    )
    draw.text(
        (layout.left + board_w - 4, y + 8),
        f"White {evaluation.expected[1]:.0%}",
        font=font(12),
        fill=TEXT_COLOUR,
        anchor="rm",
    )
    for i, (text, colour) in enumerate(lines):
        draw.text((layout.left, y + 28 + 20 * i), text, font=font(14), fill=colour)
    return image


def _ink_width(draw: Any, text: str, face: Any, stroke: int) -> float:
    """The width of ``text`` in ``face`` as drawn with an outline ``stroke`` pixels wide."""
    x0, _, x1, _ = draw.textbbox((0, 0), text, font=face, stroke_width=stroke)
    return x1 - x0


def curve_png(review: Any, *, width: int = 560, height: int = 240) -> Any:
    """:func:`curve_svg`'s picture drawn with Pillow (an ``RGB`` image)."""
    from PIL import Image, ImageDraw

    from carnac_env.render.style import font

    g = _curve_geometry(review, width, height)
    x, y = g["x"], g["y"]
    image = Image.new("RGB", (width, height), BACKGROUND)
    draw = ImageDraw.Draw(image)
    right = g["left"] + g["w"]
    draw.rectangle((g["left"], g["top"], right, y(0.5)), fill=RED_AHEAD)
    draw.rectangle((g["left"], y(0.5), right, g["top"] + g["h"]), fill=WHITE_AHEAD)
    for start in range(g["left"], right, 7):
        draw.line((start, y(0.5), min(start + 4, right), y(0.5)), fill=CURVE_MIDDLE)
    draw.text(
        (g["left"], 10),
        f"Red's expected score after each move (value head of {review.model})",
        font=font(13),
        fill=TEXT_COLOUR,
    )
    for p, text in ((1.0, "1"), (0.5, "0.5"), (0.0, "0")):
        draw.text((g["left"] - 6, y(p)), text, font=font(11), fill=SOFT_TEXT, anchor="rm")
    side = _side_font(g["h"])
    for text, p, colour in (("Red ahead", 0.75, RED_TEXT), ("White ahead", 0.25, WHITE_TEXT)):
        # in the left margin, turned up the axis: never under the curve's points
        box = draw.textbbox((0, 0), text, font=font(side))
        label = Image.new("RGB", (box[2] + 2, side + 4), BACKGROUND)
        ImageDraw.Draw(label).text((1, side // 2 + 2), text, font=font(side), fill=colour, anchor="lm")
        label = label.rotate(90, expand=True)
        image.paste(label, (SIDE_X - label.width, round(y(p) - label.height / 2)))
    for tick in _ticks(g["n"]):
        draw.text((x(tick), g["top"] + g["h"] + 10), str(tick), font=font(11), fill=SOFT_TEXT, anchor="mm")
    draw.text((g["left"] + g["w"] / 2, height - 8), "moves played", font=font(11), fill=SOFT_TEXT, anchor="mm")
    points = [(x(i), y(p)) for i, p in enumerate(review.red)]
    if len(points) > 1:
        draw.line(points, fill=CURVE_LINE, width=2)
    for px, py in points:
        draw.ellipse((px - 3, py - 3, px + 3, py + 3), fill=CURVE_LINE)
    for k, mistake in enumerate(review.mistakes, start=1):
        colour = RED_TEXT if mistake.player == 0 else WHITE_TEXT
        cx, cy = x(mistake.ply), y(review.red[mistake.ply])
        draw.ellipse((cx - 8, cy - 8, cx + 8, cy + 8), outline=colour, width=3)
        right = cx < g["left"] + g["w"] - 16
        draw.text(
            (cx + 11 if right else cx - 11, cy), str(k), font=font(12), fill=colour, anchor="lm" if right else "rm"
        )
    return image
