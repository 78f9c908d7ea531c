"""Ray, when a command is asked to run on it: the one place that imports it and connects.

Ray is optional (``pip install 'carnac-env[ray]'``): nothing imports it until a caller asks
for a Ray run (``carnac arena --ray``, ``carnac train --ray``, ``carnac solve --ray``), and
then :func:`import_ray` names the extra when it is missing. :func:`ray_session` connects to
a cluster (after :func:`check_address` has seen it answer) or starts a local Ray for the run.
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from carnac_env.errors import CarnacError

__all__ = ["CONNECT_TIMEOUT", "LOCAL", "MAX_RETRIES", "check_address", "import_ray", "ray_session"]

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
