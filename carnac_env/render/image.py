"""The board as a picture: an (H, W, 3) uint8 image for ``render_mode="rgb_array"``, videos,
the GUI and the docs.

The picture is the board seen from above, with north at the top:

* each square of the board is a patch of heath; column letters run along the top (from the
  west) and row numbers down the left side (from the north), as in the move notation;
* a **standing** megalith is a raised square block showing its top end in red or white,
  with a shadow; a **lying** megalith is one long flat slab across its two squares;
* the megalith **awaiting a tilt decision** is ringed in gold and drawn with its four long
  faces around its top (each side in the colour a tilt that way would show), and every
  legal tilt is previewed as a translucent slab, in its colour, on the squares it would cover;
* the panel below says whose turn it is and what they must do, the supply left, and at the
  end the result and why (the tie-break); the dolmens are then outlined, Red's in gold
  and White's in blue. The last line always gives each side's dolmens now, with its Board
  Game Arena score beside them, and who leads.

Drawing uses Pillow only (the ``render`` extra): no display, no window, the same pixels for
the same position and library version. Pieces are drawn once per renderer, supersampled for
smooth edges, and pasted, so a frame costs well under a millisecond on the medium board
(see ``benchmarks/render_speed.py``). Text uses Pillow's built-in font. The colours, the
pieces' proportions and the font are those of :mod:`carnac_env.render.style`, shared with
every other picture.

>>> from carnac_env.render.image import ImageRenderer
>>> frame = ImageRenderer(state.board).draw(state)        # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from carnac_env._checks import whole
from carnac_env.core import scoring
from carnac_env.core.arithmetic import tilt_colours
from carnac_env.core.boards import Board, make_board
from carnac_env.core.game import OVER, PLACE, STANDING, GameState
from carnac_env.core.notation import column_name, square_name
from carnac_env.errors import CarnacError
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
    LYING_SHADOW,
    MARK_COLOUR,
    PENDING_RING,
    PIP_EMPTY,
    PIP_FULL,
    RED_FACE,
    SHADOW,
    SOFT_TEXT,
    SQUARE_COLOUR,
    SQUARE_LINE,
    TEXT_COLOUR,
    WHITE_FACE,
    Colour,
    font,
    mix,
    shade,
)

if TYPE_CHECKING:  # pragma: no cover
    from PIL import Image as PILImage

_SUPERSAMPLE = 4


def _require_pillow() -> Any:
    try:
        from PIL import Image, ImageDraw, ImageFont
    except ImportError:  # pragma: no cover - exercised only without the extra
        raise CarnacError("drawing the board as an image needs Pillow, a core dependency: pip install pillow") from None
    return Image, ImageDraw, ImageFont


@dataclass(frozen=True)
class Layout:
    """Where things are in a picture: pixel geometry shared by the renderer and the GUI.

    Attributes:
        cell: side of one square in pixels.
        left, top: pixel position of the north-west corner of square a1.
        rows, cols: the board's size.
        width, height: the whole picture.
        status_top: the first pixel row of the status panel below the board.
    """

    cell: int
    left: int
    top: int
    rows: int
    cols: int
    width: int
    height: int
    status_top: int

    def square_box(self, square: int) -> tuple[int, int, int, int]:
        """``(x0, y0, x1, y1)`` of ``square`` (x1, y1 exclusive)."""
        r, c = divmod(square, self.cols)
        x0, y0 = self.left + c * self.cell, self.top + r * self.cell
        return x0, y0, x0 + self.cell, y0 + self.cell

    def square_centre(self, square: int) -> tuple[int, int]:
        """The pixel at the middle of ``square``."""
        x0, y0, _, _ = self.square_box(square)
        return x0 + self.cell // 2, y0 + self.cell // 2

    def square_at(self, x: float, y: float) -> int | None:
        """The square under pixel ``(x, y)``, or ``None`` off the board."""
        c = (x - self.left) // self.cell
        r = (y - self.top) // self.cell
        if 0 <= r < self.rows and 0 <= c < self.cols:
            return int(r) * self.cols + int(c)
        return None

    @property
    def board_box(self) -> tuple[int, int, int, int]:
        """``(x0, y0, x1, y1)`` of the whole board."""
        return self.left, self.top, self.left + self.cols * self.cell, self.top + self.rows * self.cell


#: The largest picture the renderers draw, in pixels (width x height): 4096 x 4096, 48 MiB as
#: RGB. A bigger one (a 64 x 64 board with a large ``cell``) is refused before anything is
#: drawn; a smaller ``cell`` gets under it. Animations are capped again as a whole
#: (:data:`carnac_env.render.animate.MAX_ANIMATION_BYTES`).
MAX_FRAME_PIXELS = 4096 * 4096


def font_size(cell: int) -> int:
    """The text size of pictures drawn with squares of ``cell`` pixels."""
    return max(9, round(cell * 0.3))


def picture_layout(board: Board, cell: int, *, status: bool = True, coordinates: bool = True) -> Layout:
    """Where things go in :class:`ImageRenderer`'s picture of ``board`` (its size included),
    worked out without drawing anything.

    Raises:
        CarnacError: ``cell`` is not a whole number of at least 8 pixels.
    """
    cell = whole("cell", cell, 8)
    size = font_size(cell)
    margin = max(4, cell // 6)
    label = round(cell * 0.5) if coordinates else margin
    left, top = label, label
    board_w, board_h = board.cols * cell, board.rows * cell
    width = left + board_w + margin + (label - margin if coordinates else 0) // 2
    status_top = top + board_h + margin
    height = status_top + (round(size * 6.2) if status else 0)
    width += max(0, 24 * size - width) if status else 0  # room for the status text
    width += width % 2  # even sizes suit video encoders
    height += height % 2
    return Layout(cell, left, top, board.rows, board.cols, width, height, status_top)


def check_frame_size(width: int, height: int, what: str) -> None:
    """Refuse a picture of ``width`` x ``height`` pixels above :data:`MAX_FRAME_PIXELS`, before
    it is drawn (``what`` names it in the message).

    Raises:
        CarnacError: naming the size, the cap and the way under it (a smaller cell).
    """
    if width * height > MAX_FRAME_PIXELS:
        raise CarnacError(
            f"{what} would be {width} x {height} pixels, above the cap of {MAX_FRAME_PIXELS:,} pixels "
            "(carnac_env.render.image.MAX_FRAME_PIXELS); draw it with a smaller cell (square size in pixels)"
        )


class ImageRenderer:
    """Draws Carnac positions of one board as RGB images (Pillow; no window).

    Args:
        board: the board (a :class:`Board` or a board name).
        cell: side of a square in pixels (48 by default; 24 makes small training videos).
        names: optional names for players 0 and 1, shown after the colour ("Red (you)").
        status: draw the status panel (turn, supply, result) below the board.
        coordinates: draw the column letters and row numbers.

    Raises:
        CarnacError: Pillow is not installed (a core dependency: ``pip install pillow``),
            ``cell`` is below 8 pixels, or the picture would be larger than
            :data:`MAX_FRAME_PIXELS` (refused before anything is drawn).
    """

    def __init__(
        self,
        board: Board | str,
        cell: int = 48,
        *,
        names: Sequence[str] | None = None,
        status: bool = True,
        coordinates: bool = True,
    ) -> None:
        self._image, self._draw_module, _ = _require_pillow()
        self.board = board if isinstance(board, Board) else make_board(board)
        self.layout = picture_layout(self.board, cell, status=status, coordinates=coordinates)
        check_frame_size(self.layout.width, self.layout.height, f"a picture of the {self.board.name} board")
        self.cell = cell = self.layout.cell
        self.names = tuple(names) if names is not None else None
        self.status = status
        self.coordinates = coordinates
        self.font_size = font_size(cell)
        self._text_cache: dict[tuple[str, int, Colour], Any] = {}
        self._background = self._draw_background()
        self._sprites: dict[Any, Any] = {}

    # ----------------------------------------------------------------- public drawing
    def draw(
        self,
        state: GameState,
        *,
        dolmens: bool | None = None,
        tentative: tuple[int, int] | None = None,
        marks: Iterable[int] = (),
        status_text: str | None = None,
    ) -> np.ndarray:
        """The picture of ``state`` as an ``(H, W, 3)`` uint8 array (a fresh array).

        Args:
            state: the position (any board state; it must be on this renderer's board).
            dolmens: outline the dolmens; by default only once the game is over.
            tentative: ``(square, orientation)`` of a megalith being placed (the GUI's
                preview): drawn with its faces and its tilts previewed, as the mover sees it.
            marks: squares to mark with a small blue corner dot (e.g. the last move).
            status_text: replaces the first status line (whose turn it is).
        """
        image = self.draw_image(state, dolmens=dolmens, tentative=tentative, marks=marks, status_text=status_text)
        return np.array(image)  # a writeable copy the caller owns

    def draw_image(
        self,
        state: GameState,
        *,
        dolmens: bool | None = None,
        tentative: tuple[int, int] | None = None,
        marks: Iterable[int] = (),
        status_text: str | None = None,
    ) -> PILImage.Image:
        """As :meth:`draw`, but returns the Pillow image (mode ``RGB``)."""
        if state.board != self.board:
            raise CarnacError(f"this renderer draws board {self.board}; the state is on board {state.board}")
        image = self._background.copy()
        found = self.dolmen_groups(state) if dolmens or (dolmens is None and state.phase == OVER) else []
        self._wash_dolmens(image, found)
        self._draw_lying(image, state)
        self._draw_standing(image, state)
        previews = self._tilt_previews(state, tentative)
        if tentative is not None:
            self._draw_tentative(image, state, tentative)
        self._draw_previews(image, previews)
        self._outline_dolmens(image, found)
        self._draw_marks(image, marks)
        if self.status:
            self._draw_status(image, state, status_text)
        return image

    # ----------------------------------------------------------------- the steps of a picture
    def _paste_at(self, image: Any, square: int, sprite: Any) -> None:
        x0, y0, _, _ = self.layout.square_box(square)
        image.paste(sprite, (x0, y0), sprite)

    def _draw_lying(self, image: Any, state: GameState) -> None:
        """One slab per lying megalith, across its two squares."""
        cols = self.board.cols
        for first, second in state.lying:
            a, b = (first, second) if first < second else (second, first)
            horizontal = b // cols == a // cols  # same row (on one column, a+1 is below)
            self._paste_at(image, a, self._sprite(("lying", state.cells[a], horizontal)))

    def _draw_standing(self, image: Any, state: GameState) -> None:
        """Standing megaliths; the one awaiting a decision ringed, with its four faces."""
        cells, kinds = state.cells, state.kinds
        for square in range(self.board.squares):
            if kinds[square] != STANDING:
                continue
            if square == state.pending:
                ns, ew = state.pending_colours
                self._paste_at(image, square, self._sprite(("ring",)))
                self._paste_at(image, square, self._sprite(("block", cells[square], ns, ew)))
            else:
                self._paste_at(image, square, self._sprite(("standing", cells[square])))

    def _tilt_previews(
        self, state: GameState, tentative: tuple[int, int] | None
    ) -> list[tuple[int, tuple[int, int, int]]]:
        """``(direction, (square, square, colour))`` of every tilt to preview: those of the
        megalith awaiting a decision, or those the core says the placement being prepared
        would allow (:meth:`GameState.tilts_after_place`)."""
        previews = list(state.tilt_targets().items())
        if tentative is None:
            return previews
        square, orientation = tentative
        squares = self.board.squares
        if isinstance(square, np.integer):
            square = int(square)
        if not (isinstance(square, int) and 0 <= square < squares and orientation in (0, 1, 2, 3)):
            raise CarnacError(f"tentative={tentative!r}: expected (square 0..{squares - 1}, orientation 0..3)")
        if state.kinds[square]:
            raise CarnacError(f"tentative square {square_name(self.board, square)} is not empty")
        if state.phase == PLACE:
            previews.extend(state.tilts_after_place(square, orientation).items())
        return previews

    def _draw_tentative(self, image: Any, state: GameState, tentative: tuple[int, int]) -> None:
        """The megalith being placed, ringed and drawn with its faces, as the mover sees it."""
        if state.phase != PLACE:
            return
        square, orientation = tentative
        top, ns, ew = tilt_colours(state.to_act, orientation)
        self._paste_at(image, square, self._sprite(("ring",)))
        self._paste_at(image, square, self._sprite(("block", top, ns, ew)))

    def _draw_previews(self, image: Any, previews: list[tuple[int, tuple[int, int, int]]]) -> None:
        """Each previewed tilt as a pale dashed outline with an arrow, never a solid slab."""
        cols = self.board.cols
        for direction, (first, second, colour) in previews:
            a, b = (first, second) if first < second else (second, first)
            self._paste_at(image, a, self._sprite(("ghost", colour, b // cols == a // cols, direction)))

    def _draw_marks(self, image: Any, marks: Iterable[int]) -> None:
        """A small blue dot in the north-east corner of each marked square (the last move)."""
        draw = self.drawing(image)
        r = max(2, self.cell // 12)
        for square in marks:
            _, y0, x1, _ = self.layout.square_box(square)
            draw.ellipse((x1 - 3 * r, y0 + r, x1 - r, y0 + 3 * r), fill=MARK_COLOUR)

    # ----------------------------------------------------------------- public helpers
    def new_image(self, width: int, height: int, colour: Colour = BACKGROUND) -> PILImage.Image:
        """A blank Pillow RGB image (for callers that compose pictures: replays, the GUI)."""
        return self._image.new("RGB", (width, height), colour)

    def drawing(self, image: PILImage.Image) -> Any:
        """A Pillow ``ImageDraw.Draw`` on ``image``."""
        return self._draw_module.Draw(image)

    def paste_text(
        self, image: PILImage.Image, xy: tuple[int, int], text: str, size: int | None = None, fill: Colour = TEXT_COLOUR
    ) -> int:
        """Write ``text`` on ``image`` at ``xy`` (top left) in the built-in font; returns its width."""
        sprite = self.text_sprite(text, size, fill)
        image.paste(sprite, xy, sprite)
        return sprite.width

    def square_at(self, x: float, y: float) -> int | None:
        """The square under pixel ``(x, y)``, or ``None`` off the board."""
        return self.layout.square_at(x, y)

    def close(self) -> None:
        """Nothing to release (kept so environments can call it)."""

    # ----------------------------------------------------------------- text helpers
    def text_sprite(self, text: str, size: int | None = None, fill: Colour = TEXT_COLOUR) -> PILImage.Image:
        """``text`` rendered once as an RGBA image (cached), in Pillow's built-in font."""
        size = size or self.font_size
        key = (text, size, fill)
        sprite = self._text_cache.get(key)
        if sprite is None:
            face = font(size)
            x0, _, x1, _ = face.getbbox(text)
            sprite = self._image.new("RGBA", (max(1, x1 - min(0, x0)), max(1, size + size // 3)), (*fill, 0))
            self._draw_module.Draw(sprite).text((-min(0, x0), 0), text, font=face, fill=(*fill, 255))
            if len(self._text_cache) > 512:
                self._text_cache.clear()
            self._text_cache[key] = sprite
        return sprite

    # ----------------------------------------------------------------- static parts
    def _draw_background(self) -> Any:
        layout, cell = self.layout, self.cell
        image = self._image.new("RGB", (layout.width, layout.height), BACKGROUND)
        draw = self._draw_module.Draw(image)
        x0, y0, x1, y1 = layout.board_box
        rim = max(2, cell // 16)
        draw.rectangle((x0 - rim, y0 - rim, x1 + rim - 1, y1 + rim - 1), fill=BOARD_RIM)
        draw.rectangle((x0, y0, x1 - 1, y1 - 1), fill=SQUARE_LINE)
        gap = max(1, cell // 40)
        for square in range(self.board.squares):
            sx0, sy0, sx1, sy1 = layout.square_box(square)
            draw.rectangle((sx0 + gap, sy0 + gap, sx1 - 1 - gap, sy1 - 1 - gap), fill=SQUARE_COLOUR)
        if self.coordinates:
            size = max(8, round(cell * 0.28))
            for c in range(self.board.cols):
                sprite = self.text_sprite(column_name(c), size, SOFT_TEXT)
                cx = layout.left + c * cell + (cell - sprite.width) // 2
                image.paste(sprite, (cx, max(0, y0 - rim - sprite.height - 1)), sprite)
            for r in range(self.board.rows):
                sprite = self.text_sprite(str(r + 1), size, SOFT_TEXT)
                cy = layout.top + r * cell + (cell - sprite.height) // 2 + size // 8
                image.paste(sprite, (max(0, x0 - rim - sprite.width - 3), cy), sprite)
        return image

    def _sprite(self, key: tuple, cell: int | None = None) -> Any:
        cell = cell or self.cell
        sprite = self._sprites.get((key, cell))
        if sprite is None:
            sprite = self._make_sprite(key, cell)
            self._sprites[key, cell] = sprite
        return sprite

    def block_sprite(self, top: int, north_south: int, east_west: int, size: int) -> PILImage.Image:
        """A standing megalith seen from above with its four long faces, as an RGBA image of
        ``size`` x ``size`` pixels: the top end in colour ``top`` (1 red, 2 white), the north
        and south faces in ``north_south``, the east and west faces in ``east_west``. The
        faces take the middle ``2 * BLOCK_OUTER`` of the image and the top end the middle
        ``2 * BLOCK_TOP``."""
        return self._sprite(("block", top, north_south, east_west), size)

    def _make_sprite(self, key: tuple, cell: int) -> Any:
        """Draw one piece at 4x size and shrink it (premultiplied alpha) for smooth edges."""
        s = _SUPERSAMPLE
        cell = cell * s
        kind = key[0]
        horizontal = kind in ("lying", "ghost") and key[2]
        vertical = kind in ("lying", "ghost") and not key[2]
        size = (2 * cell if horizontal else cell, 2 * cell if vertical else cell)
        sprite = self._image.new("RGBA", size, (0, 0, 0, 0))
        draw = self._draw_module.Draw(sprite)
        if kind == "standing":
            colour = key[1]
            half = round(cell * 0.31)
            centre = cell // 2
            off = round(cell * 0.07)
            box = (centre - half, centre - half, centre + half, centre + half)
            radius = round(cell * 0.06)
            draw.rounded_rectangle(_shift(box, off), radius, fill=SHADOW)
            draw.rounded_rectangle(box, radius, fill=FACE_COLOURS[colour], outline=FACE_EDGES[colour], width=2 * s)
            inner = round(cell * 0.09)
            draw.rounded_rectangle(
                (box[0] + inner, box[1] + inner, box[2] - inner, box[3] - inner),
                radius,
                outline=shade(FACE_COLOURS[colour], 0.86 if colour == 2 else 1.25),
                width=s,
            )
        elif kind == "lying":
            colour = key[1]
            inset = round(cell * 0.13)
            box = (inset, inset, size[0] - inset, size[1] - inset)
            off = round(cell * 0.03)
            radius = round(cell * 0.12)
            draw.rounded_rectangle(_shift(box, off), radius, fill=LYING_SHADOW)
            draw.rounded_rectangle(box, radius, fill=FACE_COLOURS[colour], outline=FACE_EDGES[colour], width=2 * s)
        elif kind == "ghost":
            # A preview, not a piece: a pale wash, a dashed border and an arrow in the
            # direction of the tilt, so it never reads as a lying megalith.
            colour, direction = key[1], key[3]
            inset = round(cell * 0.16)
            box = (inset, inset, size[0] - inset, size[1] - inset)
            draw.rounded_rectangle(box, round(cell * 0.12), fill=(*FACE_COLOURS[colour], 100))
            edge = (*FACE_EDGES[colour], 235)
            _dashed_box(draw, box, round(cell * 0.11), edge, 2 * s)
            cx, cy = size[0] // 2, size[1] // 2
            dx, dy = ((0, -1), (1, 0), (0, 1), (-1, 0))[direction]
            h = round(cell * 0.1)
            tip = (cx + dx * h, cy + dy * h)
            wings = [(cx - dx * h + dy * h, cy - dy * h + dx * h), (cx - dx * h - dy * h, cy - dy * h - dx * h)]
            draw.line([wings[0], tip, wings[1]], fill=edge, width=3 * s, joint="curve")
        elif kind == "block":
            top, ns, ew = key[1:]
            outer = round(cell * BLOCK_OUTER)
            inner = round(cell * BLOCK_TOP)
            c = cell // 2
            off = round(cell * 0.06)
            draw.rectangle(_shift((c - outer, c - outer, c + outer, c + outer), off), fill=SHADOW)
            o0, o1, i0, i1 = c - outer, c + outer, c - inner, c + inner
            faces = {
                "N": ([(o0, o0), (o1, o0), (i1, i0), (i0, i0)], ns),
                "S": ([(o0, o1), (o1, o1), (i1, i1), (i0, i1)], ns),
                "W": ([(o0, o0), (i0, i0), (i0, i1), (o0, o1)], ew),
                "E": ([(o1, o0), (i1, i0), (i1, i1), (o1, o1)], ew),
            }
            for side, (polygon, colour) in faces.items():
                draw.polygon(polygon, fill=shade(FACE_COLOURS[colour], FACE_SHADES[side]), outline=FACE_EDGES[colour])
            edge = BLOCK_EDGE
            draw.rectangle((o0, o0, o1, o1), outline=edge, width=2 * s)
            for a, b in (((o0, o0), (i0, i0)), ((o1, o0), (i1, i0)), ((o0, o1), (i0, i1)), ((o1, o1), (i1, i1))):
                draw.line((a, b), fill=edge, width=s)
            draw.rectangle((i0, i0, i1, i1), fill=FACE_COLOURS[top], outline=edge, width=2 * s)
        elif kind == "ring":
            width = max(2, round(cell * 0.06))
            pad = round(cell * 0.02)
            draw.rounded_rectangle(
                (pad, pad, cell - pad, cell - pad), round(cell * 0.1), outline=(*PENDING_RING, 255), width=width
            )
        else:  # pragma: no cover
            raise KeyError(key)
        return sprite.convert("RGBa").reduce(s).convert("RGBA")

    # ----------------------------------------------------------------- dynamic parts
    def dolmen_groups(self, state: GameState) -> list[tuple[int, list[int]]]:
        """The dolmens of the position as ``(colour, squares)`` (colour 1 red, 2 white)."""
        return scoring.dolmens(self.board, state.cells)

    def _wash_dolmens(self, image: Any, found: list[tuple[int, list[int]]]) -> None:
        """Tint each dolmen's squares with its colour (drawn under the pieces)."""
        draw = self._draw_module.Draw(image)
        for colour, group in found:
            tint = mix(SQUARE_COLOUR, FACE_COLOURS[colour], 0.45)
            for square in group:
                x0, y0, x1, y1 = self.layout.square_box(square)
                draw.rectangle((x0 + 1, y0 + 1, x1 - 2, y1 - 2), fill=tint)

    def _outline_dolmens(self, image: Any, found: list[tuple[int, list[int]]]) -> None:
        """A line just inside the border of each dolmen, in its owner's outline colour
        (:data:`DOLMEN_LINES`), so neighbouring dolmens never share a line."""
        board, layout, cell = self.board, self.layout, self.cell
        draw = self._draw_module.Draw(image)
        width = max(2, cell // 14)
        inset = max(2, cell // 16)
        cols = board.cols
        for colour, group in found:
            line = DOLMEN_LINES[colour]
            members = set(group)

            def inside(r: int, c: int, members: set[int] = members) -> bool:
                return 0 <= r < board.rows and 0 <= c < cols and r * cols + c in members

            for square in group:
                r, c = divmod(square, cols)
                x0, y0, x1, y1 = layout.square_box(square)
                x1, y1 = x1 - 1, y1 - 1
                # For each side on the border: (neighbour across, the two ends along it).
                for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1)):
                    if inside(r + dr, c + dc):
                        continue
                    ends = []
                    for sign in (-1, 1):
                        er, ec = (r, c + sign) if dr else (r + sign, c)  # the neighbour along the side
                        if not inside(er, ec):
                            ends.append(sign * -inset)  # convex corner: stop inside the square
                        elif inside(er + dr, ec + dc):
                            ends.append(sign * inset)  # concave corner: reach the next square's line
                        else:
                            ends.append(0)  # straight on: meet the neighbour's segment
                    if dr:
                        y = y0 + inset if dr < 0 else y1 - inset
                        draw.line((x0 + ends[0], y, x1 + ends[1], y), fill=line, width=width)
                    else:
                        x = x0 + inset if dc < 0 else x1 - inset
                        draw.line((x, y0 + ends[0], x, y1 + ends[1]), fill=line, width=width)

    def status_line(self, state: GameState) -> str:
        """What the status panel's first line says: whose turn and what to do, or the result."""
        return turn_line(state, self.names)

    def _draw_status(self, image: Any, state: GameState, text: str | None) -> None:
        """The panel below the board: whose turn (or the result), the supply (or the final
        dolmens), and the dolmens now with who leads (or why the winner won)."""
        layout, size = self.layout, self.font_size
        y = layout.status_top + size // 3
        self._draw_turn_line(image, state, text, y)
        y2 = y + round(size * 1.55)
        room = layout.width - layout.left - max(4, self.cell // 6)
        reason_lines = 2
        if state.phase == OVER:
            result = state.result()
            dolmens = self.wrap(final_dolmens_line(result), room, size)[:2]
            for index, line in enumerate(dolmens):  # a long list takes one of the reason's lines
                self.paste_text(image, (layout.left, y2 + index * round(size * 1.3)), line, size, fill=SOFT_TEXT)
            y2 += (len(dolmens) - 1) * round(size * 1.3)
            reason_lines -= len(dolmens) - 1
            why = "Why: " + tie_break_reason(result)
        else:
            self._draw_supply_line(image, state, y2)
            why = "Dolmens now: " + score_line(state, bga=True)
        y3 = y2 + round(size * 1.55)
        for line in self.wrap(why, room, size)[:reason_lines]:
            self.paste_text(image, (layout.left, y3), line, size, fill=TEXT_COLOUR)
            y3 += round(size * 1.3)

    def _draw_turn_line(self, image: Any, state: GameState, text: str | None, y: int) -> None:
        size = self.font_size
        draw = self.drawing(image)
        x = self.layout.left
        icon = round(size * 0.9)
        if state.phase == OVER:
            result = state.result()
            colours = [FACE_COLOURS[result.winner + 1]] if result.winner is not None else [RED_FACE, WHITE_FACE]
        else:
            colours = [FACE_COLOURS[state.to_act + 1]]
        for colour in colours:
            edge = FACE_EDGES[1 if colour == RED_FACE else 2]
            draw.rectangle((x, y + 1, x + icon, y + 1 + icon), fill=colour, outline=edge, width=max(1, size // 8))
            x += icon + size // 3
        self.paste_text(image, (x + size // 6, y), text if text is not None else self.status_line(state), size)

    def _draw_supply_line(self, image: Any, state: GameState, y: int) -> None:
        """The supply as a count and a row of pips."""
        layout, size = self.layout, self.font_size
        x = layout.left
        x += self.paste_text(image, (x, y), f"Supply {state.supply}/{self.board.megaliths}", size, fill=SOFT_TEXT)
        x += size // 2
        total = self.board.megaliths
        room = layout.width - x - max(4, self.cell // 6)
        pip = min(size // 2, (room // total) - 1) if total else 0
        if pip < 2:
            return
        draw = self.drawing(image)
        height = round(size * 0.8)
        top = y + (size + size // 3 - height) // 2
        for i in range(total):
            px = x + i * (pip + 1)
            if i < state.supply:
                draw.rectangle((px, top, px + pip - 1, top + height - 1), fill=PIP_FULL)
            else:
                draw.rectangle((px, top, px + pip - 1, top + height - 1), outline=PIP_EMPTY)

    def wrap(self, text: str, width: int, size: int | None = None) -> list[str]:
        """``text`` broken at spaces into lines no wider than ``width`` pixels (a single
        word wider than that gets a line of its own)."""
        face = font(size or self.font_size)
        lines: list[str] = []
        for word in text.split():
            if lines and face.getlength(lines[-1] + " " + word) <= width:
                lines[-1] += " " + word
            else:
                lines.append(word)
        return lines


def _dashed_box(draw: Any, box: tuple[int, int, int, int], dash: int, fill: tuple, width: int) -> None:
    """The border of ``box`` as dashes of length ``dash``."""
    x0, y0, x1, y1 = box
    for a, b, fixed, along_x in ((x0, x1, y0, True), (x0, x1, y1, True), (y0, y1, x0, False), (y0, y1, x1, False)):
        for start in range(a, b, 2 * dash):
            stop = min(start + dash, b)
            draw.line((start, fixed, stop, fixed) if along_x else (fixed, start, fixed, stop), fill=fill, width=width)


def _shift(box: tuple[int, int, int, int], by: int) -> tuple[int, int, int, int]:
    return box[0] + by, box[1] + by, box[2] + by, box[3] + by
