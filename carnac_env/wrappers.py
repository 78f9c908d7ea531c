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
"""

from __future__ import annotations

from typing import Any

from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

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


TerminateIllegalWrapper = _fast(wrappers.TerminateIllegalWrapper)
AssertOutOfBoundsWrapper = _fast(wrappers.AssertOutOfBoundsWrapper)
OrderEnforcingWrapper = _fast(wrappers.OrderEnforcingWrapper, guarded=True)


def wrap(raw: AECEnv, illegal_reward: float = -1) -> AECEnv:
    """Wrap ``raw`` as PettingZoo's classic environments are wrapped (see the module docstring)."""
    env: AECEnv = TerminateIllegalWrapper(raw, illegal_reward=illegal_reward)
    env = AssertOutOfBoundsWrapper(env)
    return OrderEnforcingWrapper(env)
