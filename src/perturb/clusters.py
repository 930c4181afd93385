"""Reaching a Dask scheduler or a Ray cluster within a bounded time: an address that is closed,
silent or not a scheduler is one PlacementError naming it, where Dask would wait for a handshake
without limit and Ray retry for minutes. ``RAY_ADDRESS`` names the Ray cluster when no address is given."""
from __future__ import annotations

import os
import socket
from typing import Any

from .errors import MissingResourceError, PlacementError

DEFAULT_CONNECT_TIMEOUT = 5.0    # seconds to reach a Dask scheduler or a Ray cluster before giving up


def _unreachable(named: str, what: str, timeout: float, why: str) -> PlacementError:
    return PlacementError(f"{named}: cannot reach a {what} there ({why}; waited up to {timeout:g} s); check "
                          f"the address and that it is running, or wait longer with --connect-timeout SECONDS")


def _why(error: BaseException) -> str:
    """A connection failure in a few words: the OS's reason, else "no answer"."""
    reason = getattr(error, "strerror", None)
    if reason:
        return str(reason).lower()
    return "no answer" if isinstance(error, TimeoutError) or "timed out" in str(error).lower() else type(error).__name__


def _dask_hello(scheduler: str, timeout: float) -> None:
    """Open and close one connection to ``scheduler``, handshake included, within ``timeout`` seconds
    (a Dask client waits for the handshake without a limit: a silent address would hang it)."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    from distributed.comm import connect

    async def hello() -> None:
        comm = await asyncio.wait_for(connect(scheduler, timeout=timeout), timeout)
        await comm.close()

    with ThreadPoolExecutor(1) as thread:            # its own event loop, whatever runs in this thread
        thread.submit(asyncio.run, hello()).result()


def connect_dask(scheduler: str, timeout: float = DEFAULT_CONNECT_TIMEOUT) -> Any:
    """A Dask client of ``scheduler``, reached within ``timeout`` seconds; else a PlacementError in one line."""
    from distributed import Client

    try:
        _dask_hello(scheduler, timeout)
        return Client(scheduler, timeout=timeout)
    except (OSError, TimeoutError) as e:
        raise _unreachable(f"--scheduler {scheduler}", "Dask scheduler", timeout, _why(e)) from None
    except ValueError as e:
        raise PlacementError(f"--scheduler {scheduler}: not a Dask scheduler address ({e}); expected "
                             "tcp://HOST:PORT") from None


def ray_address(scheduler: str | None) -> str | None:
    """The Ray cluster a run joins: ``scheduler``, else ``RAY_ADDRESS`` (as ``ray.init`` reads it), else None."""
    return scheduler or os.environ.get("RAY_ADDRESS") or None


def _host_port(address: str) -> tuple[str, int] | None:
    """(host, port) of ``HOST:PORT`` or ``ray://HOST:PORT``; None for ``auto`` and other forms Ray resolves."""
    host, sep, port = address.split("://", 1)[-1].rpartition(":")
    return (host.strip("[]") or "127.0.0.1", int(port)) if sep and port.isdigit() else None


# An HTTP/2 client's opening (preface, then an empty SETTINGS frame): a gRPC server, as Ray's GCS and
# Ray Client are, answers with its own SETTINGS frame at once (frame type 4, the header's 4th byte).
HTTP2_OPENING = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])
HTTP2_SETTINGS = 4


def grpc_silence(where: tuple[str, int], timeout: float) -> str | None:
    """Why no gRPC server answered at ``where`` (host, port) within ``timeout`` seconds; None if one did.
    Ray's own connection retries for minutes against an address that is closed, silent or not Ray."""
    try:
        with socket.create_connection(where, timeout=timeout) as conn:
            conn.sendall(HTTP2_OPENING)
            head = b""
            while len(head) < 4:
                chunk = conn.recv(9)
                if not chunk:
                    return "it closed the connection: not a Ray cluster's address?"
                head += chunk
    except OSError as e:
        return _why(e)
    return None if head[3] == HTTP2_SETTINGS else "it does not speak gRPC: not a Ray cluster's address?"


def start_ray(scheduler: str | None, timeout: float = DEFAULT_CONNECT_TIMEOUT, **local: Any) -> tuple[Any, bool]:
    """Ray, connected to ``scheduler`` (else ``RAY_ADDRESS``) or started here with ``local`` ``ray.init``
    options, unless this process already is; whether it was started now (then the caller shuts it
    down). A cluster whose address does not answer within ``timeout`` seconds is a PlacementError,
    where Ray itself would retry for minutes."""
    try:
        import ray
    except ImportError as e:
        raise MissingResourceError("--backend ray needs Ray: pip install ray") from e
    if ray.is_initialized():
        return ray, False
    address = ray_address(scheduler)
    if address is None:
        ray.init(log_to_driver=False, **local)
        return ray, True
    named = f"--scheduler {address}" if scheduler else f"RAY_ADDRESS={address}"
    where = _host_port(address)
    tls = os.environ.get("RAY_USE_TLS", "").lower() in ("1", "true")      # a TLS server awaits its handshake
    silence = grpc_silence(where, timeout) if where is not None and not tls else None
    if silence is not None:
        raise _unreachable(named, "Ray cluster", timeout, silence)
    try:
        ray.init(address=address, log_to_driver=False)
    except ConnectionError as e:
        raise PlacementError(f"{named}: {e}") from None
    return ray, True
