"""Play Carnac with the mouse against the computer, in a pygame window (the ``gui`` extra).

``carnac play --gui --board medium --opponent mcts`` calls :func:`play_gui`. How to play:

* **Place**: click an empty square. A megalith appears there, seen from above with its
  four long faces around its top end, and dashed slabs preview what each tilt would show.
  Click its **top** to turn it upside down (the other colour on top), click one of its
  **sides** to turn it 90 degrees (the same on the large copy in the side panel), click
  another empty square to move it, then press **Place** (or Enter).
* **Respond**: when the computer's megalith can be tilted, it is ringed in gold and its
  legal landings are shown as dashed slabs in the colour they would show. Click one to tilt
  it that way, or press **Decline** (or D).
* **Undo** (or U) takes back your last decision and the computer's replies to it; press it
  again to go further back.
* At the end the dolmens are outlined and the winner is shown; the game record is saved.

Keys: Enter place, Space/F swap the top colour, R turn 90 degrees, Esc cancel, arrow keys
tilt, D decline, U undo, Q quit.

The logic lives in :class:`GuiController`, which maps clicks and keys to moves given the
position and the layout and draws the window's picture with Pillow; it needs no pygame
and no display. :class:`GuiApp` is the thin pygame loop around it (events in, picture out),
and tests drive it with synthetic pygame events under SDL's dummy video driver.
"""

from __future__ import annotations

import copy
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from carnac_env.aec import raw_env
from carnac_env.core.actions import (
    decline_action,
    decode,
    orientation_for,
    place_action,
    tilt_action,
    tilt_colours,
)
from carnac_env.core.boards import DIRECTION_NAMES, Board, make_board
from carnac_env.core.game import LYING, OVER, PLACE, PLAYER_NAMES, RESPOND, GameState
from carnac_env.core.notation import COLOUR_LETTERS, action_to_text, square_name
from carnac_env.core.record import GameRecord
from carnac_env.errors import CarnacError
from carnac_env.render.image import (
    BACKGROUND,
    BLOCK_OUTER,
    BLOCK_TOP,
    FACE_COLOURS,
    FACE_EDGES,
    MARK_COLOUR,
    SOFT_TEXT,
    TEXT_COLOUR,
    ImageRenderer,
    font,
)
from carnac_env.render.score import standing, tie_break_reason
from carnac_env.render.window import import_pygame, open_window

#: Keys (pygame key names) and what they do.
KEYS = {
    "return": "place",
    "enter": "place",
    "space": "flip",
    "f": "flip",
    "r": "turn",
    "escape": "cancel",
    "d": "decline",
    "u": "undo",
    "up": "tilt N",
    "right": "tilt E",
    "down": "tilt S",
    "left": "tilt W",
}

_BUTTON_FILL = (70, 88, 58)
_BUTTON_OFF = (196, 190, 174)


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


def default_cell(board: Board) -> int:
    """A square size that keeps the window within about 1000 x 700 pixels."""
    return max(28, min(64, 560 // board.rows, 720 // board.cols))


class GuiController:
    """The GUI's logic: the game, the placement being prepared, clicks and keys, undo, and
    the window's picture. No pygame here, so it runs (and is tested) anywhere.

    Args:
        board: the board (a name or a :class:`Board`).
        opponent: the computer: any agent with ``act(env) -> int`` (see
            :func:`carnac_env.agents.make`).
        seat: the human's player number (0 Red, who moves first, or 1 White).
        opponent_name: how the computer is named on screen and in the record.
        cell: square size in pixels (by default sized to the board).
        threaded: let the computer think in a worker thread (the window stays responsive
            during a long search); ``False`` runs it inside :meth:`computer_turn`.
    """

    def __init__(
        self,
        board: Board | str,
        opponent: Any,
        seat: int = 0,
        *,
        opponent_name: str = "computer",
        cell: int | None = None,
        threaded: bool = False,
    ) -> None:
        if seat not in (0, 1):
            raise CarnacError(f"seat={seat!r}; expected 0 (Red, moves first) or 1 (White)")
        self.board = board if isinstance(board, Board) else make_board(board)
        self.env = raw_env(self.board)
        self.opponent = opponent
        self.seat = seat
        self.opponent_name = opponent_name
        self.players = ["you", opponent_name] if seat == 0 else [opponent_name, "you"]
        self.renderer = ImageRenderer(self.board, cell or default_cell(self.board), names=self.players)
        self.tentative: tuple[int, int] | None = None
        self.orientation = 0  # kept between placements (relative to the human: 0 = own colour on top)
        self.message = ""
        self.last_squares: tuple[int, ...] = ()
        self._executor = ThreadPoolExecutor(1, thread_name_prefix="carnac-computer") if threaded else None
        self._future: Future | None = None
        self._generation = 0
        self._layout_panel()
        self._greet()

    # ----------------------------------------------------------------- reading the game
    @property
    def state(self) -> GameState:
        """The live game state."""
        return self.env.game

    @property
    def is_over(self) -> bool:
        """Whether the game has ended."""
        return self.state.phase == OVER

    @property
    def human_to_act(self) -> bool:
        """Whether the human is to place, tilt or decline now."""
        return not self.is_over and self.state.to_act == self.seat

    @property
    def thinking(self) -> bool:
        """Whether the computer is searching in its worker thread."""
        return self._future is not None

    def record(self) -> GameRecord:
        """The game so far as a record. Its meta, as the CLI writes it: ``agents`` (who played
        Red and White: ``"you"`` and the computer's name) and ``seats`` (``{"you": seat}``)."""
        return self.env.record(agents=list(self.players), seats={"you": self.seat})

    # ----------------------------------------------------------------- layout
    def _layout_panel(self) -> None:
        layout = self.renderer.layout
        cell = layout.cell
        self.text_size = max(12, round(cell * 0.28))
        pad = max(10, cell // 4)
        self.panel_left = layout.width + pad // 2
        panel_width = max(5 * cell, 17 * self.text_size)
        inner = panel_width - 2 * pad
        y = pad + round(self.text_size * 9.6)  # below the title, the two player panels and the legend
        widget = min(inner, round(2.6 * cell), 180)
        x = self.panel_left + pad + (inner - widget) // 2
        self.widget_box = (x, y, x + widget, y + widget)
        y += widget + round(self.text_size * 4.8)  # the widget's three caption lines
        gap = max(6, cell // 8)
        height = max(28, round(cell * 0.62))
        width = (inner - 2 * gap) // 3
        self._button_boxes = {}
        for i, name in enumerate(("place", "decline", "undo")):
            x0 = self.panel_left + pad + i * (width + gap)
            self._button_boxes[name] = (x0, y, x0 + width, y + height)
        self.messages_top = y + height + pad
        self.moves_top = self.messages_top + round(self.text_size * 3.2)
        self.pad = pad
        self.width = self.panel_left + panel_width
        self.width += self.width % 2
        self.height = max(layout.height, self.moves_top + round(self.text_size * 1.3) * 7 + pad)
        self.height += self.height % 2

    def buttons(self) -> list[Button]:
        """The panel's buttons as they are now (enabled or not)."""
        enabled = {
            "place": self.human_to_act and self.state.phase == PLACE and self.tentative is not None,
            "decline": self.human_to_act and self.state.phase == RESPOND,
            "undo": self._undo_point() is not None,
        }
        labels = {"place": "Place", "decline": "Decline", "undo": "Undo"}
        return [Button(name, labels[name], box, enabled[name]) for name, box in self._button_boxes.items()]

    def button(self, name: str) -> Button:
        """The button called ``name`` (``place``, ``decline`` or ``undo``)."""
        for button in self.buttons():
            if button.name == name:
                return button
        raise CarnacError(f"no button {name!r}; expected place, decline or undo")

    # ----------------------------------------------------------------- input
    def click(self, x: float, y: float) -> int | None:
        """A left click at pixel ``(x, y)`` of the window. Returns the action played, if any
        (the human's move; the computer's come from :meth:`computer_turn`)."""
        for button in self.buttons():
            if button.contains(x, y):
                return self.command(button.name) if button.enabled else None
        wx0, wy0, wx1, wy1 = self.widget_box
        if wx0 <= x < wx1 and wy0 <= y < wy1:
            if self.tentative is not None:
                self._turn_piece(_piece_part(x - (wx0 + wx1) / 2, y - (wy0 + wy1) / 2, wx1 - wx0))
            return None
        square = self.renderer.square_at(x, y)
        if square is None or not self.human_to_act:
            if square is not None and not self.is_over:
                self.message = f"Wait: {self.opponent_name} is to play."
            return None
        state = self.state
        if state.phase == RESPOND:
            for direction, (first, second, _) in state.tilt_targets().items():
                if square in (first, second):
                    return self._play(tilt_action(self.board, direction))
            self.message = "Click a dashed slab to tilt there, or press Decline."
            return None
        if self.tentative is not None and square == self.tentative[0]:
            cx, cy = self.renderer.layout.square_centre(square)
            self._turn_piece(_piece_part(x - cx, y - cy, self.renderer.layout.cell))
            return None
        if state.kinds[square]:
            what = "a lying" if state.kinds[square] == LYING else "a standing"
            self.message = f"{square_name(self.board, square)} holds {what} megalith: choose an empty square."
            return None
        self.tentative = (square, self.orientation)
        self.message = f"Megalith on {square_name(self.board, square)}: turn it as you like, then press Place."
        return None

    def key(self, name: str) -> int | None:
        """A key press, by pygame key name (see :data:`KEYS`). Returns the action played, if any."""
        command = KEYS.get(name.lower())
        return None if command is None else self.command(command)

    def command(self, name: str) -> int | None:
        """Do ``place``, ``decline``, ``undo``, ``flip``, ``turn``, ``cancel`` or ``tilt N/E/S/W``
        when it is allowed now. Returns the action played, if any."""
        state = self.state
        if name == "undo":
            self.undo()
            return None
        if not self.human_to_act:
            return None
        if name == "place" and state.phase == PLACE and self.tentative is not None:
            square, orientation = self.tentative
            return self._play(place_action(self.board, square, orientation))
        if name == "decline" and state.phase == RESPOND:
            return self._play(decline_action(self.board))
        if name.startswith("tilt ") and state.phase == RESPOND:
            direction = "NESW".index(name[-1])
            if direction in state.tilt_targets():
                return self._play(tilt_action(self.board, direction))
            self.message = f"The megalith cannot tilt {DIRECTION_NAMES[direction]}."
            return None
        if name in ("flip", "turn") and self.tentative is not None:
            self._turn_piece("top" if name == "flip" else "side")
        elif name == "cancel":
            self.tentative = None
        return None

    def _turn_piece(self, part: str | None) -> None:
        """Swap the top colour (``top``) or turn the megalith 90 degrees (``side``)."""
        if part is None or self.tentative is None:
            return
        square, orientation = self.tentative
        top, north_south, _ = tilt_colours(self.seat, orientation)
        if part == "top":
            top = 3 - top  # upside down: the long faces keep their axes
        else:
            north_south = 3 - north_south  # a quarter turn swaps the axes' colours
        self.orientation = orientation_for(self.seat, top, north_south)
        self.tentative = (square, self.orientation)
        ns, ew = (north_south, 3 - north_south)
        self.message = (
            f"{COLOUR_LETTERS[top]} on top; tilts N/S would show {_colour(ns)}, E/W {_colour(ew)}. Press Place."
        )

    # ----------------------------------------------------------------- moves
    def _play(self, action: int) -> int:
        state = self.state
        mover = state.to_act
        move = decode(self.board, action)
        if move.kind == "place":
            squares: tuple[int, ...] = (move.square,)
        elif move.kind == "tilt":
            first, second, _ = state.tilt_targets()[move.direction]
            squares = (first, second)
        else:
            squares = (state.pending,)
        text = action_to_text(self.board, action, mover)
        self.env.step(action)
        self.last_squares = squares if move.kind != "decline" else ()
        self.tentative = None
        who = "You" if mover == self.seat else self.opponent_name.capitalize()
        self.message = f"{who}: {text}."
        if move.kind == "place" and self.state.phase == PLACE:
            nxt = "you place" if self.state.to_act == self.seat else f"{self.opponent_name} places"
            self.message += f" It cannot be tilted (no room on any side), so {nxt} next."
        if self.is_over:
            self.message = self.renderer.status_line(self.state) + "."
        return action

    def computer_turn(self) -> int | None:
        """Let the computer move if it is its turn. Without a worker thread it plays at once;
        with one, the first call starts the search and a later call plays its answer.
        Returns the action played, if any."""
        if self.is_over or self.human_to_act:
            return None
        if self._executor is None:
            return self._computer_plays(int(self.opponent.act(self.env)))
        if self._future is None:
            self._generation += 1
            generation = self._generation
            env_copy = copy.deepcopy(self.env)
            self._future = self._executor.submit(lambda: (generation, int(self.opponent.act(env_copy))))
            self.message = f"{self.opponent_name.capitalize()} is thinking..."
            return None
        if not self._future.done():
            return None
        future, self._future = self._future, None
        generation, action = future.result()
        if generation != self._generation:
            return None
        return self._computer_plays(action)

    def _computer_plays(self, action: int) -> int:
        reason = self.state.why_illegal(action)
        if reason is not None:
            raise CarnacError(f"{self.opponent_name} chose action {action}, which is illegal: {reason}")
        return self._play(action)

    def _undo_point(self) -> int | None:
        """How many moves to keep to go back to the human's previous decision, or None."""
        state = GameState(self.board)
        point = None
        for index, action in enumerate(self.env.history):
            if state.to_act == self.seat and not state.is_over:
                point = index
            state.apply_unchecked(action)
        return point

    def undo(self) -> bool:
        """Take back the human's last decision and everything after it. Returns whether
        anything was undone."""
        point = self._undo_point()
        if point is None:
            self.message = "Nothing of yours to undo yet."
            return False
        moves = list(self.env.history[:point])
        self._generation += 1  # forget any search in flight
        self._future = None
        self.env.reset(options={"moves": moves})
        self.tentative = None
        self.last_squares = ()
        # Numbered as in the move list: the move you are about to make again.
        self.message = f"Back to move {len(self.env.history) + 1}: your turn again."
        return True

    def _greet(self) -> None:
        colour = PLAYER_NAMES[self.seat]
        self.message = f"You play {colour}. " + (
            "Click an empty square to place a megalith." if self.seat == 0 else "The computer begins."
        )

    def close(self) -> None:
        """Stop the worker thread, if any."""
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)

    # ----------------------------------------------------------------- the picture
    def frame(self) -> Any:
        """The window's picture as a Pillow RGB image: the board (with the placement being
        prepared, and the last move marked) and the side panel."""
        renderer = self.renderer
        board_image = renderer.draw_image(self.state, tentative=self.tentative, marks=self.last_squares)
        image = renderer.new_image(self.width, self.height, BACKGROUND)
        image.paste(board_image, (0, 0))
        draw = renderer.drawing(image)
        size, pad = self.text_size, self.pad
        x = self.panel_left + pad
        y = pad
        self._text(image, (x, y), f"Carnac - {self.board.name}", round(size * 1.25))
        y += round(size * 1.9)
        y = self._draw_player_panels(image, draw, x, y, size)
        self._draw_legend(image, draw, x, y, size)
        # The orientation widget: the megalith being placed (or the one to tilt), large.
        wx0, wy0, wx1, wy1 = self.widget_box
        state = self.state
        caption: list[str] = []
        if self.tentative is not None:
            top, ns, ew = tilt_colours(self.seat, self.tentative[1])
            sprite = renderer.block_sprite(top, ns, ew, wx1 - wx0)
            image.paste(sprite, (wx0, wy0), sprite)
            caption = [
                "Click the top: swap the colours.",
                "Click a side: turn it 90 degrees.",
                f"Tilt N/S shows {_colour(ns)}, E/W {_colour(ew)}.",
            ]
        elif state.phase == RESPOND and state.pending >= 0:
            ns, ew = state.pending_colours
            sprite = renderer.block_sprite(state.cells[state.pending], ns, ew, wx1 - wx0)
            image.paste(sprite, (wx0, wy0), sprite)
            caption = [
                f"The megalith on {square_name(self.board, state.pending)}:",
                f"tilt N/S shows {_colour(ns)}, E/W {_colour(ew)}.",
                "Click a dashed slab, or Decline." if self.human_to_act else "",
            ]
        elif self.is_over:
            result = state.result()
            if result.winner is None:
                headline = "A draw"
            elif result.winner == self.seat:
                headline = "You win!"
            else:
                headline = f"{self.opponent_name.capitalize()} wins"
            self._text(image, (x, wy0 + size // 2), headline, round(size * 1.6))
            ly = wy0 + round(size * 3)
            for player in (0, 1):
                sizes = result.dolmens[player]
                count = f"{len(sizes)} dolmen{'' if len(sizes) == 1 else 's'}"
                listed = f" ({', '.join(map(str, sizes))})" if sizes else ""
                self._text(image, (x, ly), f"{PLAYER_NAMES[player]}: {count}{listed}", size)
                ly += round(size * 1.3)
            reason = tie_break_reason(result)
            caption = [*_wrap(reason[0].upper() + reason[1:] + ".", font(size), self.width - x - pad)[:3]]
            caption.append("Outlines: Red gold, White blue.")
        elif self.human_to_act:
            caption = ["Click an empty square", "to place a megalith."]
        cy = wy1 + size // 3
        for line in caption:
            self._text(image, (x, cy), line, size, SOFT_TEXT)
            cy += round(size * 1.3)
        for button in self.buttons():
            fill = _BUTTON_FILL if button.enabled else _BUTTON_OFF
            draw.rounded_rectangle(button.box, radius=6, fill=fill)
            face = font(size)
            bx0, by0, bx1, by1 = button.box
            width = face.getlength(button.label)
            xy = (round((bx0 + bx1 - width) / 2), (by0 + by1 - size) // 2 - 1)
            self._text(image, xy, button.label, size, (250, 248, 240))
        y = self.messages_top
        message = f"{self.opponent_name.capitalize()} is thinking..." if self.thinking else self.message
        for line in _wrap(message, font(size), self.width - x - pad)[:2]:
            self._text(image, (x, y), line, size)
            y += round(size * 1.3)
        self._draw_moves(image, x, self.moves_top, size)
        return image

    def _draw_player_panels(self, image: Any, draw: Any, x: int, y: int, size: int) -> int:
        """One panel per player: colour, who plays it, their dolmens now, and who leads by the
        tie-break (the core's score of the position as it stands). Returns the y below them."""
        result = standing(self.state)
        line = round(size * 1.25)
        right = self.width - self.pad
        for player in (0, 1):
            box = (x - 4, y - 2, right, y + 2 * line + 2)
            to_act = not self.is_over and self.state.to_act == player
            draw.rounded_rectangle(box, radius=5, outline=FACE_EDGES[player + 1] if to_act else (214, 208, 192))
            colour = FACE_COLOURS[player + 1]
            draw.rectangle((x, y + 2, x + size - 2, y + size), fill=colour, outline=FACE_EDGES[player + 1])
            head, count = self.player_panel(player, result)
            self._text(image, (x + size + 4, y), head, size)
            self._text(image, (x + size + 4, y + line), count, size, SOFT_TEXT)
            y += 2 * line + round(size * 0.6)
        return y

    def player_panel(self, player: int, result: Any = None) -> tuple[str, str]:
        """The two lines of ``player``'s panel: ``("Red: you  (to play)", "2 dolmens (5, 3)  - leads")``."""
        result = standing(self.state) if result is None else result
        to_act = not self.is_over and self.state.to_act == player
        who = "you" if player == self.seat else self.opponent_name
        head = f"{PLAYER_NAMES[player]}: {who}" + ("  (to play)" if to_act else "")
        sizes = result.dolmens[player]
        count = f"{len(sizes)} dolmen{'' if len(sizes) == 1 else 's'}"
        if sizes:
            count += f" ({', '.join(map(str, sizes))})"
        if result.winner == player:
            count += "  - wins" if self.is_over else "  - leads"
        return head, count

    def _draw_legend(self, image: Any, draw: Any, x: int, y: int, size: int) -> None:
        """What the marks on the board mean: the blue dot and the dashed previews."""
        r = max(3, size // 4)
        cy = y + size // 2
        draw.ellipse((x, cy - r, x + 2 * r, cy + r), fill=MARK_COLOUR)
        self._text(image, (x + 2 * r + 4, y), "last move", size, SOFT_TEXT)
        lx = x + 2 * r + 8 + round(font(size).getlength("last move")) + size // 2
        for i in range(3):
            draw.line((lx + i * 6, cy, lx + i * 6 + 3, cy), fill=(112, 20, 18), width=2)
        self._text(image, (lx + 20, y), "tilt preview", size, SOFT_TEXT)

    def _draw_moves(self, image: Any, x: int, y: int, size: int) -> None:
        """The last few moves in notation, newest last."""
        history = self.env.history
        if not history:
            return
        self._text(image, (x, y), "Moves", size, SOFT_TEXT)
        y += round(size * 1.3)
        state = GameState(self.board)
        lines = []
        for number, action in enumerate(history, start=1):
            lines.append(f"{number}. {PLAYER_NAMES[state.to_act]}: {action_to_text(self.board, action, state.to_act)}")
            state.apply_unchecked(action)
        rows = max(1, (self.height - y) // round(size * 1.3))
        for line in lines[-rows:]:
            self._text(image, (x, y), line, size)
            y += round(size * 1.3)

    def _text(self, image: Any, xy: tuple[int, int], text: str, size: int, fill: tuple = TEXT_COLOUR) -> None:
        if text:
            sprite = self.renderer.text_sprite(text, size, fill)
            image.paste(sprite, xy, sprite)


def _colour(cell_colour: int) -> str:
    return "Red" if cell_colour == 1 else "White"


def _piece_part(dx: float, dy: float, size: float) -> str | None:
    """Which part of a block drawn ``size`` pixels wide a click at ``(dx, dy)`` from its
    centre hits: ``"top"``, ``"side"`` or ``None`` (outside it)."""
    reach = max(abs(dx), abs(dy))
    if reach <= BLOCK_TOP * size:
        return "top"
    if reach <= BLOCK_OUTER * size:
        return "side"
    return None


def _wrap(text: str, face: Any, width: float) -> list[str]:
    lines: list[str] = []
    line = ""
    for word in text.split():
        trial = f"{line} {word}".strip()
        if line and face.getlength(trial) > width:
            lines.append(line)
            line = word
        else:
            line = trial
    if line:
        lines.append(line)
    return lines


class GuiApp:
    """The pygame loop around a :class:`GuiController`: opens the window, turns mouse and key
    events into controller calls, lets the computer move, and redraws.

    Call :meth:`step` repeatedly (``run`` does, at ``fps``); tests post synthetic events with
    ``pygame.event.post`` and call ``step`` themselves.

    Args:
        controller: the game logic and picture.
        computer_delay: seconds to leave between two computer moves, so a person can
            follow them (0 in tests).
    """

    def __init__(self, controller: GuiController, *, computer_delay: float = 0.6) -> None:
        self.pygame = pygame = import_pygame()
        self.controller = controller
        self.computer_delay = computer_delay
        self._last_move_at = 0.0
        self.screen = open_window(
            pygame,
            (controller.width, controller.height),
            f"Carnac - {controller.board.name}",
            "play in the terminal instead",
        )
        self.running = True
        self._dirty = True

    def step(self) -> None:
        """Handle the waiting events, let the computer move (after its delay), redraw if needed."""
        pygame = self.pygame
        controller = self.controller
        for event in pygame.event.get():
            if event.type == pygame.QUIT:
                self.running = False
            elif event.type == pygame.MOUSEBUTTONDOWN and event.button == 1:
                controller.click(*event.pos)
                self._dirty = True
            elif event.type == pygame.KEYDOWN:
                name = pygame.key.name(event.key)
                if name == "q":
                    self.running = False
                else:
                    controller.key(name)
                self._dirty = True
            elif event.type in (pygame.WINDOWEXPOSED, pygame.VIDEOEXPOSE):
                self._dirty = True
        if not self.running:
            return
        computer_due = time.monotonic() - self._last_move_at >= self.computer_delay
        if not controller.is_over and not controller.human_to_act and computer_due:
            was_thinking = controller.thinking
            if controller.computer_turn() is not None:
                self._last_move_at = time.monotonic()
                self._dirty = True
            elif controller.thinking != was_thinking:
                self._dirty = True
        if self._dirty:
            self.redraw()

    def redraw(self) -> None:
        """Draw the controller's picture into the window."""
        image = self.controller.frame()
        surface = self.pygame.image.frombuffer(image.tobytes(), image.size, "RGB")
        self.screen.blit(surface, (0, 0))
        self.pygame.display.flip()
        self._dirty = False

    def run(self, fps: int = 30) -> None:
        """Loop until the window is closed (or Q is pressed)."""
        clock = self.pygame.time.Clock()
        while self.running:
            self.step()
            clock.tick(fps)

    def close(self) -> None:
        """Close the window and stop the computer's thread."""
        self.controller.close()
        self.pygame.display.quit()


def play_gui(
    board: str | Board = "medium",
    opponent: Any = "mcts",
    seat: int = 0,
    save: str | Path | None = None,
    seed: int = 0,
    *,
    cell: int | None = None,
) -> GameRecord:
    """Play one game with the mouse against the computer in a window; see the module docstring.

    Args:
        board: a board name, or a :class:`Board` (pass the Board itself for custom boards).
        opponent: an agent spec for :func:`carnac_env.agents.make` (``"mcts"``,
            ``"greedy"``, ``"random"``, ``"mcts:sims=800"``) or an agent object.
        seat: 0 to play Red (first) or 1 to play White.
        save: where to write the game record (JSON) when the window closes (or Ctrl-C
            stops it); ``None`` to keep it only in the return value.
        seed: seeds the computer's choices.
        cell: square size in pixels (by default sized to the board).

    Returns:
        The game record, finished or not (``agents``, ``seats`` and ``seed`` in its meta).

    Raises:
        CarnacError: pygame is missing (``pip install 'carnac-env[gui]'``), no window can be
            opened, or a bad board, opponent or seat.
    """
    from carnac_env.agents import make

    agent = make(opponent, seed=seed)
    name = opponent if isinstance(opponent, str) else type(opponent).__name__
    controller = GuiController(board, agent, seat, opponent_name=name, cell=cell, threaded=True)
    app = GuiApp(controller)
    try:
        app.run()
    except KeyboardInterrupt:  # Ctrl-C in the terminal: keep the game so far, as closing the window does
        pass
    finally:
        app.close()
    record = controller.record()
    record.meta["seed"] = seed
    if save is not None:
        record.save(save)
    return record
