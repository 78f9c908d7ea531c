"""Compiling the agents' engine before the first game, with a word about it.

The batched rules, the search and greedy's lookahead are numba functions with ``cache=True``:
the first use on a machine compiles them (about :data:`COMPILE_SECONDS` seconds, once) and
later runs load the machine code from numba's cache. Without a word, a first arena sits at
its first megalith while that happens. :func:`warm_up` plays one whole game with each built-in
agent of an arena (against itself, on the arena's board, on tiny budgets) before its games
start, so that its worker processes load the cache instead of compiling side by side, and says
on stderr that it is compiling when that takes more CPU time than loading the cache does, then
how long it took.

A whole game, not a few plies: some functions are first called late in a game, and compiled
there, mid-arena, they stalled the first arena's bar for half a minute. The search's tree reuse
(:func:`~carnac_env.search.tree.restrict_root_edges` on a reused root, and
:func:`~carnac_env.search.tree.compact` once a reused tree fills its arrays) runs only after a
few moves with enough simulations to reach the next position, and the endgame solver (the
``solve`` option) only near the end of the supply.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from carnac_env.core.boards import Board
from carnac_env.errors import CarnacError

__all__ = ["COMPILE_SECONDS", "warm_up"]

#: The first compilation's cost, as measured (the README's first-run figure): the notice says it.
COMPILE_SECONDS = 75

#: Budget options capped for the warm-up (the same functions compile for any budget): at most
#: this many simulations (enough for the tree reuse to find the next position; 2 were too few),
#: playouts per leaf and megaliths left for the solver (0 stays 0: off).
_CAPS = {"sims": 8, "playouts": 1, "solve": 2}
#: Options set for the warm-up: no time budget (the simulations cap holds).
_SET = {"seconds": 0}


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def warm_up(
    specs: Iterable[str],
    board: Board,
    say: Callable[[str], None] | None = _say,
    after: float = 3.0,
    also: Callable[[], None] | None = None,
) -> float:
    """Play one game to its end with each built-in agent of ``specs`` against itself (its other
    options kept, budgets cut: :data:`_CAPS`) on ``board``, compiling what its games will run,
    then call ``also`` (other work to compile under the same notice: the server's analysis);
    returns the seconds it took.

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
            try:
                options.update(_small(options_of(cls), options))
                agent = make(":".join([name, *(f"{key}={value}" for key, value in options.items())]))
                state = GameState(board)
                while not state.is_over:
                    state.apply(int(agent.act(state)))
            except CarnacError:
                continue
        if also is not None:
            also()
    finally:
        done.set()
        watcher.join()
    seconds = time.monotonic() - start
    if told.is_set() and say is not None:
        say(f"compiled in {seconds:.0f} s; later runs load it from numba's cache")
    return seconds


def _small(known: dict[str, Any], options: dict[str, str]) -> dict[str, str]:
    """The budget options of an agent with options ``known`` (given as ``options``) cut for
    the warm-up. Raises CarnacError for a value that does not check (the arena reports it)."""
    small = {key: str(value) for key, value in _SET.items() if key in known}
    for key, cap in _CAPS.items():
        if key in known:
            option = known[key]
            try:
                value = option.parse(options[key]) if key in options else option.default
            except ValueError as err:
                raise CarnacError(f"option {key}={options[key]!r} is {err}") from None
            small[key] = str(min(value, cap))
    return small
