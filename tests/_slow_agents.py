"""Agents for tests of work that takes time: one that sleeps before each move, one that waits
at a gate. Named by spec (``_slow_agents.Sleeper:seconds=0.3``), so the tests folder must be on
the path (it is under pytest, and spawned arena workers get it through PYTHONPATH).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import numpy as np


def first_legal(env: Any) -> int:
    """The first legal action of the player to act in ``env``."""
    return int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0])


class Sleeper:
    """Sleeps ``seconds`` before each move (the first legal one); counts its moves in
    :attr:`calls` (this process); touches ``marker`` (a path) when it first acts."""

    calls = 0
    lock = threading.Lock()

    def __init__(self, seed: int = 0, seconds: float = 0.2, marker: str = "") -> None:
        self.seconds = float(seconds)
        self.marker = marker

    def memory_need(self, board: Any) -> int:
        return 0  # it keeps nothing (carnac serve refuses an agent that does not say)

    def act(self, env: Any) -> int:
        with Sleeper.lock:
            Sleeper.calls += 1
        if self.marker:
            Path(self.marker).touch()
        time.sleep(self.seconds)
        return first_legal(env)


class Gate:
    """Waits at :attr:`gate` (a class-wide event) before each move; :attr:`entered` is set
    when one is waiting, :attr:`left` when one has moved on."""

    gate = threading.Event()
    entered = threading.Event()
    left = threading.Event()

    def __init__(self, seed: int = 0) -> None:
        pass

    def memory_need(self, board: Any) -> int:
        return 0  # it keeps nothing (carnac serve refuses an agent that does not say)

    def act(self, env: Any) -> int:
        Gate.entered.set()
        assert Gate.gate.wait(60)
        try:
            return first_legal(env)
        finally:
            Gate.left.set()

    @classmethod
    def shut(cls) -> None:
        cls.gate.clear()
        cls.entered.clear()
        cls.left.clear()
