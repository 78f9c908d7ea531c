"""Jupyter's inline display of a game: a :class:`~carnac_env.core.game.GameState` shown as SVG.

The rules core draws nothing and imports nothing from :mod:`carnac_env.render`. Instead,
``import carnac_env`` calls :func:`register_with_ipython`, which, inside IPython (a Jupyter
kernel), tells IPython's SVG formatter how to show a GameState, by the type's name, so the
core need not even be imported yet: the picture is :func:`carnac_env.render.svg.state_svg`.
Outside IPython nothing happens and nothing is imported. (The environments, which are
adapters above the renderers, show their game the same way through their own
``_repr_svg_``.)
"""

from __future__ import annotations

import sys
from typing import Any

#: The type shown: (module, class name).
GAME_TYPE = ("carnac_env.core.game", "GameState")


def game_svg(state: Any) -> str:
    """The SVG picture of ``state`` (what Jupyter shows)."""
    from carnac_env.render.svg import state_svg  # only when a picture is asked for

    return state_svg(state)


def register(formatter: Any) -> None:
    """Show GameStates with ``formatter`` (an IPython ``SVGFormatter``) as :func:`game_svg`."""
    formatter.for_type_by_name(*GAME_TYPE, game_svg)


def register_with_ipython() -> bool:
    """Register with the running IPython shell's SVG formatter, if there is one; whether it did."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None and hasattr(ipython, "get_ipython") else None
    if shell is None:
        return False
    register(shell.display_formatter.formatters["image/svg+xml"])
    return True
