"""The built-in agents as text: one line each for error messages, a table for ``carnac agents``.

Both are generated from the registry and the option declarations
(:func:`carnac_env.agents.base.option`), so they list whatever is registered, with the
defaults the constructors use.
"""

from __future__ import annotations

import textwrap

from carnac_env.agents.base import options_of
from carnac_env.agents.registry import agent_names, builtin

__all__ = ["agent_table", "describe_agents"]

USER_AGENT = (
    "your own agent: an import path to a class with act(state), an agent object or a function state -> action, "
    "options as keyword arguments (your.module.Class:depth=3); importing it runs its code"
)


def _defaults(name: str) -> list[tuple[str, str, str]]:
    """``(option, default as a spec writes it, what it does)`` for each option of agent ``name``."""
    return [(key, known.text(known.default), known.help) for key, known in options_of(builtin(name)).items()]


def describe_agents() -> str:
    """A few lines listing the built-in agents, their options and the user-agent syntax."""
    lines = []
    for name in agent_names():
        opts = ", ".join(f"{key}={default} ({text})" for key, default, text in _defaults(name))
        lines.append(f"  {name}: {builtin(name).description}" + (f"; options: {opts}" if opts else ""))
    lines.append(
        "  module.path.Attribute[:option=value...]: your own agent class, agent object or function state -> action"
    )
    return "\n".join(lines)


def agent_table(*, options: bool = True, width: int = 100) -> str:
    """The built-in agents as a table for a terminal (``carnac agents``, ``carnac arena --help``):
    each name with its description and, with ``options``, one indented line per option
    (``option=default`` and what it does), wrapped at ``width`` columns; then how to name your own agent."""
    names = [*agent_names(), "your.module.Class"]
    pad = max(len(name) for name in names) + 2
    lines: list[str] = []

    def add(head: str, text: str, indent: int) -> None:
        lines.extend(
            textwrap.wrap(
                text, width, initial_indent=" " * indent + head.ljust(pad), subsequent_indent=" " * (indent + pad)
            )
        )

    for name in agent_names():
        known = _defaults(name)
        description = builtin(name).description
        if options or not known:
            add(name, description, 0)
        else:
            add(name, f"{description} (options: {', '.join(f'{k}={d}' for k, d, _ in known)})", 0)
        if options and known:
            column = max(len(f"{key}={default}") for key, default, _ in known) + 2
            for key, default, text in known:
                lines.extend(
                    textwrap.wrap(
                        text,
                        width,
                        initial_indent=" " * pad + f"{key}={default}".ljust(column),
                        subsequent_indent=" " * (pad + column),
                    )
                )
    add("your.module.Class", USER_AGENT, 0)
    return "\n".join(lines)
