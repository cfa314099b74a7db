"""The httpx client handed to the ``openai`` package (``http_client=``): every request ends by a deadline
and every reply is capped in size, whatever the server does.

httpx's timeouts are per socket operation (a read timeout restarts with every chunk received, so a server
trickling one byte a second is never timed out) and httpx reads a reply whole, with no size limit. Here the
deadline is held per thread by a :class:`Deadline` (the ``openai`` client is synchronous: the request runs in
the caller's thread) and every socket operation (connect, TLS handshake, write, read) gets at most the time
left before it, so a request ends at the deadline; a reply announcing or streaming more than ``max_bytes``
is refused after reading at most that much. Proxies from the environment are not used (they would bypass
the deadline); certificates are verified as httpx does by default.
"""
from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from typing import Any, Iterator, Optional

from .._lazy import require

httpx = require("httpx", "vlm")
httpcore = require("httpcore", "vlm")


class ReplyTooLarge(Exception):
    """A reply over ``max_bytes`` (not worth another attempt: the same server sends the same reply)."""


class Deadline:
    """The deadline of the request running in each thread (None: no deadline) and the bytes it received."""

    def __init__(self) -> None:
        self._local = threading.local()

    @contextmanager
    def running(self, seconds: float) -> Iterator[None]:
        """Everything sent from this thread inside the block ends ``seconds`` from now."""
        self._local.at, self._local.received = time.monotonic() + seconds, 0
        try:
            yield
        finally:
            self._local.at = None

    def left(self) -> Optional[float]:
        at = getattr(self._local, "at", None)
        return None if at is None else at - time.monotonic()

    @property
    def received(self) -> int:
        return getattr(self._local, "received", 0)

    def clamp(self, timeout: Optional[float], expired: type[Exception]) -> Optional[float]:
        """``timeout`` cut to the time left; ``expired`` raised when none is."""
        left = self.left()
        if left is None:
            return timeout
        if left <= 0:
            raise expired("the deadline has passed")
        return left if timeout is None else min(timeout, left)

    def count(self, n: int) -> None:
        self._local.received = self.received + n


class _Stream(httpcore.NetworkStream):
    def __init__(self, stream: Any, deadline: Deadline):
        self._stream, self._deadline = stream, deadline

    def read(self, max_bytes: int, timeout: Optional[float] = None) -> bytes:
        data = self._stream.read(max_bytes, self._deadline.clamp(timeout, httpcore.ReadTimeout))
        self._deadline.count(len(data))
        return data

    def write(self, buffer: bytes, timeout: Optional[float] = None) -> None:
        self._stream.write(buffer, self._deadline.clamp(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(self, ssl_context: Any, server_hostname: Optional[str] = None,
                  timeout: Optional[float] = None) -> "_Stream":
        timeout = self._deadline.clamp(timeout, httpcore.ConnectTimeout)
        return _Stream(self._stream.start_tls(ssl_context, server_hostname, timeout), self._deadline)

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class _Backend(httpcore.NetworkBackend):
    """httpcore's socket backend with every operation cut to the thread's deadline."""

    def __init__(self, deadline: Deadline):
        self._backend, self._deadline = httpcore.SyncBackend(), deadline

    def connect_tcp(self, host: str, port: int, timeout: Optional[float] = None, local_address: Optional[str] = None,
                    socket_options: Any = None) -> _Stream:
        timeout = self._deadline.clamp(timeout, httpcore.ConnectTimeout)
        return _Stream(self._backend.connect_tcp(host, port, timeout, local_address, socket_options), self._deadline)

    def connect_unix_socket(self, path: str, timeout: Optional[float] = None, socket_options: Any = None) -> _Stream:
        timeout = self._deadline.clamp(timeout, httpcore.ConnectTimeout)
        return _Stream(self._backend.connect_unix_socket(path, timeout, socket_options), self._deadline)

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)


class _Capped(httpx.SyncByteStream):
    def __init__(self, stream: Any, max_bytes: int):
        self._stream, self._max = stream, max_bytes

    def __iter__(self) -> Iterator[bytes]:
        n = 0
        for chunk in self._stream:
            n += len(chunk)
            if n > self._max:
                raise ReplyTooLarge(too_large(self._max))
            yield chunk

    def close(self) -> None:
        self._stream.close()


def too_large(max_bytes: int) -> str:
    return f"reply larger than max_reply_bytes={max_bytes} bytes; refused (raise the option if it is genuine)"


class _Transport(httpx.HTTPTransport):
    """httpx's transport over the deadline backend, its replies capped at ``max_bytes``."""

    def __init__(self, deadline: Deadline, max_bytes: int):
        super().__init__()
        limits = httpx.Limits(max_connections=100, max_keepalive_connections=20)  # httpx's defaults
        self._pool = httpcore.ConnectionPool(  # the pool httpx.HTTPTransport builds, with our network backend
            ssl_context=httpx.create_ssl_context(), max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections, keepalive_expiry=5.0,
            network_backend=_Backend(deadline))
        self._max = max_bytes

    def handle_request(self, request: Any) -> Any:
        response = super().handle_request(request)
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self._max:
            response.close()
            raise ReplyTooLarge(f"{too_large(self._max)}: the server announced {int(declared)} bytes")
        return httpx.Response(status_code=response.status_code, headers=response.headers,
                              stream=_Capped(response.stream, self._max), extensions=response.extensions)


def bounded_client(deadline: Deadline, max_bytes: int, timeout_s: float, connect_timeout_s: float) -> Any:
    """An ``httpx.Client`` whose requests end by ``deadline`` and whose replies hold at most ``max_bytes``."""
    return httpx.Client(transport=_Transport(deadline, max_bytes), trust_env=False,
                        timeout=httpx.Timeout(timeout_s, connect=min(connect_timeout_s, timeout_s)))
