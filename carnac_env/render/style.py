"""The one style of every picture: palette, piece proportions and fonts.

Read by the Pillow renderer (:mod:`carnac_env.render.image`), the SVG pictures
(:mod:`carnac_env.render.svg`, which also draws the JAX engine's ``State.to_svg``), the web
replay (:mod:`carnac_env.render.html`), the animations (:mod:`carnac_env.render.animate`) and
the mouse game (:mod:`carnac_env.play`) and the learned agent's pictures
(:mod:`carnac_env.analysis`). A colour is changed here, and everywhere at once.

Importing this module needs nothing beyond the standard library; :func:`font` loads Pillow
(the ``render`` extra) when first called.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from carnac_env.errors import CarnacError

Colour = tuple[int, int, int]

# ------------------------------------------------------------------ the palette (RGB)
#: The two colours of the megaliths' faces, by cell colour (1 red, 2 white).
RED_FACE: Colour = (198, 45, 40)
WHITE_FACE: Colour = (244, 241, 232)
FACE_COLOURS: dict[int, Colour] = {1: RED_FACE, 2: WHITE_FACE}
#: The outline of a face, by cell colour.
FACE_EDGES: dict[int, Colour] = {1: (112, 20, 18), 2: (112, 108, 98)}
#: The heath of a square, the lines between squares and the board's rim.
SQUARE_COLOUR: Colour = (122, 150, 100)
SQUARE_LINE: Colour = (98, 124, 80)
BOARD_RIM: Colour = (70, 88, 58)
#: Around the board, and the text on it.
BACKGROUND: Colour = (236, 231, 217)
TEXT_COLOUR: Colour = (40, 40, 38)
SOFT_TEXT: Colour = (100, 98, 90)
#: The ring around the megalith awaiting a decision (or being placed).
PENDING_RING: Colour = (255, 196, 0)
#: The outline of a dolmen, by its colour: Red's in gold, White's in deep blue. Two touching
#: dolmens are always of different colours (same-coloured neighbours form one group), so
#: their outlines never share a colour.
DOLMEN_LINE: Colour = (255, 204, 20)
DOLMEN_LINES: dict[int, Colour] = {1: DOLMEN_LINE, 2: (36, 52, 140)}
#: The dot that marks the last move's squares.
MARK_COLOUR: Colour = (40, 110, 220)
#: The dark edges of a block drawn with its faces.
BLOCK_EDGE: Colour = (30, 30, 28)
#: A piece's shadow (RGBA).
SHADOW = (20, 30, 15, 110)
LYING_SHADOW = (20, 30, 15, 90)
#: The supply's pips: one left, one used.
PIP_FULL: Colour = (128, 124, 112)
PIP_EMPTY: Colour = (190, 184, 168)
#: Thin lines of panels (captions, the GUI's player panels).
PANEL_LINE: Colour = (214, 208, 192)
#: The caption strip of animations.
CAPTION_BACKGROUND: Colour = (250, 247, 238)
#: The GUI's buttons: enabled, disabled, and their text.
BUTTON_FILL: Colour = BOARD_RIM
BUTTON_OFF: Colour = (196, 190, 174)
BUTTON_TEXT: Colour = (250, 248, 240)
#: The web replay's page and its red text.
PAGE_BACKGROUND: Colour = (246, 243, 234)
RED_TEXT: Colour = (160, 38, 32)
#: The web replay's words: White's name, the legend and the link (dark enough on the page for
#: WCAG AA), and the current move, dark on gold with a darker gold outline.
WHITE_TEXT: Colour = (85, 83, 76)
NOTE_TEXT: Colour = (69, 68, 63)
HIGHLIGHT: Colour = (255, 233, 168)
HIGHLIGHT_EDGE: Colour = (176, 132, 0)
#: The learned agent's view (carnac_env.analysis): the heat map of its moves, the ring round its
#: choice, and the labels on the board (light text with a dark edge, readable on any square).
ANALYSIS_HEAT: Colour = (124, 58, 196)
ANALYSIS_BEST: Colour = (20, 205, 235)
#: The exact solver's move, ringed dashed in the agent's view.
ANALYSIS_SOLVED: Colour = (40, 210, 90)
ANALYSIS_LABEL: Colour = (255, 255, 255)
ANALYSIS_LABEL_EDGE: Colour = (34, 18, 60)
#: The review's curve: its line, the half-way line, and the tints of the halves where each side leads.
CURVE_LINE: Colour = (40, 40, 38)
CURVE_MIDDLE: Colour = (150, 146, 134)
RED_AHEAD: Colour = (246, 222, 214)
WHITE_AHEAD: Colour = (232, 232, 228)

# ------------------------------------------------------------------ proportions
#: A block drawn with its faces (the megalith awaiting a decision, or being placed): half
#: the side of its outline and of its top end, as fractions of the square it stands on.
BLOCK_OUTER = 0.43
BLOCK_TOP = 0.22
#: How much each long face of a block is shaded (north, south, west, east).
FACE_SHADES = {"N": 1.0, "S": 0.82, "W": 0.93, "E": 0.88}

# ------------------------------------------------------------------ fonts
#: The font of SVG text (any sans-serif the viewer has).
SVG_FONT = "font-family:sans-serif"


def font(size: int) -> Any:
    """Pillow's built-in font at ``size`` pixels (its scalable font where Pillow has FreeType,
    else its small bitmap font). Nothing is read from the system, so pictures are the same
    everywhere for a given Pillow version.

    Raises:
        CarnacError: Pillow is not installed (a core dependency: ``pip install pillow``).
    """
    size = max(6, int(size))
    cached = _FONTS.get(size)
    if cached is None:
        try:
            from PIL import ImageFont
        except ImportError:  # pragma: no cover - exercised only without the extra
            raise CarnacError("drawing text needs Pillow, a core dependency: pip install pillow") from None
        try:
            cached = ImageFont.load_default(size=size)
        except (TypeError, ImportError, OSError):  # Pillow < 10.1 or built without FreeType
            cached = ImageFont.load_default()
        _FONTS[size] = cached
    return cached


_FONTS: dict[int, Any] = {}


# ------------------------------------------------------------------ colour arithmetic
def shade(colour: Colour, factor: float) -> Colour:
    """``colour`` darkened (factor < 1) or lightened towards white (factor > 1)."""
    if factor <= 1:
        return tuple(round(v * factor) for v in colour)  # type: ignore[return-value]
    t = factor - 1
    return tuple(round(v + (255 - v) * t) for v in colour)  # type: ignore[return-value]


def mix(a: Colour, b: Colour, t: float) -> Colour:
    """The colour a fraction ``t`` of the way from ``a`` to ``b``."""
    return tuple(round(x + (y - x) * t) for x, y in zip(a, b))  # type: ignore[return-value]


def hex_colour(colour: Sequence[int]) -> str:
    """``#rrggbb`` for SVG and CSS."""
    r, g, b = colour[:3]
    return f"#{r:02x}{g:02x}{b:02x}"
