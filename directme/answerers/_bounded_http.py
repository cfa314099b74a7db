"""The httpx client handed to the ``openai`` package (``http_client=``): every request ends by a deadline
and every reply is capped in size, whatever the server does.

httpx's timeouts are per socket operation (a read timeout restarts with every chunk received, so a server
trickling one byte a second is never timed out) and httpx reads a reply whole, with no size limit. Here the
deadline is held per thread by a :class:`Deadline` (the ``openai`` client is synchronous: the request runs in
the caller's thread) and every socket operation (connect, TLS handshake, write, read) gets at most the time
left before it, so a request ends at the deadline; a reply announcing or streaming more than ``max_bytes``
is refused after reading at most that much. A compressed reply (``Content-Encoding`` gzip or deflate, one
layer; any other or nested encoding is refused) is decoded here, in pieces of at most ``DECODE_PIECE`` bytes
with the deadline checked between them, and ``max_bytes`` bounds the decoded bytes too. Proxies from the
environment are not used (they would bypass the deadline); certificates are verified as httpx does by default.
"""
from __future__ import annotations

import threading
import time
import zlib
from contextlib import contextmanager
from typing import Any, Iterator, Optional

from .._lazy import require

httpx = require("httpx", "vlm")
httpcore = require("httpcore", "vlm")


DECODE_PIECE = 1 << 16  # a compressed reply is decoded this many bytes at a time (memory and deadline bound)
ENCODINGS = ("gzip", "x-gzip", "deflate")  # the content encodings accepted (and asked for), one layer
# zlib window bits: gzip; deflate as HTTP means it (zlib-wrapped), or raw as some servers send it
_WBITS = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}


class ReplyRefused(Exception):
    """A reply refused whole (not worth another attempt: the same server sends the same reply)."""


class ReplyTooLarge(ReplyRefused):
    """A reply over ``max_bytes``, on the wire or decoded."""


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


class _Decoded(httpx.SyncByteStream):
    """The decoded bytes of a compressed reply: at most ``max_bytes`` of them, made ``DECODE_PIECE`` at a time,
    ending with ReadTimeout once the deadline has passed (a small reply may expand a thousandfold)."""

    def __init__(self, stream: Any, encoding: str, max_bytes: int, deadline: Deadline):
        self._stream, self._encoding, self._max, self._deadline = stream, encoding, max_bytes, deadline

    def __iter__(self) -> Iterator[bytes]:
        d, n, first = zlib.decompressobj(_WBITS[self._encoding]), 0, True
        for chunk in self._stream:
            data = chunk
            while data and not d.eof:
                left = self._deadline.left()
                if left is not None and left <= 0:
                    raise httpx.ReadTimeout(f"the deadline passed while decoding the reply ({n} bytes decoded)")
                try:
                    out = d.decompress(data, DECODE_PIECE)
                except zlib.error as exc:
                    if not (first and self._encoding == "deflate"):
                        raise httpx.DecodingError(f"bad {self._encoding} data in the reply ({exc})") from None
                    d, first = zlib.decompressobj(-zlib.MAX_WBITS), False  # raw deflate
                    continue
                first, data = False, d.unconsumed_tail
                n += len(out)
                if n > self._max:
                    raise ReplyTooLarge(f"{too_large(self._max)}: more than that once decoded ({self._encoding})")
                if out:
                    yield out
        if not d.eof:
            raise httpx.DecodingError(f"the {self._encoding} reply ends before its compressed data does")

    def close(self) -> None:
        self._stream.close()


def too_large(max_bytes: int) -> str:
    return f"reply larger than max_reply_bytes={max_bytes} bytes; refused (raise the option if it is genuine)"


class _Transport(httpx.HTTPTransport):
    """httpx's transport over the deadline backend, its replies capped at ``max_bytes``."""

    def __init__(self, deadline: Deadline, max_bytes: int):
        super().__init__()
        self._deadline = deadline
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
        codings = [c.strip().lower() for c in response.headers.get("content-encoding", "").split(",")]
        codings = [c for c in codings if c not in ("", "identity")]
        if len(codings) > 1 or (codings and codings[0] not in ENCODINGS):
            response.close()
            raise ReplyRefused(f"reply with Content-Encoding {', '.join(codings)[:100]!r}: only one layer of "
                               f"{' or '.join(ENCODINGS)} is accepted (nested or unknown encodings are refused)")
        stream: Any = _Capped(response.stream, self._max)
        headers = response.headers
        if codings:  # decoded here, bounded: httpx must not decode it again
            stream = _Decoded(stream, codings[0], self._max, self._deadline)
            headers = httpx.Headers([(k, v) for k, v in headers.multi_items()
                                     if k.lower() not in ("content-encoding", "content-length")])
        return httpx.Response(status_code=response.status_code, headers=headers, stream=stream,
                              extensions=response.extensions)


def bounded_client(deadline: Deadline, max_bytes: int, timeout_s: float, connect_timeout_s: float) -> Any:
    """An ``httpx.Client`` whose requests end by ``deadline`` and whose replies hold at most ``max_bytes``."""
    return httpx.Client(transport=_Transport(deadline, max_bytes), trust_env=False,
                        headers={"Accept-Encoding": ", ".join(e for e in ENCODINGS if e != "x-gzip")},
                        timeout=httpx.Timeout(timeout_s, connect=min(connect_timeout_s, timeout_s)))
