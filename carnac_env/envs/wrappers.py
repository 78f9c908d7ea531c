"""``carnac_env.env()``'s wrapper: PettingZoo's standard wrapper chain, as one layer of our own.

PettingZoo's classic environments wrap their raw env in ``TerminateIllegalWrapper``,
``AssertOutOfBoundsWrapper`` and ``OrderEnforcingWrapper``. Those reach the raw env's
attributes (``agent_selection``, ``terminations``, ``rewards`` ...) through ``__getattr__``,
which Python calls only after a failed normal lookup, and the first keeps the last observation
to read its mask before the raw env checks the action again; three layers of that cost more per
move than Carnac's rules do (benchmarks/aec_throughput.py measures both chains).

:class:`StandardWrapper` does what the three do, in one layer:

* **order** (``OrderEnforcingWrapper``): before ``reset``, ``step``, ``observe``, ``render``,
  ``state`` and ``agent_iter`` raise PettingZoo's errors and ``agent_selection``, ``agents``,
  ``rewards``, ``terminations``, ``truncations``, ``infos`` (and ``num_agents``) raise
  ``AttributeError``; a step with no agents left warns; a loop over ``agent_iter`` must step;
* **bounds** (``AssertOutOfBoundsWrapper``): an action outside the action space (other than
  ``None`` for an agent that is done) fails an ``assert``;
* **illegal moves** (``TerminateIllegalWrapper``): an action the rules refuse ends the game,
  ``illegal_reward`` (-1) for the offender and 0 for the other, both agents terminated and
  truncated (:meth:`~carnac_env.envs.aec.raw_env.forfeit`).

The legality of an action is checked once, against the raw env's live mask
(:attr:`~carnac_env.envs.aec.raw_env.tracker`), and a legal one is played without a second
check (:meth:`~carnac_env.envs.aec.raw_env.play_legal`). The wrapper is a
``pettingzoo.utils.BaseWrapper`` (the base PettingZoo gives wrappers: other attributes reach the
raw env through it), uses PettingZoo's public names only (``EnvLogger``'s error helpers,
``AECIterable``) and the raw env's public API, and touches no private member of either.

Where it differs from the stock chain: a ``bool`` action (``step(True)``) raises
:class:`~carnac_env.errors.CarnacError` instead of numpy's ambiguous-truth error; the
illegal-move warning (PettingZoo's words) goes to the standard :mod:`logging` logger
``carnac_env.envs.wrappers`` instead of PettingZoo's ``EnvLogger``, whose module-level queue
would grow by two entries for every illegal move for the life of the process; and the wrapped
env is not an instance of PettingZoo's three wrapper classes.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import numpy as np
from pettingzoo import AECEnv
from pettingzoo.utils import BaseWrapper
from pettingzoo.utils.env import AECIterable
from pettingzoo.utils.env_logger import EnvLogger

from carnac_env._checks import is_flag
from carnac_env.envs.options import as_action
from carnac_env.errors import CarnacError

__all__ = ["ILLEGAL_MOVE_WARNING", "StandardWrapper", "wrap"]

#: The raw env's attributes read on every step; the wrapper reads them directly (an error before reset).
HOT_ATTRIBUTES = ("agent_selection", "agents", "terminations", "truncations", "rewards", "infos")
#: What ``OrderEnforcingWrapper`` refuses to read before ``reset``.
GUARDED = (*HOT_ATTRIBUTES, "num_agents")
#: What an illegal move logs (PettingZoo's ``EnvLogger.warn_on_illegal_move`` text).
ILLEGAL_MOVE_WARNING = (
    "[WARNING]: Illegal move made, game terminating with current player losing. \n"
    "obs['action_mask'] contains a mask of all legal moves that can be chosen."
)

_LOG = logging.getLogger(__name__)


def _forward(name: str) -> property:
    def get(self: StandardWrapper) -> Any:
        if not self._has_reset:
            raise AttributeError(f"{name} cannot be accessed before reset")
        return getattr(self._raw, name)

    return property(get, doc=f"The raw env's ``{name}`` (an AttributeError before ``reset``).")


class _Turns(AECIterable):
    """``agent_iter()``: the agent to act, turn after turn, while agents are left and
    ``max_iter`` allows; as PettingZoo's order-enforcing iterator, each turn must be stepped."""

    def __iter__(self) -> Iterator[str]:  # type: ignore[override]
        wrapper, left = self.env, self.max_iter
        raw = wrapper.unwrapped
        while raw.agents and left > 0:
            left -= 1
            assert wrapper._has_updated, "need to call step() or reset() in a loop over `agent_iter`"
            wrapper._has_updated = False
            yield raw.agent_selection


class StandardWrapper(BaseWrapper):
    """PettingZoo's standard wrapper chain in one layer (see the module docstring).

    Args:
        env: a carnac raw env (:class:`~carnac_env.envs.aec.raw_env`).
        illegal_reward: the reward of an agent whose move the rules refuse (-1, as PettingZoo's
            classic environments).
    """

    def __init__(self, env: AECEnv, illegal_reward: float = -1) -> None:
        super().__init__(env)
        self._raw = env.unwrapped
        self.illegal_reward = float(illegal_reward)
        self._has_reset = False
        self._has_updated = False

    def __getattr__(self, name: str) -> Any:
        """Other attributes, from the raw env (``BaseWrapper``'s forwarding); before ``reset``,
        an AttributeError for :data:`GUARDED` (a property that raises falls back to here)."""
        if name in GUARDED and not self.__dict__.get("_has_reset", False):
            raise AttributeError(f"{name} cannot be accessed before reset")
        return super().__getattr__(name)

    # ----------------------------------------------------------------- order
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start a game (see :meth:`~carnac_env.envs.aec.raw_env.reset`)."""
        self._has_reset = True
        self._has_updated = True
        self._raw.reset(seed=seed, options=options)

    def observe(self, agent: Any) -> Any:
        """The raw env's observation of ``agent`` (an error before ``reset``)."""
        if not self._has_reset:
            EnvLogger.error_observe_before_reset()
        return self._raw.observe(agent)

    def last(self, observe: bool = True) -> tuple:
        """``AECEnv.last()``: the observation, cumulative reward, termination, truncation and
        info of ``agent_selection`` (an AttributeError before ``reset``)."""
        if not self._has_reset:
            raise AttributeError("agent_selection cannot be accessed before reset")
        return self._raw.last(observe)

    def render(self) -> Any:
        """The raw env's drawing (an error before ``reset``)."""
        if not self._has_reset:
            EnvLogger.error_render_before_reset()
        return self._raw.render()

    def state(self) -> np.ndarray:
        """The raw env's ``state()`` (an error before ``reset``)."""
        if not self._has_reset:
            EnvLogger.error_state_before_reset()
        return self._raw.state()

    def agent_iter(self, max_iter: int = 2**63) -> AECIterable:
        """The agents in turn (an error before ``reset``; each turn must be stepped)."""
        if not self._has_reset:
            EnvLogger.error_agent_iter_before_reset()
        return _Turns(self, max_iter)

    # ----------------------------------------------------------------- the step
    def step(self, action: Any) -> None:
        """Play ``action`` for ``agent_selection``, as the stock chain would (see the module docstring).

        Raises:
            AssertionError: before ``reset``, or an action outside the action space.
            CarnacError: a ``bool`` action, or an action other than ``None`` for an agent that is done.
        """
        if not self._has_reset:
            EnvLogger.error_step_before_reset()
        raw = self._raw
        if not raw.agents:
            self._has_updated = True
            EnvLogger.warn_step_after_terminated_truncated()
            return
        self._has_updated = True
        agent = raw.agent_selection
        done = raw.terminations[agent] or raw.truncations[agent]
        if type(action) is int:  # the common case: no call into the action space
            assert 0 <= action < raw.board.num_actions, "action is not in action space"
        else:
            _refuse_bools(raw, action)
            assert (action is None and done) or raw.action_space(agent).contains(action), (
                "action is not in action space"
            )
        if done:
            raw.step(action)  # None removes the agent; the raw env refuses anything else
            return
        move = as_action(action)
        if type(move) is int and raw.tracker.is_legal(move):
            raw.play_legal(move)
            return
        _LOG.warning(ILLEGAL_MOVE_WARNING)
        raw.forfeit(self.illegal_reward)

    # ----------------------------------------------------------------- display
    def __str__(self) -> str:
        return str(self._raw)

    def _repr_svg_(self) -> str:
        """Jupyter's inline display: the raw env's picture (BaseWrapper refuses private names)."""
        return self._raw._repr_svg_()


for _name in HOT_ATTRIBUTES:
    setattr(StandardWrapper, _name, _forward(_name))


def _refuse_bools(raw: Any, action: Any) -> None:
    """A ``bool`` is not an action number (numpy would read it as a mask index)."""
    if is_flag(action) or (isinstance(action, np.ndarray) and action.dtype == np.bool_):
        last = raw.action_space(raw.agent_selection).n - 1
        raise CarnacError(f"action {action!r} is a bool; expected an action number, 0 to {last}")


def wrap(raw: AECEnv, illegal_reward: float = -1) -> AECEnv:
    """Wrap ``raw`` as PettingZoo's classic environments are wrapped (see the module docstring)."""
    return StandardWrapper(raw, illegal_reward=illegal_reward)
