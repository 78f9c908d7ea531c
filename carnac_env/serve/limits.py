"""The limits of ``carnac serve``: every bound the server keeps against its requests, and the
checks that enforce the ones a request carries (docs/security.md states each, with its limits).

* **Sizes.** A request body of at most :data:`MAX_BODY` bytes (413 beyond; beyond
  :data:`MAX_READ` the connection is closed unread), headers of at most :data:`MAX_HEADER`.
* **Work.** At most :data:`MAX_QUEUE` games wait for a worker; a request that would add one more
  is answered 503 with ``Retry-After: RETRY_AFTER`` (the scheduler, :mod:`.games`, keeps it);
  the search memory is bounded by ``--memory`` (default :data:`DEFAULT_MEMORY_MB`; the ledger:
  :mod:`.budget`).
* **Hosts.** A server on a loopback address answers requests addressed to this machine only
  (:func:`host_allowed`, :func:`is_loopback`): no DNS rebinding.
* **Cross-site requests.** A request that changes a game must be JSON and carry this server's
  Origin, or the page's token in :data:`TOKEN_HEADER` (:func:`check_same_site`); every answer
  carries :data:`SECURITY_HEADERS` (never framed).
* **Connections.** At most :data:`MAX_CONNECTIONS` open at once (:func:`connection_limit`: at
  most half the file limit), each closed after :data:`TIMEOUT` seconds of waiting; running out
  of descriptors pauses accepting for :data:`ACCEPT_PAUSE` s (the listening side that keeps
  them: :mod:`.connections`).

This module needs the standard library only (no Tornado), so ``carnac serve --help`` and the
package's own ``carnac_env.serve`` import it at once.
"""

from __future__ import annotations

import secrets
from typing import Any

from carnac_env.errors import CarnacError

#: The search memory of ``carnac serve`` unless ``--memory`` says otherwise, in MB.
DEFAULT_MEMORY_MB = 1024
#: The largest request body accepted, in bytes (a move is a few dozen): a larger one is
#: answered 413; beyond :data:`MAX_READ` the connection is closed unread.
MAX_BODY = 16 * 1024
MAX_READ = 1 << 20
#: The largest request header accepted, in bytes.
MAX_HEADER = 16 * 1024
#: Games whose agent may wait for a worker thread at once; a request that would add one more
#: is answered 503 with ``Retry-After`` (nothing is played).
MAX_QUEUE = 32
#: The seconds a 503 asks the client to wait.
RETRY_AFTER = 2
#: The most connections open at once (at most half the process's file limit): when one more
#: comes, the oldest is closed, so connections left half-open cannot shut others out.
MAX_CONNECTIONS = 128
#: Seconds a connection may take to send a request's headers, or its body, or stay idle
#: between two requests; then it is closed (Tornado's default is an hour).
TIMEOUT = 10.0
#: Seconds the server stops accepting when the process runs out of file descriptors.
ACCEPT_PAUSE = 0.5

#: The headers of every answer: never framed (clickjacking), never sniffed, no referrer, and
#: the page may load nothing but itself (its script and styles are inline).
SECURITY_HEADERS = {
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; "
        "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
    ),
}
#: The header carrying the page's token (see :func:`check_same_site`).
TOKEN_HEADER = "X-Carnac-Token"


class RefusedError(CarnacError):
    """A request this server does not answer: another host, a cross-site request (403)."""


class MediaTypeError(CarnacError):
    """A request body that is not declared JSON (415)."""


def is_loopback(host: str) -> bool:
    """Whether every address ``host`` names is a loopback one (127.0.0.0/8, ::1): ``localhost``,
    ``127.0.0.2``, ``127.1``, ``::1``. An unresolvable host is not."""
    import ipaddress
    import socket

    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        return False
    addresses = {info[4][0].split("%")[0] for info in infos}
    return bool(addresses) and all(ipaddress.ip_address(a).is_loopback for a in addresses)


def own_names(host: str) -> frozenset[str]:
    """The names a server on ``host`` answers to besides IP addresses and localhost: the host
    given (if a name) and this machine's names."""
    import socket

    names = {host.lower().strip("[]")}
    for name in (socket.gethostname(), socket.getfqdn()):
        if name:
            names.add(name.lower().rstrip("."))
    return frozenset(names)


def host_allowed(name: str, loopback: bool, names: frozenset[str] = frozenset()) -> bool:
    """Whether a request whose Host header names ``name`` (no port) is for this server.

    A server on a loopback address answers ``localhost`` and any loopback address (all of
    127.0.0.0/8 and ::1): a page elsewhere cannot reach it by pointing its own domain name at
    127.0.0.1 (DNS rebinding). A server on another address answers any IP address, ``localhost``
    and the machine's own names (``names``), which also refuses rebinding, whose Host is
    always the attacker's domain name.
    """
    import ipaddress

    name = name.lower().rstrip(".")
    if name.startswith("[") and name.endswith("]"):
        name = name[1:-1]
    if name == "localhost":
        return True
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        address = _legacy_ipv4(name)  # 127.1, 2130706433: numbers still, never a DNS name
        if address is None:
            return not loopback and name in names
    return address.is_loopback or not loopback


def _legacy_ipv4(name: str) -> Any:
    """The IPv4 address that a numeric shorthand such as ``127.1`` names (as ``inet_aton``
    reads it), or None for anything else."""
    import ipaddress
    import socket

    if not name or any(c not in "0123456789abcdefx." for c in name) or not name[0].isdigit():
        return None
    try:
        return ipaddress.IPv4Address(socket.inet_aton(name))
    except OSError:
        return None


def check_same_site(request: Any, token: str) -> None:
    """Refuse a request that changes a game unless it is JSON (``Content-Type:
    application/json``: a page elsewhere cannot send that without asking first, and it is never
    told yes) and comes from this server's own page: an ``Origin`` of this server, or, without
    an Origin, the page's ``token`` in :data:`TOKEN_HEADER`. ``request`` is Tornado's (its
    ``headers``, ``protocol`` and ``host``).

    Raises:
        MediaTypeError: not JSON (415); RefusedError: from another site, or neither an Origin
            nor the token (403).
    """
    media = request.headers.get("Content-Type", "").split(";")[0].strip().lower()
    if media != "application/json":
        raise MediaTypeError(
            f"a request that changes a game must be JSON (Content-Type: application/json), not {media or 'untyped'!r}"
        )
    if request.headers.get("Sec-Fetch-Site", "same-origin") not in ("same-origin", "none"):
        raise RefusedError("a request from another site is refused (Sec-Fetch-Site)")
    origin = request.headers.get("Origin")
    own = f"{request.protocol}://{request.host}"
    if origin is not None:
        if origin.lower() != own.lower():
            raise RefusedError(f"a request from another site is refused: its Origin is {origin[:100]!r}, not {own}")
    elif not secrets.compare_digest(request.headers.get(TOKEN_HEADER, ""), token):
        raise RefusedError(
            f"a request that changes a game needs an Origin header naming this server ({own}), "
            f"or the page's token in {TOKEN_HEADER}"
        )


def connection_limit(wanted: int = MAX_CONNECTIONS) -> int:
    """``wanted``, or less where the process's file limit is low: at most half the limit,
    less a reserve for the files and pipes the server itself opens (at least 8)."""
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (ImportError, OSError, ValueError):
        return wanted
    if soft == getattr(resource, "RLIM_INFINITY", -1) or soft <= 0:
        return wanted
    return max(8, min(wanted, (soft - 32) // 2))
