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

Every window of the package opens through :func:`open_window`, which first asks
:func:`display_problem` whether a window could be seen here: on Linux and the BSDs that needs
``DISPLAY`` or ``WAYLAND_DISPLAY`` (or an ``SDL_VIDEODRIVER`` chosen on purpose), and SDL must
not have fallen back to a driver that draws off screen (SDL 2.32 picks ``offscreen`` when X
and Wayland fail, and pygame then opens a "window" no one sees, so a game would wait forever
for a click). Without a display the error comes at once and says what to do instead.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
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


#: SDL's video drivers that draw into memory, never on a screen.
HIDDEN_DRIVERS = ("offscreen", "dummy")


def display_problem(environ: Mapping[str, str] | None = None, platform: str | None = None) -> str | None:
    """Why no window could be seen here, or None when one could (without importing pygame).

    macOS and Windows always have a display for a desktop session. Elsewhere a window needs
    ``DISPLAY`` (X11) or ``WAYLAND_DISPLAY``; an ``SDL_VIDEODRIVER`` set on purpose (``dummy``
    in tests, ``kmsdrm`` on a console) is taken as it is. :func:`open_window` also checks, once
    SDL is started, that it did not fall back to a driver that draws off screen.
    """
    environ = os.environ if environ is None else environ
    platform = sys.platform if platform is None else platform
    if environ.get("SDL_VIDEODRIVER") or platform in ("darwin", "win32", "cygwin"):
        return None
    if environ.get("DISPLAY") or environ.get("WAYLAND_DISPLAY"):
        return None
    return "there is no display here (neither DISPLAY nor WAYLAND_DISPLAY is set)"


def _no_window(problem: str, instead: str) -> CarnacError:
    return CarnacError(
        f"cannot open a window: {problem}. {instead[:1].upper()}{instead[1:]}; or run it where a display "
        "is (a desktop session, or ssh -X); SDL_VIDEODRIVER=dummy draws a window no one sees"
    )


def check_display(instead: str) -> None:
    """Refuse at once, with :func:`open_window`'s own message, where :func:`display_problem`
    finds no display: for a command that would otherwise say or write something first.

    Raises:
        CarnacError: no window could be seen here; the message suggests ``instead``.
    """
    problem = display_problem()
    if problem is not None:
        raise _no_window(problem, instead)


def open_window(pygame: Any, size: tuple[int, int], caption: str, instead: str) -> Any:
    """Initialise pygame's display and open a window of ``size`` pixels titled ``caption``,
    after :func:`display_problem` found a display: on a machine without one this fails at
    once, before pygame is started, instead of opening a window no one sees.

    Raises:
        CarnacError: no window can be seen or opened here; the message suggests ``instead``
            and how to get a display.
    """
    problem = display_problem()
    if problem is None:
        pygame.display.init()
        driver = pygame.display.get_driver()
        if driver in HIDDEN_DRIVERS and not os.environ.get("SDL_VIDEODRIVER"):
            pygame.display.quit()
            shown = os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
            problem = f"the display {shown!r} cannot be reached (SDL fell back to its {driver!r} driver)"
    if problem is not None:
        raise _no_window(problem, instead)
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
            self.pygame,
            (layout.width, layout.height),
            f"{self.title} - {self.board.name}",
            "use render_mode='ansi' (text) or 'rgb_array' (pictures)",
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
