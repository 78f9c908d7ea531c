"""The agent protocol, agent specs and :func:`make`.

An *agent* is any object with ``act(env) -> int``: given a carnac AEC environment (wrapped
or raw) at the turn of ``env.agent_selection``, it returns a legal action number for that
agent. Search agents read the rules core through ``env.unwrapped.game`` (a
:class:`~carnac_env.core.game.GameState`; they copy it, never change it); learned agents
read ``env.observe(env.agent_selection)``. An agent may also have ``reset(seed)``, called
before each game (the arena seeds every game this way), and should be picklable.

A *spec* is a string naming an agent and its options::

    random                      greedy
    mcts                        mcts:sims=400
    mcts:seconds=0.5            mcts:sims=2000:c=1.0      (options joined by ':' or ',')
    mypackage.agents.MyAgent    mypackage.agents.MyAgent:depth=3
    mypackage.agents.policy     (a function env -> action)

The name is the text before the first ``:``. A name with a dot is an import path
``module.attribute`` (split at its last dot). The attribute may be a class (called with
the options as keyword arguments, plus ``seed=`` when its constructor takes one), an
object with ``act`` (used as it is), or a plain function ``f(env) -> int`` (wrapped; no
options). Option values are read as int, float, ``true``/``false`` or text.

**A spec that names an import path runs code**: importing the module runs it, and the
class (or function) it names is then called. Only name code you trust. Before anything is
called, the path must be dotted Python names, objects from the standard library are
refused (``subprocess.Popen`` or ``sys.exit`` are not agents), a class must have ``act``,
and the options must fit the constructor's signature.
"""

from __future__ import annotations

import importlib
import inspect
import math
import random
import sys
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from carnac_env.core.game import GameState
from carnac_env.errors import CarnacError


@runtime_checkable
class Agent(Protocol):
    """What the arena, the CLI and the Gymnasium opponent helper need from an agent."""

    def act(self, env: Any) -> int:
        """A legal action for ``env.agent_selection``."""
        ...


def game_of(env: Any) -> GameState:
    """The live :class:`GameState` behind a carnac AEC env (wrapped or raw), or a GameState itself."""
    if isinstance(env, GameState):
        return env
    game = getattr(getattr(env, "unwrapped", env), "game", None)
    if not isinstance(game, GameState):
        raise CarnacError(
            f"an agent needs a carnac AEC env (with env.unwrapped.game) or a GameState, got {type(env).__name__}"
        )
    return game


class SearchAgent:
    """Base class of the built-in agents: they decide from the rules core alone.

    Subclasses implement :meth:`choose` on a :class:`GameState`; :meth:`act` takes an env.
    ``seed`` seeds the agent's own random generator ``self.rng`` (a ``random.Random``);
    :meth:`reset` re-seeds it.
    """

    #: The spec name (``random``, ``greedy``, ``mcts``).
    name = ""

    def __init__(self, seed: int = 0) -> None:
        self.seed = int(seed)
        self.rng = random.Random(self.seed)

    def reset(self, seed: int | None = None) -> None:
        """Start afresh before a game (re-seeding ``rng``); with ``seed``, use that seed from now on."""
        if seed is not None:
            self.seed = int(seed)
        self.rng = random.Random(self.seed)

    def act(self, env: Any) -> int:
        """A legal action for the player to act in ``env`` (a carnac AEC env or a GameState)."""
        game = game_of(env)
        if game.is_over:
            raise CarnacError("the game is over; there is no action to choose")
        return self.choose(game)

    def choose(self, state: GameState) -> int:  # pragma: no cover - abstract
        """A legal action for ``state.to_act``; ``state`` is left unchanged."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.spec!r}, seed={self.seed})"

    @property
    def spec(self) -> str:
        """The spec string that builds this agent again."""
        return self.name


class FunctionAgent:
    """Wraps a plain function ``f(env) -> int`` as an agent."""

    def __init__(self, function: Callable[[Any], int], name: str = "") -> None:
        self.function = function
        self.name = name or getattr(function, "__qualname__", "function")

    def act(self, env: Any) -> int:
        """Call the function."""
        return int(self.function(env))

    def reset(self, seed: int | None = None) -> None:
        """Functions keep no state."""


# name -> (factory, {option: (type, default, description)}, description)
_REGISTRY: dict[str, tuple[Callable[..., Any], dict[str, tuple[type, Any, str]], str]] = {}


def register(
    name: str, factory: Callable[..., Any], options: dict[str, tuple[type, Any, str]], description: str
) -> None:
    """Register a built-in agent name (used by the modules of this package)."""
    _REGISTRY[name] = (factory, options, description)


def agent_names() -> list[str]:
    """The built-in agent names."""
    return list(_REGISTRY)


def describe_agents() -> str:
    """A few lines listing the built-in agents, their options and the user-agent syntax."""
    lines = []
    for name, (_, options, description) in _REGISTRY.items():
        opts = ", ".join(f"{key}={default} ({text})" for key, (_, default, text) in options.items())
        lines.append(f"  {name}: {description}" + (f"; options: {opts}" if opts else ""))
    lines.append(
        "  module.path.Attribute[:option=value...]: your own agent class, agent object or function env -> action"
    )
    return "\n".join(lines)


#: The order of :func:`agent_table` (weakest first); agents registered later follow.
_LISTING_ORDER = ("random", "greedy", "mcts", "az")


def agent_table(*, options: bool = True, width: int = 100) -> str:
    """The built-in agents as a table for a terminal (``carnac agents``, ``carnac arena --help``):
    each name with its description and, with ``options``, one indented line per option
    (``option=default`` and what it does), wrapped at ``width`` columns; then how to name your own agent.
    Generated from the registry, so it lists whatever is registered."""
    import textwrap

    names = [*_REGISTRY, "your.module.Class"]
    pad = max(len(name) for name in names) + 2
    lines: list[str] = []

    def add(head: str, text: str, indent: int) -> None:
        lines.extend(
            textwrap.wrap(
                text, width, initial_indent=" " * indent + head.ljust(pad), subsequent_indent=" " * (indent + pad)
            )
        )

    order = sorted(_REGISTRY, key=lambda n: _LISTING_ORDER.index(n) if n in _LISTING_ORDER else len(_LISTING_ORDER))
    for name in order:
        _, known, description = _REGISTRY[name]
        if options or not known:
            add(name, description, 0)
        else:
            add(name, f"{description} (options: {', '.join(f'{k}={d}' for k, (_, d, _) in known.items())})", 0)
        if options and known:
            column = max(len(f"{key}={default}") for key, (_, default, _) in known.items()) + 2
            for key, (_, default, text) in known.items():
                lines.extend(
                    textwrap.wrap(
                        text,
                        width,
                        initial_indent=" " * pad + f"{key}={default}".ljust(column),
                        subsequent_indent=" " * (pad + column),
                    )
                )
    add(
        "your.module.Class",
        "your own agent: an import path to a class with act(env), an agent object or a function env -> action, "
        "options as keyword arguments (your.module.Class:depth=3); importing it runs its code",
        0,
    )
    return "\n".join(lines)


def _convert(text: str) -> Any:
    low = text.lower()
    if low in ("true", "yes", "on"):
        return True
    if low in ("false", "no", "off"):
        return False
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


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
            f"expected an agent spec string or an object with act(env), got {type(spec).__name__}; "
            f"the agents are:\n{describe_agents()}"
        )
    name, raw = parse_spec(spec)
    if name in _REGISTRY:
        factory, known, _ = _REGISTRY[name]
        kwargs = {key: _builtin_option(spec, name, known, key, text) for key, text in raw.items()}
        return factory(seed=seed, **kwargs)
    if "." in name:
        return _make_user_agent(spec, name, {k: _convert(v) for k, v in raw.items()}, seed)
    raise CarnacError(f"unknown agent {name!r} in spec {spec!r}; the agents are:\n{describe_agents()}")


def _builtin_option(spec: str, name: str, known: dict[str, tuple[type, Any, str]], key: str, text: str) -> Any:
    """The value of option ``key=text`` of built-in agent ``name``, converted and checked."""
    if key not in known:
        choices = ", ".join(known) or "none"
        raise CarnacError(
            f"agent spec {spec!r}: {name} has no option {key!r} (its options: {choices}); "
            f"the agents are:\n{describe_agents()}"
        )
    kind = known[key][0]
    try:
        value = kind(text) if kind is not bool else _convert(text)
    except ValueError:
        value = None
    if value is None or (kind is bool and not isinstance(value, bool)):
        raise CarnacError(f"agent spec {spec!r}: option {key}={text!r} is not a valid {kind.__name__}")
    if kind is float and not math.isfinite(value):
        raise CarnacError(f"agent spec {spec!r}: option {key}={text!r} must be a finite number")
    return value


def _make_user_agent(spec: str, path: str, options: dict[str, Any], seed: int) -> Any:
    """Import ``path`` (``module.attribute``), check that it looks like an agent, then build it."""
    target = _import_target(spec, path)
    if inspect.isclass(target):
        return _build_agent_class(spec, path, target, options, seed)
    if hasattr(target, "act"):
        if options:
            raise CarnacError(f"agent spec {spec!r}: {path} is an agent object and takes no options")
        if hasattr(target, "reset"):
            target.reset(seed)
        return target
    if callable(target):
        if options:
            raise CarnacError(f"agent spec {spec!r}: {path} is a function env -> action and takes no options")
        _check_signature(spec, path, target, (None,), {})
        return FunctionAgent(target, name=path)
    raise CarnacError(f"agent spec {spec!r}: {path} is neither an agent class, an agent object nor a function")


def _import_target(spec: str, path: str) -> Any:
    """The attribute that ``path`` names, after checking the path's shape and refusing the
    standard library (whose callables are not agents and may run commands)."""
    parts = path.split(".")
    if len(parts) < 2 or not all(part.isidentifier() for part in parts):
        raise CarnacError(
            f"agent spec {spec!r}: {path!r} is not an import path 'module.Attribute' (dotted Python names)"
        )
    module_name, attribute = ".".join(parts[:-1]), parts[-1]
    if _is_standard_library(module_name):
        raise CarnacError(f"agent spec {spec!r}: {module_name!r} is in the standard library, not an agent module")
    try:
        module = importlib.import_module(module_name)
    except ImportError as err:
        raise CarnacError(f"agent spec {spec!r}: cannot import module {module_name!r} ({err})") from None
    except Exception as err:  # the module's own code failed
        raise CarnacError(f"agent spec {spec!r}: importing module {module_name!r} raised {err!r}") from err
    if not hasattr(module, attribute):
        raise CarnacError(f"agent spec {spec!r}: module {module_name!r} has no attribute {attribute!r}")
    target = getattr(module, attribute)
    if _is_standard_library(getattr(target, "__module__", None) or ""):
        raise CarnacError(f"agent spec {spec!r}: {path} comes from the standard library and is not an agent")
    return target


def _is_standard_library(module_name: str) -> bool:
    return module_name.split(".")[0] in sys.stdlib_module_names


def _build_agent_class(spec: str, path: str, cls: type, options: dict[str, Any], seed: int) -> Any:
    """Check that ``cls`` has the agent protocol's ``act`` and accepts ``options``, then build it."""
    if not callable(getattr(cls, "act", None)):
        raise CarnacError(f"agent spec {spec!r}: class {path} has no act(env) method, so it is not an agent")
    try:
        parameters = inspect.signature(cls).parameters
    except (TypeError, ValueError):
        raise CarnacError(f"agent spec {spec!r}: cannot read the constructor of {path}") from None
    takes_seed = "seed" in parameters or any(p.kind is p.VAR_KEYWORD for p in parameters.values())
    kwargs = {**options, "seed": seed} if takes_seed else dict(options)
    _check_signature(spec, path, cls, (), kwargs)
    try:
        agent = cls(**kwargs)
    except Exception as err:  # the user's constructor failed
        raise CarnacError(f"agent spec {spec!r}: {path}({options}) failed: {err}") from err
    if not hasattr(agent, "act"):
        raise CarnacError(f"agent spec {spec!r}: {path} built an object without act(env)")
    return agent


def _check_signature(spec: str, path: str, target: Any, args: tuple, kwargs: dict[str, Any]) -> None:
    """Refuse a call of ``target`` that its signature would not accept, before making it."""
    try:
        inspect.signature(target).bind(*args, **kwargs)
    except TypeError as err:
        raise CarnacError(f"agent spec {spec!r}: {path} does not take these arguments: {err}") from None
    except ValueError:
        raise CarnacError(f"agent spec {spec!r}: cannot read the signature of {path}") from None
