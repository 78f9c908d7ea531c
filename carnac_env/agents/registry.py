"""The built-in agents by name: one table, in the order they are listed (weakest first).

Each entry names the module and class of one agent, so the table is the one place that says
which agents exist and in what order ``carnac agents`` and the error messages list them. A
class is imported when it is first asked for (:func:`builtin`), so nothing here depends on
which agent modules happen to have been imported. Adding an agent is its module plus one line
in :data:`BUILTIN`; :func:`register` adds one at run time (a test's toy agent, a plug-in),
after the built-ins.
"""

from __future__ import annotations

import importlib

from carnac_env.agents.base import SeededAgent

__all__ = ["BUILTIN", "agent_names", "builtin", "register"]

#: name -> "module:Class", weakest first: the listing order, stated once. The modules are the
#: package's own (this table is code, never read from a file).
BUILTIN: dict[str, str] = {
    "random": "carnac_env.agents.random_agent:RandomAgent",
    "greedy": "carnac_env.agents.greedy:GreedyAgent",
    "mcts": "carnac_env.agents.mcts:MCTSAgent",
    "az": "carnac_env.agents.az:AZAgent",
}

_REGISTERED: dict[str, type[SeededAgent]] = {}


def register(cls: type[SeededAgent]) -> type[SeededAgent]:
    """Add an agent class under its ``name`` at run time (its options and description come
    from the class), listed after the built-ins; returns the class, so it may be used as a
    decorator. A built-in name cannot be taken."""
    if cls.name in BUILTIN:
        raise ValueError(f"agent name {cls.name!r} is a built-in agent's ({BUILTIN[cls.name]})")
    _REGISTERED[cls.name] = cls
    return cls


def agent_names() -> list[str]:
    """The agent names, built-ins first in their listing order, then those registered at run time."""
    return [*BUILTIN, *_REGISTERED]


def builtin(name: str) -> type[SeededAgent] | None:
    """The agent class named ``name`` (imported on first use), or None."""
    where = BUILTIN.get(name)
    if where is None:
        return _REGISTERED.get(name)
    module, _, attribute = where.partition(":")
    return getattr(importlib.import_module(module), attribute)
