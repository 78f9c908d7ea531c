"""Arena games as Ray tasks, on a cluster or on a local Ray started for the run.

The same contract as :func:`carnac_env.arena.runner.local_games`: the finished games come
back as ``(key, line)`` in any order, and the caller stores them in the same
``games.jsonl``. A game's line depends only on the board, the agents and the game's seed,
so the files are identical to a ``--workers`` run with the same settings. A task lost with
a worker or a node is retried by Ray (``max_retries``); leaving the ``with`` block early
(an error, Ctrl-C, SIGTERM) cancels the tasks still running, so only finished games,
already written, remain.

Ray is optional (``pip install 'carnac-env[ray]'``) and imported (by :mod:`carnac_env._ray`)
only when an arena is run with ``ray=...``. Agents named by an import path must be importable on every
node (installed there, or shipped with a Ray ``runtime_env``), like any Ray task's code.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from carnac_env._ray import MAX_RETRIES
from carnac_env.arena.runner import Finished, play_pinned_game
from carnac_env.arena.schedule import ArenaGame
from carnac_env.core.boards import Board
from carnac_env.errors import CarnacError


def ray_games(ray: Any, board: Board, games: list[ArenaGame]) -> Iterator[Finished]:
    """Play ``games`` as Ray tasks and yield each as it finishes; a few tasks per CPU are in
    flight at a time. Closing the generator (or an error) cancels the tasks still running.

    Raises:
        CarnacError: an agent failed in a task (its own error, unwrapped).
    """
    from carnac_env.models import pinned_files

    play = ray.remote(num_cpus=1, max_retries=MAX_RETRIES)(play_pinned_game)
    board_ref = ray.put(board)
    models_ref = ray.put(pinned_files())  # the model files' bytes this process loaded: played as they are
    window = max(2, 2 * int(ray.cluster_resources().get("CPU", 1)))
    queue = list(reversed(games))
    running: list[Any] = []
    try:
        while queue or running:
            while queue and len(running) < window:
                running.append(play.remote(board_ref, queue.pop(), models_ref))
            ready, running = ray.wait(running, num_returns=1)
            yield _result(ray, ready[0])
    finally:
        for ref in running:
            ray.cancel(ref, force=True)


def _result(ray: Any, ref: Any) -> Finished:
    try:
        return ray.get(ref)
    except ray.exceptions.RayTaskError as err:
        cause = getattr(err, "cause", None)
        if isinstance(cause, CarnacError):
            raise CarnacError(str(cause)) from None
        raise
