"""The base class of the built-in agents, and their options: each option written once.

A built-in agent is a subclass of :class:`SeededAgent` that declares its options as annotated
class attributes made with :func:`option`::

    class MyAgent(SeededAgent):
        name = "mine"
        description = "what it does, for `carnac agents`"
        depth: int = option(2, "plies to look ahead", low=1, high=8)

        def choose(self, state: GameState) -> int: ...

That one line is the option's whole definition: its type (the annotation, and the type of the
default), its default, what it does and its bounds. The constructor (``MyAgent(seed=0,
depth=2)``: every subclass is a dataclass, built by :class:`SeededAgent` itself, so do not add
``@dataclass``), the checks of the values, the spec (``mine:depth=3``, parsed by
:func:`carnac_env.agents.make`), :attr:`SeededAgent.spec` and the help tables (``carnac
agents``) all read it. Attributes annotated without :func:`option` (``MCTSAgent``'s
``evaluator``) are constructor arguments that no spec can give.
"""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass
from typing import Any, ClassVar

from carnac_env import _checks
from carnac_env.agents.protocol import game_of
from carnac_env.core.game import GameState
from carnac_env.errors import CarnacError

__all__ = ["Option", "SeededAgent", "option", "options_of"]

#: The texts a spec may give for a flag option.
TRUE_TEXTS = ("true", "yes", "on")
FALSE_TEXTS = ("false", "no", "off")


@dataclass(frozen=True)
class Option:
    """One option of a built-in agent: its default (whose type is the option's type), what it
    does, and the values it takes (``low`` and ``high`` for numbers, ``choices`` for text)."""

    default: Any
    help: str
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] = ()

    @property
    def kind(self) -> type:
        """``int``, ``float``, ``bool`` or ``str``: the type of the default."""
        return type(self.default)

    def check(self, label: str, value: Any) -> Any:
        """``value`` checked and converted to the option's type (``label`` names it in errors).

        Raises:
            CarnacError: a value of another type or out of range.
        """
        if self.kind is bool:
            return _checks.flag(label, value)
        if self.kind is int:
            return _checks.whole(label, value, self.low, self.high)  # type: ignore[arg-type]
        if self.kind is float:
            return _checks.number(label, value, self.low, self.high)
        if self.choices:
            return _checks.choice(label, value, self.choices)
        if not isinstance(value, str):
            raise CarnacError(f"{label}={value!r}; expected text")
        return value

    def parse(self, text: str) -> Any:
        """The value a spec's ``text`` gives (its bounds are checked by the constructor).

        Raises:
            ValueError: text that is not a value of the option's type (the caller names the spec).
        """
        if self.kind is bool:
            low = text.lower()
            if low in TRUE_TEXTS or low in FALSE_TEXTS:
                return low in TRUE_TEXTS
            raise ValueError(f"not a valid bool (expected {'/'.join(TRUE_TEXTS + FALSE_TEXTS)})")
        if self.kind is str:
            return text
        try:  # ASCII digits only (Python's int() reads other scripts' digits too: "٣" is 3)
            if self.kind is int:
                return _checks.whole_text("value", text)
            return _checks.number_text("value", text)
        except CarnacError:
            what = "whole number" if self.kind is int else "finite number"
            raise ValueError(f"not a valid {self.kind.__name__} (expected a {what} in ASCII digits)") from None

    def text(self, value: Any) -> str:
        """``value`` as a spec writes it (``true``, ``0.5``, ``400``)."""
        if self.kind is bool:
            return "true" if value else "false"
        if self.kind is float:
            return f"{value:g}"
        return str(value)


def option(
    default: Any, help: str, *, low: float | None = None, high: float | None = None, choices: tuple[str, ...] = ()
) -> Any:
    """Declare an option of a :class:`SeededAgent` subclass (see the module docstring)."""
    return dataclasses.field(default=default, metadata={"option": Option(default, help, low, high, choices)})


def options_of(agent: type | object) -> dict[str, Option]:
    """The options of an agent class (or agent), by name, in the order they are declared."""
    cls = agent if isinstance(agent, type) else type(agent)
    if not dataclasses.is_dataclass(cls):
        return {}
    return {f.name: f.metadata["option"] for f in dataclasses.fields(cls) if "option" in f.metadata}


@dataclass(eq=False, repr=False)
class SeededAgent:
    """Base class of the built-in agents: they choose from the game state, with a seeded generator.

    Subclasses implement :meth:`choose` on a :class:`GameState`; :meth:`act` is the agent
    protocol. ``seed`` seeds the agent's own generator ``self.rng`` (a ``random.Random``);
    :meth:`reset` re-seeds it. Options are declared with :func:`option` (the module docstring).
    """

    #: The spec name (``random``, ``greedy``, ``mcts``, ``az``).
    name: ClassVar[str] = ""
    #: One line on what the agent does (``carnac agents`` shows it).
    description: ClassVar[str] = ""

    seed: int = 0

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        dataclass(eq=False, repr=False)(cls)  # the constructor, from the options declared

    def __post_init__(self) -> None:
        self.seed = _checks.seed(self.seed, "agent seed")
        for key, known in options_of(self).items():
            setattr(self, key, known.check(f"{self.name or type(self).__name__} option {key}", getattr(self, key)))
        self.rng = random.Random(self.seed)

    def reset(self, seed: int | None = None) -> None:
        """Start afresh before a game (re-seeding ``rng``); with ``seed``, use that seed from now on."""
        if seed is not None:
            self.seed = _checks.seed(seed, "agent seed")
        self.rng = random.Random(self.seed)

    def act(self, state: GameState) -> int:
        """A legal action for ``state.to_act`` (a carnac AEC env is taken too, see
        :func:`~carnac_env.agents.game_of`).

        Raises:
            CarnacError: the game is over.
        """
        game = game_of(state)
        if game.is_over:
            raise CarnacError("the game is over; there is no action to choose")
        return self.choose(game)

    def choose(self, state: GameState) -> int:  # pragma: no cover - abstract
        """A legal action for ``state.to_act``; ``state`` is left unchanged."""
        raise NotImplementedError

    @property
    def spec(self) -> str:
        """The spec string that builds this agent again: the name, then every option that is
        not at its default, in the order declared."""
        parts = [self.name]
        for key, known in options_of(self).items():
            value = getattr(self, key)
            if value != known.default:
                parts.append(f"{key}={known.text(value)}")
        return ":".join(parts)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.spec!r}, seed={self.seed})"
