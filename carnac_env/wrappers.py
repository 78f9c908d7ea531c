"""PettingZoo's standard wrappers, with the hot attributes forwarded directly.

``carnac_env.env()`` wraps the raw env in PettingZoo's ``TerminateIllegalWrapper``,
``AssertOutOfBoundsWrapper`` and ``OrderEnforcingWrapper``, exactly as PettingZoo's classic
environments do. Those wrappers reach the raw env's attributes (``agent_selection``,
``terminations``, ``rewards`` ...) through ``__getattr__``, which Python calls only after a
failed normal lookup; three layers of that cost more per move than Carnac's rules do
(about half the time of a random game through the standard loop, measured in
benchmarks/aec_throughput.py).

The classes here are subclasses of those three wrappers that add one thing: properties
that read those attributes straight from the raw env. Everything else (the illegal-move
termination with -1, the action-space assertion, the before-reset errors and the call
order checks) is inherited unchanged, and ``isinstance`` checks against PettingZoo's classes
still hold.

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
    if isinstance(action, bool | np.bool_) or (isinstance(action, np.ndarray) and action.dtype == np.bool_):
        last = raw.action_space(raw.agent_selection).n - 1
        raise CarnacError(f"action {action!r} is a bool; expected an action number, 0 to {last}")


class TerminateIllegalWrapper(_fast(wrappers.TerminateIllegalWrapper)):  # type: ignore[misc]
    """PettingZoo's ``TerminateIllegalWrapper`` (an illegal move loses), direct forwarding,
    a package error for ``bool`` actions and no growing ``EnvLogger`` queue."""

    def step(self, action: Any) -> None:
        """As PettingZoo's wrapper; see the module docstring for the two differences.

        Raises:
            CarnacError: ``action`` is a bool (``True`` is not an action number).
        """
        _refuse_bools(self._raw, action)
        queued = len(EnvLogger.mqueue)
        try:
            super().step(action)
        finally:
            del EnvLogger.mqueue[queued:]


AssertOutOfBoundsWrapper = _fast(wrappers.AssertOutOfBoundsWrapper)


class OrderEnforcingWrapper(_fast(wrappers.OrderEnforcingWrapper, guarded=True)):  # type: ignore[misc]
    """PettingZoo's ``OrderEnforcingWrapper`` with direct forwarding; a ``bool`` action is refused
    here, before ``AssertOutOfBoundsWrapper`` would assert on it."""

    def step(self, action: Any) -> None:
        """As PettingZoo's wrapper, after refusing ``bool`` actions with a CarnacError."""
        if self._has_reset:
            _refuse_bools(self._raw, action)
        super().step(action)


def wrap(raw: AECEnv, illegal_reward: float = -1) -> AECEnv:
    """Wrap ``raw`` as PettingZoo's classic environments are wrapped (see the module docstring)."""
    env: AECEnv = TerminateIllegalWrapper(raw, illegal_reward=illegal_reward)
    env = AssertOutOfBoundsWrapper(env)
    return OrderEnforcingWrapper(env)
