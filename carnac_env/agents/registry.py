"""The built-in agents by name: each agent module registers its class here when it is imported."""

from __future__ import annotations

from carnac_env.agents.base import SeededAgent

__all__ = ["agent_names", "builtin", "register"]

_REGISTRY: dict[str, type[SeededAgent]] = {}


def register(cls: type[SeededAgent]) -> type[SeededAgent]:
    """Register a built-in agent class under its ``name`` (its options and description come
    from the class); returns the class, so it may be used as a decorator."""
    _REGISTRY[cls.name] = cls
    return cls


def agent_names() -> list[str]:
    """The built-in agent names, in the order they were registered."""
    return list(_REGISTRY)


def builtin(name: str) -> type[SeededAgent] | None:
    """The built-in agent class named ``name``, or None."""
    return _REGISTRY.get(name)
