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

The parts: :class:`~carnac_env.play.controller.GuiController` (input, the game, turns, undo
and the computer's thread) and :class:`~carnac_env.play.view.GuiView` (the picture, drawn
with the renderer's helpers) need no pygame and no display; :class:`GuiApp`, here, is the
thin pygame loop around them (events in, picture out), and tests drive it with synthetic
pygame events under SDL's dummy video driver.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from carnac_env.core.boards import Board
from carnac_env.core.record import GameRecord
from carnac_env.play.controller import KEYS, GuiController, default_cell
from carnac_env.play.view import Button, GuiView
from carnac_env.render.window import check_display, import_pygame, open_window

__all__ = ["KEYS", "NO_WINDOW_ADVICE", "Button", "GuiApp", "GuiController", "GuiView", "default_cell", "play_gui"]

#: What ``carnac play --gui`` suggests when no window can be seen here.
NO_WINDOW_ADVICE = (
    "play in the terminal instead (carnac play, without --gui), or in a web browser (carnac serve, "
    "the serve extra, then open the address it prints)"
)


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
            NO_WINDOW_ADVICE,
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


def check_window() -> None:
    """Refuse at once what :func:`play_gui` would refuse when it opens its window, in the same
    order: a missing ``gui`` extra (pygame), then no display here. For a caller that says or
    writes something before the game (``carnac play --gui``).

    Raises:
        CarnacError: naming the extra to install, or saying there is no display and what to do.
    """
    import_pygame()
    check_display(NO_WINDOW_ADVICE)


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
            opened, a bad board, opponent or seat, or a ``save`` path that cannot be written
            (checked before the game: a missing folder, a device, a FIFO, a folder).
    """
    from carnac_env._files import check_output
    from carnac_env.agents import make

    if save is not None:
        check_output(save)  # a missing folder, a device or a FIFO: refused before the game, not after
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
