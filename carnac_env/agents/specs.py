"""Agent specs, and :func:`make` to build an agent from one.

A *spec* is a string naming an agent and its options::

    random                      greedy
    mcts                        mcts:sims=400
    mcts:seconds=0.5            mcts:sims=2000:c=1.0      (options joined by ':' or ',')
    mypackage.agents.MyAgent    mypackage.agents.MyAgent:depth=3
    mypackage.agents.policy     (a function state -> action)

The name is the text before the first ``:``. A built-in name takes the options its class
declares (:mod:`carnac_env.agents.base`), each read as that option's type. A name with a dot
is an import path ``module.attribute`` (split at its last dot), built by
:func:`carnac_env.agents.user_code.make_user_agent`, whose option values are read as int,
float, ``true``/``false`` or text. **A spec that names an import path runs code**; only name
code you trust.
"""

from __future__ import annotations

from typing import Any

from carnac_env import _checks
from carnac_env.agents.base import FALSE_TEXTS, TRUE_TEXTS, options_of
from carnac_env.agents.listing import describe_agents
from carnac_env.agents.registry import builtin
from carnac_env.agents.user_code import make_user_agent
from carnac_env.errors import CarnacError

__all__ = ["make", "parse_spec"]


def parse_spec(spec: str) -> tuple[str, dict[str, str]]:
    """Split a spec into its name and raw option texts: ``"mcts:sims=400"`` -> ``("mcts", {"sims": "400"})``.

    Raises:
        CarnacError: an empty name or an option that is not ``key=value``.
    """
    if not isinstance(spec, str):
        raise CarnacError(f"an agent spec must be a string, got {type(spec).__name__}")
    name, _, rest = spec.strip().partition(":")
    name = name.strip()
    if not name:
        raise CarnacError(f"agent spec {spec!r} has no agent name; the agents are:\n{describe_agents()}")
    options: dict[str, str] = {}
    for part in rest.replace(",", ":").split(":") if rest else []:
        key, eq, value = part.partition("=")
        key, value = key.strip(), value.strip()
        if not eq or not key or not value:
            raise CarnacError(f"agent spec {spec!r}: option {part!r} is not key=value (for example 'mcts:sims=400')")
        if key in options:
            raise CarnacError(f"agent spec {spec!r}: option {key!r} is given twice")
        options[key] = value
    return name, options


def make(spec: str | Any, seed: int = 0) -> Any:
    """Build an agent from a spec (see the module docstring), or pass an agent through.

    A spec that names an import path imports that module (running its code) and builds
    the agent from it; only name code you trust. Objects from the standard library, and
    objects that do not have the shape of an agent, are refused before anything is called.

    Args:
        spec: a spec string such as ``"mcts:sims=400"``, or an agent object (anything with
            ``act``), returned unchanged (the caller owns it and its seeding).
        seed: seeds the agent's random choices; the same seed gives the same moves
            (for ``mcts``, with a ``sims`` budget rather than ``seconds``).

    Raises:
        CarnacError: an unknown agent, an unknown, malformed or out-of-range option, or a
            user agent path that is malformed, does not import or does not name an agent;
            the message lists the agents and their options.
    """
    if not isinstance(spec, str):
        if hasattr(spec, "act"):
            return spec
        raise CarnacError(
            f"expected an agent spec string or an object with act(state), got {type(spec).__name__}; "
            f"the agents are:\n{describe_agents()}"
        )
    name, raw = parse_spec(spec)
    cls = builtin(name)
    if cls is not None:
        return cls(seed=seed, **{key: _builtin_option(spec, cls, key, text) for key, text in raw.items()})
    if "." in name:
        return make_user_agent(spec, name, {k: _convert(v) for k, v in raw.items()}, seed)
    raise CarnacError(f"unknown agent {name!r} in spec {spec!r}; the agents are:\n{describe_agents()}")


def _builtin_option(spec: str, cls: type, key: str, text: str) -> Any:
    """The value of option ``key=text`` of the built-in agent class ``cls``, as its type (the
    constructor checks the range)."""
    known = options_of(cls)
    if key not in known:
        choices = ", ".join(known) or "none"
        raise CarnacError(
            f"agent spec {spec!r}: {cls.name} has no option {key!r} (its options: {choices}); "
            f"the agents are:\n{describe_agents()}"
        )
    try:
        return known[key].parse(text)
    except ValueError as err:
        raise CarnacError(f"agent spec {spec!r}: option {key}={text!r} is {err}") from None


def _convert(text: str) -> Any:
    """A user agent's option text as a bool, int, float or the text itself."""
    low = text.lower()
    if low in TRUE_TEXTS:
        return True
    if low in FALSE_TEXTS:
        return False
    for read in (_checks.whole_text, _checks.number_text):  # ASCII digits only: "٣" stays text
        try:
            return read("option", text)
        except CarnacError:
            pass
    return text
