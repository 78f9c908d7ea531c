"""PettingZoo's standard wrappers, with the hot attributes forwarded directly.

``carnac_env.env()`` wraps the raw env in PettingZoo's ``TerminateIllegalWrapper``,
``AssertOutOfBoundsWrapper`` and ``OrderEnforcingWrapper``, exactly as PettingZoo's classic
environments do. Those wrappers reach the raw env's attributes (``agent_selection``,
``terminations``, ``rewards`` ...) through ``__getattr__``, which Python calls only after a
failed normal lookup; three layers of that cost more per move than Carnac's rules do
(about half the time of a random game through the standard loop, measured in
benchmarks/aec_throughput.py).

The classes here are subclasses of those three wrappers. They read those attributes
straight from the raw env, and they make a step one pass: PettingZoo's
``TerminateIllegalWrapper`` keeps the last observation to read its mask and then the raw env
checks the action again; here the wrapper checks the action once against the raw env's live
mask (the observation tracker's) and plays a legal one with the raw env's unchecked
``_play``, and ``AssertOutOfBoundsWrapper`` checks a plain ``int`` against the space's size
directly. What a user sees is PettingZoo's behaviour unchanged (the illegal-move termination
with -1, the action-space assertion, the before-reset errors and the call order checks), and
``isinstance`` checks against PettingZoo's classes still hold.

Two more things differ from the stock wrappers, both in :class:`TerminateIllegalWrapper`: a
``bool`` action (``step(True)``) raises :class:`~carnac_env.errors.CarnacError` instead of
numpy's ambiguous-truth error from indexing the mask with it, and the illegal-move warning is
still logged but not kept in PettingZoo's ``EnvLogger.mqueue``, a module-level list that
otherwise grows by two entries for every illegal move for the life of the process.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers
from pettingzoo.utils.env_logger import EnvLogger

from carnac_env._checks import is_flag
from carnac_env.env_common import as_action
from carnac_env.errors import CarnacError

#: Attributes of the raw env read on every step by the wrappers and by ``AECEnv.last()``.
HOT_ATTRIBUTES = ("agent_selection", "agents", "terminations", "truncations", "rewards", "infos", "_cumulative_rewards")


def _forward(name: str, guarded: bool) -> property:
    if guarded:

        def get(self: Any) -> Any:
            if not self._has_reset:
                raise AttributeError(f"{name} cannot be accessed before reset")
            return getattr(self._raw, name)

    else:

        def get(self: Any) -> Any:
            return getattr(self._raw, name)

    return property(get, doc=f"The raw env's ``{name}``.")


def _fast(base: type, guarded: bool = False) -> type:
    def init(self: Any, env: AECEnv, *args: Any, **kwargs: Any) -> None:
        base.__init__(self, env, *args, **kwargs)
        self._raw = env.unwrapped

    namespace: dict[str, Any] = {
        "__init__": init,
        "__doc__": f"PettingZoo's ``{base.__name__}`` with direct forwarding of {', '.join(HOT_ATTRIBUTES)}.",
        "__module__": __name__,
        "__str__": lambda self: str(self.env),
        # Jupyter's inline display (PettingZoo's __getattr__ refuses private names).
        "_repr_svg_": lambda self: self._raw._repr_svg_(),
    }
    for name in HOT_ATTRIBUTES:
        namespace[name] = _forward(name, guarded and not name.startswith("_"))
    return type(base.__name__, (base,), namespace)


def _refuse_bools(raw: Any, action: Any) -> None:
    """A ``bool`` is not an action number (numpy would read it as a mask index)."""
    if type(action) is int:
        return
    if is_flag(action) or (isinstance(action, np.ndarray) and action.dtype == np.bool_):
        last = raw.action_space(raw.agent_selection).n - 1
        raise CarnacError(f"action {action!r} is a bool; expected an action number, 0 to {last}")


class TerminateIllegalWrapper(_fast(wrappers.TerminateIllegalWrapper)):  # type: ignore[misc]
    """PettingZoo's ``TerminateIllegalWrapper`` (an illegal move loses), with one legality
    check per step, direct forwarding, a package error for ``bool`` actions and no growing
    ``EnvLogger`` queue."""

    def observe(self, agent: Any) -> Any:
        """The raw env's observation (PettingZoo's wrapper keeps a copy to read the mask from;
        this one reads the raw env's live mask in :meth:`step` instead)."""
        return self.env.observe(agent)

    def step(self, action: Any) -> None:
        """As PettingZoo's wrapper, with the legality of ``action`` checked once, against the
        raw env's mask for the agent to act, and a legal action played without a second check.

        Raises:
            CarnacError: ``action`` is a bool (``True`` is not an action number).
        """
        raw = self._raw
        _refuse_bools(raw, action)
        agent = raw.agent_selection
        done = raw.terminations.get(agent, False) or raw.truncations.get(agent, False)
        if done or agent not in raw.terminations:
            if self._terminated and done:
                raw._was_dead_step(action)
            else:
                self.env.step(action)  # the raw env handles (or refuses) a done agent's step
            return
        move = as_action(action)
        if type(move) is int and raw._tracker.is_legal(move):
            raw._play(move)
            return
        queued = len(EnvLogger.mqueue)
        try:
            EnvLogger.warn_on_illegal_move()
        finally:
            del EnvLogger.mqueue[queued:]
        raw._cumulative_rewards[agent] = 0
        raw.terminations = dict.fromkeys(raw.agents, True)
        raw.truncations = dict.fromkeys(raw.agents, True)
        raw.rewards = dict.fromkeys(raw.truncations, 0)
        raw.rewards[agent] = float(self._illegal_value)
        raw._accumulate_rewards()
        raw._deads_step_first()
        self._terminated = True


class AssertOutOfBoundsWrapper(_fast(wrappers.AssertOutOfBoundsWrapper)):  # type: ignore[misc]
    """PettingZoo's ``AssertOutOfBoundsWrapper`` with direct forwarding, and a plain ``int``
    action checked against the space's size without going through ``Discrete.contains``."""

    def step(self, action: Any) -> None:
        """As PettingZoo's wrapper: assert that ``action`` is in the action space (or ``None``
        for an agent that is done), then step."""
        if type(action) is int:
            raw = self._raw
            assert 0 <= action < raw.board.num_actions, "action is not in action space"
            self.env.step(action)
        else:
            super().step(action)


class OrderEnforcingWrapper(_fast(wrappers.OrderEnforcingWrapper, guarded=True)):  # type: ignore[misc]
    """PettingZoo's ``OrderEnforcingWrapper`` with direct forwarding; a ``bool`` action is refused
    here, before ``AssertOutOfBoundsWrapper`` would assert on it."""

    def __init__(self, env: AECEnv) -> None:
        super().__init__(env)
        # With only this module's wrappers inside, an observation is the raw env's (they
        # pass observe through), so observe() and last() may read it directly.
        inner, layers = env, []
        while inner is not self._raw:
            layers.append(type(inner))
            inner = inner.env
        self._direct = set(layers) <= {AssertOutOfBoundsWrapper, TerminateIllegalWrapper}
        # The exact chain of wrap(): a plain int action may go straight to the illegal-move check.
        self._terminate = env.env if layers == [AssertOutOfBoundsWrapper, TerminateIllegalWrapper] else None

    def step(self, action: Any) -> None:
        """As PettingZoo's wrapper, after refusing ``bool`` actions with a CarnacError. With the
        chain of :func:`wrap` and a plain ``int``, the out-of-bounds assertion and the
        illegal-move check run here, without a call per layer."""
        if self._terminate is not None and type(action) is int and self._has_reset and self._raw.agents:
            self._has_updated = True
            assert 0 <= action < self._raw.board.num_actions, "action is not in action space"
            self._terminate.step(action)
            return
        if self._has_reset:
            _refuse_bools(self._raw, action)
        super().step(action)

    def observe(self, agent: Any) -> Any:
        """As PettingZoo's wrapper (an error before reset), read straight from the raw env."""
        if self._direct and self._has_reset:
            return self._raw.observe(agent)
        return super().observe(agent)

    def last(self, observe: bool = True) -> tuple:
        """``AECEnv.last()``: the observation, cumulative reward, termination, truncation and
        info of ``agent_selection``, read straight from the raw env."""
        if not (self._direct and self._has_reset):
            return super().last(observe)
        raw = self._raw
        agent = raw.agent_selection
        return (
            raw.observe(agent) if observe else None,
            raw._cumulative_rewards[agent],
            raw.terminations[agent],
            raw.truncations[agent],
            raw.infos[agent],
        )


def wrap(raw: AECEnv, illegal_reward: float = -1) -> AECEnv:
    """Wrap ``raw`` as PettingZoo's classic environments are wrapped (see the module docstring)."""
    env: AECEnv = TerminateIllegalWrapper(raw, illegal_reward=illegal_reward)
    env = AssertOutOfBoundsWrapper(env)
    return OrderEnforcingWrapper(env)
