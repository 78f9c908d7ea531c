"""A window that shows the board (pygame; the ``gui`` extra), for ``render_mode="human"``.

>>> window = Window(board)          # doctest: +SKIP
>>> window.show(state)              # draws the same picture as ImageRenderer, in a window
>>> window.close()

:meth:`Window.show` opens the window on first use, draws the position and handles the
window's pending events, so it stays responsive between steps. If the person closes the
window, it stays closed: later calls to ``show`` do nothing (``is_open`` turns False) so a
long run is not interrupted by windows popping up again. Without a display, opening it
raises :class:`~carnac_env.errors.CarnacError` (callers fall back to text); SDL's dummy
video driver (``SDL_VIDEODRIVER=dummy``) gives a window that is drawn but never seen.
"""

from __future__ import annotations

import os
from typing import Any

from carnac_env.core.boards import Board, make_board
from carnac_env.core.game import GameState
from carnac_env.errors import CarnacError
from carnac_env.render.image import ImageRenderer


def import_pygame() -> Any:
    """pygame, imported quietly; a missing ``gui`` extra raises CarnacError naming it."""
    os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
    try:
        import pygame
    except ImportError:
        raise CarnacError("a window needs pygame: pip install 'carnac-env[gui]'") from None
    return pygame


def open_window(pygame: Any, size: tuple[int, int], caption: str, instead: str) -> Any:
    """Initialise pygame's display and open a window of ``size`` pixels titled ``caption``.

    Raises:
        CarnacError: no window can be opened (no display); the message suggests ``instead``.
    """
    pygame.display.init()
    try:
        screen = pygame.display.set_mode(size)
    except pygame.error as err:
        pygame.display.quit()
        raise CarnacError(f"cannot open a window ({err}); {instead}, or set SDL_VIDEODRIVER=dummy") from None
    pygame.display.set_caption(caption)
    return screen


class Window:
    """The board in a pygame window.

    Args:
        board: the board (a :class:`Board` or a board name).
        cell: square size in pixels.
        title: the window's title.
        names: optional names for players 0 and 1, shown in the status line.

    Raises:
        CarnacError: pygame is not installed (``pip install 'carnac-env[gui]'``).
    """

    def __init__(
        self, board: Board | str, cell: int = 56, *, title: str = "Carnac", names: tuple[str, str] | None = None
    ) -> None:
        self.pygame = import_pygame()
        self.board = board if isinstance(board, Board) else make_board(board)
        self.renderer = ImageRenderer(self.board, cell, names=names)
        self.title = title
        self._screen: Any = None
        self.closed_by_user = False

    @property
    def is_open(self) -> bool:
        """Whether the window is on screen now."""
        return self._screen is not None

    def open(self) -> None:
        """Open the window now (``show`` does this on first use).

        Raises:
            CarnacError: no window can be opened here (no display).
        """
        if self._screen is not None:
            return
        layout = self.renderer.layout
        self._screen = open_window(
            self.pygame, (layout.width, layout.height), f"{self.title} - {self.board.name}", "use render_mode='ansi'"
        )
        self.closed_by_user = False

    def show(self, state: GameState, **draw_options: Any) -> None:
        """Draw ``state`` in the window (opening it if needed) and handle pending events.

        ``draw_options`` go to :meth:`ImageRenderer.draw_image` (``dolmens``, ``marks``,
        ``status_text``). Does nothing once the person has closed the window.
        """
        if self.closed_by_user:
            return
        self.open()
        if not self.pump():
            return
        image = self.renderer.draw_image(state, **draw_options)
        surface = self.pygame.image.frombuffer(image.tobytes(), image.size, "RGB")
        self._screen.blit(surface, (0, 0))
        self.pygame.display.flip()
        self.pygame.event.pump()

    def pump(self) -> bool:
        """Handle the window's pending events; returns False if it has been closed."""
        if self._screen is None:
            return False
        pygame = self.pygame
        for event in pygame.event.get():
            if event.type == pygame.QUIT:
                self.closed_by_user = True
                self.close()
                return False
        return True

    def close(self) -> None:
        """Close the window (safe to call twice)."""
        if self._screen is not None:
            self._screen = None
            self.pygame.display.quit()

    def __enter__(self) -> Window:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
