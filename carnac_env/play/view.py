"""The mouse game's picture: where everything is in the window, and how it is drawn.

:class:`PanelLayout` places the side panel (title, the players' panels, the orientation
widget, the buttons, the messages and the move list) beside the board of an
:class:`~carnac_env.render.image.ImageRenderer`; :class:`GuiView` draws the window's picture
for a :class:`~carnac_env.play.controller.GuiController` with that renderer's helpers (its
sprites, its text and its text wrapping) in the style of :mod:`carnac_env.render.style`.
What the view reads of the controller is stated here, as :class:`GuiModel`, so the view does
not import the controller (which imports the view to make its window).
Nothing here reads input or changes the game; pygame is not needed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from carnac_env.core.arithmetic import tilt_colours
from carnac_env.core.boards import Board
from carnac_env.core.game import PLAYER_NAMES, RESPOND, GameState
from carnac_env.core.notation import action_to_text, square_name
from carnac_env.render.image import ImageRenderer
from carnac_env.render.score import standing, tie_break_reason
from carnac_env.render.style import (
    BACKGROUND,
    BLOCK_OUTER,
    BLOCK_TOP,
    BUTTON_FILL,
    BUTTON_OFF,
    BUTTON_TEXT,
    FACE_COLOURS,
    FACE_EDGES,
    MARK_COLOUR,
    PANEL_LINE,
    SOFT_TEXT,
    TEXT_COLOUR,
    font,
)

#: The panel's buttons, in order, and their labels.
BUTTON_LABELS = {"place": "Place", "decline": "Decline", "undo": "Undo"}


@dataclass(frozen=True)
class Button:
    """A button of the side panel: ``name`` is what it does (``place``, ``decline``, ``undo``)."""

    name: str
    label: str
    box: tuple[int, int, int, int]
    enabled: bool

    def contains(self, x: float, y: float) -> bool:
        """Whether pixel ``(x, y)`` is on the button."""
        x0, y0, x1, y1 = self.box
        return x0 <= x < x1 and y0 <= y < y1

    @property
    def centre(self) -> tuple[int, int]:
        """The pixel in the middle of the button (for synthetic clicks)."""
        x0, y0, x1, y1 = self.box
        return (x0 + x1) // 2, (y0 + y1) // 2


@dataclass(frozen=True)
class PanelLayout:
    """Pixel geometry of the window: the board picture on the left, the panel on the right.

    Attributes:
        text_size: the panel's text size in pixels.
        pad: the panel's padding.
        panel_left: the panel's first pixel column.
        widget_box: ``(x0, y0, x1, y1)`` of the orientation widget (the large megalith).
        button_boxes: each button's box, by name.
        messages_top, moves_top: the first pixel rows of the messages and the move list.
        width, height: the whole window.
    """

    text_size: int
    pad: int
    panel_left: int
    widget_box: tuple[int, int, int, int]
    button_boxes: dict[str, tuple[int, int, int, int]]
    messages_top: int
    moves_top: int
    width: int
    height: int

    @classmethod
    def beside(cls, renderer: ImageRenderer) -> PanelLayout:
        """The layout of a panel beside ``renderer``'s picture."""
        layout = renderer.layout
        cell = layout.cell
        text_size = max(12, round(cell * 0.28))
        pad = max(10, cell // 4)
        panel_left = layout.width + pad // 2
        panel_width = max(5 * cell, 17 * text_size)
        inner = panel_width - 2 * pad
        y = pad + round(text_size * 9.6)  # below the title, the two player panels and the legend
        widget = min(inner, round(2.6 * cell), 180)
        x = panel_left + pad + (inner - widget) // 2
        widget_box = (x, y, x + widget, y + widget)
        y += widget + round(text_size * 4.8)  # the widget's three caption lines
        gap = max(6, cell // 8)
        height = max(28, round(cell * 0.62))
        width = (inner - 2 * gap) // 3
        boxes = {}
        for i, name in enumerate(BUTTON_LABELS):
            x0 = panel_left + pad + i * (width + gap)
            boxes[name] = (x0, y, x0 + width, y + height)
        messages_top = y + height + pad
        moves_top = messages_top + round(text_size * 3.2)
        total_width = panel_left + panel_width
        total_height = max(layout.height, moves_top + round(text_size * 1.3) * 7 + pad)
        return cls(
            text_size,
            pad,
            panel_left,
            widget_box,
            boxes,
            messages_top,
            moves_top,
            total_width + total_width % 2,
            total_height + total_height % 2,
        )


def piece_part(dx: float, dy: float, size: float) -> str | None:
    """Which part of a block drawn ``size`` pixels wide a click at ``(dx, dy)`` from its
    centre hits: ``"top"``, ``"side"`` or ``None`` (outside it); the proportions are the
    style's (:data:`~carnac_env.render.style.BLOCK_TOP`, ``BLOCK_OUTER``)."""
    reach = max(abs(dx), abs(dy))
    if reach <= BLOCK_TOP * size:
        return "top"
    if reach <= BLOCK_OUTER * size:
        return "side"
    return None


def colour_name(cell_colour: int) -> str:
    """``"Red"`` or ``"White"`` for a cell colour."""
    return "Red" if cell_colour == 1 else "White"


class GuiModel(Protocol):
    """What :class:`GuiView` reads of the game it draws. A
    :class:`~carnac_env.play.controller.GuiController` is one.

    Attributes:
        board: the board.
        env: the AEC env of the game; the view lists its ``history`` (the actions so far).
        seat: the human's player number.
        opponent_name: how the computer is named on screen.
        message: the panel's message.
        tentative: the placement being prepared, ``(square, orientation)``, or None.
        last_squares: the squares of the last move, marked on the board.
    """

    board: Board
    env: Any
    seat: int
    opponent_name: str
    message: str
    tentative: tuple[int, int] | None
    last_squares: tuple[int, ...]

    @property
    def state(self) -> GameState:
        """The live game state."""
        ...

    @property
    def is_over(self) -> bool:
        """Whether the game has ended."""
        ...

    @property
    def human_to_act(self) -> bool:
        """Whether the human is to act now."""
        ...

    @property
    def thinking(self) -> bool:
        """Whether the computer is searching."""
        ...

    def buttons(self) -> list[Button]:
        """The panel's buttons as they are now."""
        ...

    def player_panel(self, player: int, result: Any = None) -> tuple[str, str]:
        """The two lines of ``player``'s panel."""
        ...


class GuiView:
    """Draws the window for a controller: the board (with the placement being prepared and
    the last move marked) and the side panel.

    Args:
        renderer: the board's renderer (its layout, sprites and text are reused).
    """

    def __init__(self, renderer: ImageRenderer) -> None:
        self.renderer = renderer
        self.layout = PanelLayout.beside(renderer)

    def frame(self, gui: GuiModel) -> Any:
        """The window's picture as a Pillow RGB image."""
        renderer, layout = self.renderer, self.layout
        state = gui.state
        board_image = renderer.draw_image(state, tentative=gui.tentative, marks=gui.last_squares)
        image = renderer.new_image(layout.width, layout.height, BACKGROUND)
        image.paste(board_image, (0, 0))
        draw = renderer.drawing(image)
        size, pad = layout.text_size, layout.pad
        x = layout.panel_left + pad
        self._text(image, (x, pad), f"Carnac - {gui.board.name}", round(size * 1.25))
        y = self._player_panels(gui, image, draw, x, pad + round(size * 1.9), size)
        self._legend(image, draw, x, y, size)
        self._widget(gui, image, x, size)
        for button in gui.buttons():
            draw.rounded_rectangle(button.box, radius=6, fill=BUTTON_FILL if button.enabled else BUTTON_OFF)
            bx0, by0, bx1, by1 = button.box
            xy = (round((bx0 + bx1 - font(size).getlength(button.label)) / 2), (by0 + by1 - size) // 2 - 1)
            self._text(image, xy, button.label, size, BUTTON_TEXT)
        y = layout.messages_top
        message = f"{gui.opponent_name.capitalize()} is thinking..." if gui.thinking else gui.message
        for line in renderer.wrap(message, layout.width - x - pad, size)[:2]:
            self._text(image, (x, y), line, size)
            y += round(size * 1.3)
        self._moves(gui, image, x, layout.moves_top, size)
        return image

    def _widget(self, gui: GuiModel, image: Any, x: int, size: int) -> None:
        """The orientation widget: the megalith being placed (or the one to tilt), large, with
        its caption; at the end, the result."""
        box = self.layout.widget_box
        wy0 = box[1]
        state = gui.state
        caption: list[str] = []
        if gui.tentative is not None:
            top, ns, ew = tilt_colours(gui.seat, gui.tentative[1])
            self._block(image, box, top, ns, ew)
            caption = [
                "Click the top: swap the colours.",
                "Click a side: turn it 90 degrees.",
                f"Tilt N/S shows {colour_name(ns)}, E/W {colour_name(ew)}.",
            ]
        elif state.phase == RESPOND and state.pending >= 0:
            ns, ew = state.pending_colours
            self._block(image, box, state.cells[state.pending], ns, ew)
            caption = [
                f"The megalith on {square_name(gui.board, state.pending)}:",
                f"tilt N/S shows {colour_name(ns)}, E/W {colour_name(ew)}.",
                "Click a dashed slab, or Decline." if gui.human_to_act else "",
            ]
        elif gui.is_over:
            caption = self._result(gui, image, x, wy0, size)
        elif gui.human_to_act:
            caption = ["Click an empty square", "to place a megalith."]
        cy = box[3] + size // 3
        for line in caption:
            self._text(image, (x, cy), line, size, SOFT_TEXT)
            cy += round(size * 1.3)

    def _block(self, image: Any, box: tuple[int, int, int, int], top: int, ns: int, ew: int) -> None:
        sprite = self.renderer.block_sprite(top, ns, ew, box[2] - box[0])
        image.paste(sprite, (box[0], box[1]), sprite)

    def _result(self, gui: GuiModel, image: Any, x: int, y: int, size: int) -> list[str]:
        """The headline and both players' dolmens at the end; returns the caption lines."""
        result = gui.state.result()
        if result.winner is None:
            headline = "A draw"
        elif result.winner == gui.seat:
            headline = "You win!"
        else:
            headline = f"{gui.opponent_name.capitalize()} wins"
        self._text(image, (x, y + size // 2), headline, round(size * 1.6))
        ly = y + round(size * 3)
        for player in (0, 1):
            sizes = result.dolmens[player]
            count = f"{len(sizes)} dolmen{'' if len(sizes) == 1 else 's'}"
            listed = f" ({', '.join(map(str, sizes))})" if sizes else ""
            self._text(image, (x, ly), f"{PLAYER_NAMES[player]}: {count}{listed}", size)
            ly += round(size * 1.3)
        reason = tie_break_reason(result)
        width = self.layout.width - x - self.layout.pad
        return [
            *self.renderer.wrap(reason[0].upper() + reason[1:] + ".", width, size)[:3],
            "Outlines: Red gold, White blue.",
        ]

    def _player_panels(self, gui: GuiModel, image: Any, draw: Any, x: int, y: int, size: int) -> int:
        """One panel per player: colour, who plays it, their dolmens now, and who leads by the
        tie-break (the core's score of the position as it stands). Returns the y below them."""
        result = standing(gui.state)
        line = round(size * 1.25)
        right = self.layout.width - self.layout.pad
        for player in (0, 1):
            box = (x - 4, y - 2, right, y + 2 * line + 2)
            to_act = not gui.is_over and gui.state.to_act == player
            draw.rounded_rectangle(box, radius=5, outline=FACE_EDGES[player + 1] if to_act else PANEL_LINE)
            draw.rectangle(
                (x, y + 2, x + size - 2, y + size), fill=FACE_COLOURS[player + 1], outline=FACE_EDGES[player + 1]
            )
            head, count = gui.player_panel(player, result)
            self._text(image, (x + size + 4, y), head, size)
            self._text(image, (x + size + 4, y + line), count, size, SOFT_TEXT)
            y += 2 * line + round(size * 0.6)
        return y

    def _legend(self, image: Any, draw: Any, x: int, y: int, size: int) -> None:
        """What the marks on the board mean: the blue dot and the dashed previews."""
        r = max(3, size // 4)
        cy = y + size // 2
        draw.ellipse((x, cy - r, x + 2 * r, cy + r), fill=MARK_COLOUR)
        self._text(image, (x + 2 * r + 4, y), "last move", size, SOFT_TEXT)
        lx = x + 2 * r + 8 + round(font(size).getlength("last move")) + size // 2
        for i in range(3):
            draw.line((lx + i * 6, cy, lx + i * 6 + 3, cy), fill=FACE_EDGES[1], width=2)
        self._text(image, (lx + 20, y), "tilt preview", size, SOFT_TEXT)

    def _moves(self, gui: GuiModel, image: Any, x: int, y: int, size: int) -> None:
        """The last few moves in notation, newest last."""
        history = gui.env.history
        if not history:
            return
        self._text(image, (x, y), "Moves", size, SOFT_TEXT)
        y += round(size * 1.3)
        state = GameState(gui.board)
        lines = []
        for number, action in enumerate(history, start=1):
            lines.append(f"{number}. {PLAYER_NAMES[state.to_act]}: {action_to_text(gui.board, action, state.to_act)}")
            state.apply_unchecked(action)
        rows = max(1, (self.layout.height - y) // round(size * 1.3))
        for text in lines[-rows:]:
            self._text(image, (x, y), text, size)
            y += round(size * 1.3)

    def _text(self, image: Any, xy: tuple[int, int], text: str, size: int, fill: tuple = TEXT_COLOUR) -> None:
        if text:
            sprite = self.renderer.text_sprite(text, size, fill)
            image.paste(sprite, xy, sprite)
