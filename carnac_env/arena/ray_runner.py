"""Arena games as Ray tasks, on a cluster or on a local Ray started for the run.

The same contract as :func:`carnac_env.arena.runner.local_games`: the finished games come
back as ``(key, line)`` in any order, and the caller stores them in the same
``games.jsonl``. A game's line depends only on the board, the agents and the game's seed,
so the files are identical to a ``--workers`` run with the same settings. A task lost with
a worker or a node is retried by Ray (``max_retries``); leaving the ``with`` block early
(an error, Ctrl-C, SIGTERM) cancels the tasks still running, so only finished games,
already written, remain.

Ray is optional (``pip install 'carnac-env[ray]'``) and imported only here, only when an
arena is run with ``ray=...``. Agents named by an import path must be importable on every
node (installed there, or shipped with a Ray ``runtime_env``), like any Ray task's code.
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from carnac_env.arena.runner import Finished, play_pinned_game
from carnac_env.arena.schedule import ArenaGame
from carnac_env.core.boards import Board
from carnac_env.errors import CarnacError

#: ``ray=LOCAL`` (the CLI's ``--ray`` without an address) starts a Ray for the run.
LOCAL = "local"
#: Retries of a game whose worker process or node was lost.
MAX_RETRIES = 3
#: Seconds to wait for a ``host:port`` address to answer before calling it wrong.
CONNECT_TIMEOUT = 5.0


def import_ray(purpose: str = "running the arena on Ray") -> Any:
    """The ``ray`` module, or CarnacError naming the extra that installs it (and ``purpose``)."""
    try:
        import ray
    except ImportError:
        raise CarnacError(f"{purpose} needs Ray: pip install 'carnac-env[ray]'") from None
    return ray


def check_address(address: str) -> None:
    """Refuse a ``host:port`` address that does not answer (before Ray spends minutes on it).

    ``local``, ``auto`` and ``ray://`` client addresses are left to Ray.

    Raises:
        CarnacError: naming the address and what was expected.
    """
    if not isinstance(address, str) or not address.strip():
        raise CarnacError(f"a Ray address must be text such as 'auto' or 'HOST:PORT', got {address!r}")
    if address in (LOCAL, "auto") or "://" in address:
        return
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit() or not port.isascii() or not 0 < int(port) < 65536:
        raise CarnacError(f"Ray address {address!r} is not HOST:PORT (e.g. 10.0.0.5:6379), 'auto' or 'local'")
    try:
        socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT).close()
    except OSError as err:
        raise CarnacError(
            f"no Ray cluster answers at {address} ({err.strerror or err}); start one there with "
            "`ray start --head`, or use --ray auto (the cluster of this machine) or --ray alone (a local Ray)"
        ) from None


@contextmanager
def ray_session(address: str, num_cpus: int | None = None) -> Iterator[Any]:
    """Ray, connected: the session already open in this process, or one started for the
    block (a new local Ray for :data:`LOCAL`, with ``num_cpus`` CPUs; else the cluster at
    ``address``), shut down when the block ends."""
    ray = import_ray()
    if ray.is_initialized():
        yield ray
        return
    check_address(address)
    options: dict[str, Any] = {"logging_level": logging.ERROR, "log_to_driver": False}
    if address == LOCAL:
        options.update(include_dashboard=False, num_cpus=num_cpus)
    else:
        options["address"] = address
    try:
        ray.init(**options)
    except (ConnectionError, RuntimeError, ValueError, TimeoutError) as err:
        raise CarnacError(f"cannot connect to a Ray cluster at {address!r}: {err}") from None
    try:
        yield ray
    finally:
        ray.shutdown()


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
