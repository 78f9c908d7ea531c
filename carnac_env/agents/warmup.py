"""Compiling the agents' engine before the first game, with a word about it.

The batched rules, the search and greedy's lookahead are numba functions with ``cache=True``:
the first use on a machine compiles them (about :data:`COMPILE_SECONDS` seconds, once) and
later runs load the machine code from numba's cache. Without a word, a first arena sits at
its first megalith while that happens. :func:`warm_up` plays a few plies with each built-in
agent of an arena, on tiny budgets, before its games start (so that its worker processes load
the cache instead of compiling side by side), and says on stderr that it is compiling when
that takes more CPU time than loading the cache does, then how long it took.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterable

from carnac_env.core.boards import Board
from carnac_env.errors import CarnacError

__all__ = ["COMPILE_SECONDS", "warm_up"]

#: The first compilation's cost, as measured (the README's first-run figure): the notice says it.
COMPILE_SECONDS = 30

#: Budget options set low for the warm-up: the same functions compile for any budget.
_SMALL = {"sims": "2", "seconds": "0"}


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def warm_up(specs: Iterable[str], board: Board, say: Callable[[str], None] | None = _say, after: float = 3.0) -> float:
    """Play four plies with each built-in agent of ``specs`` (its other options kept, budgets
    cut) on ``board``, compiling what its games will run; returns the seconds it took.

    When that has taken ``after`` seconds of CPU time (a cold cache), ``say`` (stderr by
    default; None: silent) is told ``compiling the game engine (first run only, about N s)...``,
    and at the end how long it took. Specs naming your own code are left alone (nothing is
    imported), and a spec that does not build is left to the arena to report.
    """
    from carnac_env.agents.base import options_of
    from carnac_env.agents.registry import builtin
    from carnac_env.agents.specs import make, parse_spec
    from carnac_env.core.game import GameState

    start, cpu = time.monotonic(), time.process_time()
    told, done = threading.Event(), threading.Event()

    def notice() -> None:
        # CPU time, not wall time: on a busy machine a loaded cache can take seconds of wall time
        while True:
            finished = done.wait(0.1)  # checked once more after the warm-up, however quick it was
            if time.process_time() - cpu >= after:
                told.set()
                if say is not None:
                    say(f"compiling the game engine (first run only, about {COMPILE_SECONDS} s)...")
                return
            if finished:
                return

    watcher = threading.Thread(target=notice, daemon=True)
    watcher.start()
    try:
        for spec in dict.fromkeys(specs):
            name, options = parse_spec(spec)
            cls = builtin(name)
            if cls is None:
                continue
            known = options_of(cls)
            options.update({key: value for key, value in _SMALL.items() if key in known})
            try:
                agent = make(":".join([name, *(f"{key}={value}" for key, value in options.items())]))
                state = GameState(board)
                for _ in range(4):
                    if state.is_over:
                        break
                    state.apply(int(agent.act(state)))
            except CarnacError:
                continue
    finally:
        done.set()
        watcher.join()
    seconds = time.monotonic() - start
    if told.is_set() and say is not None:
        say(f"compiled in {seconds:.0f} s; later runs load it from numba's cache")
    return seconds
