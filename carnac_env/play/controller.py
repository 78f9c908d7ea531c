"""The mouse game's logic: clicks and keys in, moves out; turns, undo and the thinking thread.

:class:`GuiController` holds the game (an AEC env) against the computer, maps clicks at the
window's pixels and key presses to moves (placing with a chosen orientation, tilting,
declining), lets the computer think in a worker thread so the window stays responsive,
and takes decisions back. Its picture is drawn by :class:`~carnac_env.play.view.GuiView`
(:meth:`GuiController.frame`); :mod:`carnac_env.play.gui` is the pygame loop around both.
No pygame here, so it runs (and is tested) anywhere.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from carnac_env import _checks
from carnac_env.core.actions import decline_action, decode, place_action, tilt_action
from carnac_env.core.arithmetic import orientation_for, other_colour, tilt_colours
from carnac_env.core.boards import DIRECTION_NAMES, Board, make_board
from carnac_env.core.game import LYING, OVER, PLACE, PLAYER_NAMES, RESPOND, GameState
from carnac_env.core.notation import COLOUR_LETTERS, action_to_text, square_name
from carnac_env.core.record import GameRecord
from carnac_env.envs.aec import raw_env
from carnac_env.errors import CarnacError
from carnac_env.play.view import BUTTON_LABELS, Button, GuiView, colour_name, piece_part
from carnac_env.render.image import ImageRenderer
from carnac_env.render.score import standing

__all__ = ["KEYS", "Button", "GuiController", "default_cell"]

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


def default_cell(board: Board) -> int:
    """A square size that keeps the window within about 1000 x 700 pixels."""
    return max(28, min(64, 560 // board.rows, 720 // board.cols))


class GuiController:
    """The GUI's logic: the game, the placement being prepared, clicks and keys, undo, and
    the window's picture. No pygame here, so it runs (and is tested) anywhere.

    Args:
        board: the board (a name or a :class:`Board`).
        opponent: the computer: any agent with ``act(state) -> int`` (see
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
        seat = _checks.choice("seat", seat, (0, 1))
        self.board = board if isinstance(board, Board) else make_board(board)
        self.env = raw_env(self.board)
        self.opponent = opponent
        self.seat = seat
        self.opponent_name = opponent_name
        self.players = ["you", opponent_name] if seat == 0 else [opponent_name, "you"]
        self.renderer = ImageRenderer(self.board, cell or default_cell(self.board), names=self.players)
        self.view = GuiView(self.renderer)
        self.tentative: tuple[int, int] | None = None
        self.orientation = 0  # kept between placements (relative to the human: 0 = own colour on top)
        self.message = ""
        self.last_squares: tuple[int, ...] = ()
        self._executor = ThreadPoolExecutor(1, thread_name_prefix="carnac-computer") if threaded else None
        self._future: Future | None = None
        self._generation = 0
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
    @property
    def width(self) -> int:
        """The window's width in pixels."""
        return self.view.layout.width

    @property
    def height(self) -> int:
        """The window's height in pixels."""
        return self.view.layout.height

    @property
    def widget_box(self) -> tuple[int, int, int, int]:
        """``(x0, y0, x1, y1)`` of the orientation widget."""
        return self.view.layout.widget_box

    def buttons(self) -> list[Button]:
        """The panel's buttons as they are now (enabled or not)."""
        enabled = {
            "place": self.human_to_act and self.state.phase == PLACE and self.tentative is not None,
            "decline": self.human_to_act and self.state.phase == RESPOND,
            "undo": self._undo_point() is not None,
        }
        boxes = self.view.layout.button_boxes
        return [Button(name, label, boxes[name], enabled[name]) for name, label in BUTTON_LABELS.items()]

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
                self._turn_piece(piece_part(x - (wx0 + wx1) / 2, y - (wy0 + wy1) / 2, wx1 - wx0))
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
            self._turn_piece(piece_part(x - cx, y - cy, self.renderer.layout.cell))
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
            top = other_colour(top)  # upside down: the long faces keep their axes
        else:
            north_south = other_colour(north_south)  # a quarter turn swaps the axes' colours
        self.orientation = orientation_for(self.seat, top, north_south)
        self.tentative = (square, self.orientation)
        ns, ew = (north_south, other_colour(north_south))
        self.message = (
            f"{COLOUR_LETTERS[top]} on top; tilts N/S would show {colour_name(ns)}, E/W {colour_name(ew)}. Press Place."
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
            return self._computer_plays(int(self.opponent.act(self.state)))
        if self._future is None:
            self._generation += 1
            generation = self._generation
            position = self.state.copy()
            self._future = self._executor.submit(lambda: (generation, int(self.opponent.act(position))))
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
        """The window's picture as a Pillow RGB image (drawn by :class:`~carnac_env.play.view.GuiView`)."""
        return self.view.frame(self)

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
