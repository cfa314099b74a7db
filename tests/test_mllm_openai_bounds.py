"""The OpenAI-compatible answerer's network calls are bounded by one deadline per question (timeout_s, all
attempts and backoff included): a server trickling one byte a second, a 100 MB reply and a refused connection
each end within timeout_s + 1 s as a "backend_error" answer whose text names the cause; retries happen only while
time remains; broken log-probabilities never raise.

Every server here is a raw TCP server on 127.0.0.1 started by the test (daemon threads, closed after)."""
from __future__ import annotations

import json
import re
import socket
import threading
import time
import tracemalloc

import pytest

pytest.importorskip("httpx")

from directme.answerers.base import QueryContext  # noqa: E402
from directme.answerers.openai_api import build, letter_logprobs  # noqa: E402
from directme.commands.doctor_checks import OPTIONS  # noqa: E402
from directme.errors import InvalidInputError  # noqa: E402
from directme.types import Flag  # noqa: E402

TIMEOUT_S = 2.0


class RawServer:
    """Accepts loopback connections; ``respond(conn, stop)`` writes whatever bytes it likes after the
    request has been read. Daemon threads; ``close`` stops them (bounded waits everywhere)."""

    def __init__(self, respond):
        self.respond, self.stop, self.threads = respond, threading.Event(), []
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.1)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"
        self._spawn(self._accept)

    def _spawn(self, fn, *args):
        th = threading.Thread(target=fn, args=args, daemon=True)
        th.start()
        self.threads.append(th)

    def _accept(self):
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except (socket.timeout, OSError):
                continue
            self._spawn(self._handle, conn)

    def _handle(self, conn):
        conn.settimeout(5.0)
        try:
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                data += chunk
            head, body = data.split(b"\r\n\r\n", 1)
            length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                           if line.lower().startswith(b"content-length:")), 0)
            while len(body) < length:
                body += conn.recv(65536)
            self.respond(conn, self.stop)
        except OSError:  # the client gave up: expected
            pass
        finally:
            conn.close()

    def close(self):
        self.stop.set()
        self.sock.close()
        for th in self.threads:
            th.join(timeout=5.0)


@pytest.fixture
def serve():
    servers = []

    def make(respond):
        servers.append(RawServer(respond))
        return servers[-1]
    yield make
    for s in servers:
        s.close()


def _reply_bytes(content="B", **choice_extra):
    body = json.dumps({"choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                                    "finish_reason": "stop", **choice_extra}]}).encode()
    return b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)


def trickle(payload: bytes, every_s: float = 1.0):
    def respond(conn, stop):
        for i in range(len(payload)):
            if stop.is_set():
                return
            conn.sendall(payload[i:i + 1])
            stop.wait(every_s)
    return respond


def huge(total: int, announce: bool):
    def respond(conn, stop):
        head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
        head += b"Content-Length: %d\r\n\r\n" % total if announce else b"Connection: close\r\n\r\n"
        conn.sendall(head + b'{"choices": [{"message": {"content": "')
        block = b"x" * (1 << 20)
        for _ in range(total >> 20):
            if stop.is_set():
                return
            conn.sendall(block)
    return respond


def _ctx():
    return QueryContext(question="Where is the sofa now?", t_s=10.0, options=OPTIONS, intent=None, snapshot=None,
                        subgraph_text="Time: 10.0 s.\nObjects:\n- sofa [o1]: front, 2.0 m")


def _answer_timed(options):
    a = build({"model": "m", "timeout_s": TIMEOUT_S, "backoff_s": 0.05, **options})
    t0 = time.monotonic()
    ans = a.answer(_ctx())
    return ans, time.monotonic() - t0


@pytest.mark.parametrize("what", ["whole reply", "body after the headers"])
def test_trickling_server_ends_within_the_deadline(serve, what):
    reply = _reply_bytes()
    head_len = reply.index(b"\r\n\r\n") + 4
    respond = trickle(reply) if what == "whole reply" else \
        (lambda conn, stop: (conn.sendall(reply[:head_len]), trickle(reply[head_len:])(conn, stop)))
    srv = serve(respond)
    ans, took = _answer_timed({"base_url": srv.url, "retries": 0})
    assert took < TIMEOUT_S + 1.0, took
    assert ans.flags == (Flag.BACKEND_ERROR,) and ans.confidence == 0.0 and ans.letter is None
    assert f"no reply within {TIMEOUT_S:g} s" in ans.text and "whole reply" in ans.text
    assert ans.raw_output and "no reply within" in ans.raw_output


def test_retries_share_the_one_deadline(serve):
    srv = serve(trickle(_reply_bytes()))
    ans, took = _answer_timed({"base_url": srv.url, "retries": 1})
    assert took < TIMEOUT_S + 1.0, took  # the first attempt used all of timeout_s: no second one
    assert ans.flags == (Flag.BACKEND_ERROR,) and "after 1 attempt:" in ans.text and "all attempts" in ans.text
    overloaded = b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 4\r\n\r\nbusy"
    srv = serve(lambda conn, stop: conn.sendall(overloaded))
    ans, took = _answer_timed({"base_url": srv.url, "retries": 10, "backoff_s": 0.4})
    assert took < TIMEOUT_S + 1.0, took  # backoff 0.4, 0.8, (1.6: past the deadline, not slept)
    assert re.search(r"after [23] attempts: (HTTP 503: busy|no reply within)", ans.text), ans.text  # 3 unless slow


def test_each_failure_ends_within_timeout_s_with_default_retries(serve):
    """Issue 18: a trickling server, a 100 MB reply and a refused connection each end within timeout_s + 1 s
    as a backend_error, with the default retries (2) and backoff; the wall times are printed (pytest -s)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    cases = {"trickling": (serve(trickle(_reply_bytes())).url, "no reply within"),
             "100 MB reply": (serve(huge(100 << 20, announce=False)).url, "max_reply_bytes"),
             "refused": (closed, "cannot connect")}
    for what, (url, cause) in cases.items():
        a = build({"model": "m", "timeout_s": TIMEOUT_S, "base_url": url})
        assert a.config.retries == 2 and a.config.max_reply_bytes == 4 << 20
        t0 = time.monotonic()
        ans = a.answer(_ctx())
        took = time.monotonic() - t0
        print(f"{what}: {took:.2f} s (timeout_s={TIMEOUT_S:g})")
        assert took <= TIMEOUT_S + 1.0, (what, took)
        assert ans.flags == (Flag.BACKEND_ERROR,) and cause in ans.text, (what, ans.text)


@pytest.mark.parametrize("announce", [True, False], ids=["content-length", "until-close"])
def test_a_100_mb_reply_is_refused_without_reading_it_all(serve, announce):
    srv = serve(huge(100 << 20, announce))
    tracemalloc.start()
    try:
        ans, took = _answer_timed({"base_url": srv.url, "retries": 0, "max_reply_bytes": 1 << 20})
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert took < TIMEOUT_S + 1.0, took
    assert ans.flags == (Flag.BACKEND_ERROR,) and "max_reply_bytes" in ans.text
    assert peak < 16 << 20, peak  # never near 100 MB in memory
    # a reply over the limit is not worth retrying: one attempt even with retries left
    ans, took = _answer_timed({"base_url": srv.url, "retries": 2, "max_reply_bytes": 1 << 20})
    assert took < TIMEOUT_S + 1.0 and "max_reply_bytes" in ans.text


def test_refused_connection_ends_quickly_with_the_cause():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    ans, took = _answer_timed({"base_url": f"http://127.0.0.1:{port}/v1"})  # default retries (2)
    assert took < TIMEOUT_S + 1.0, took
    assert ans.flags == (Flag.BACKEND_ERROR,) and "cannot connect" in ans.text and "after 3 attempts" in ans.text


def test_agent_ask_is_bounded_end_to_end(serve):
    from directme import Agent
    from directme.memory.testing import Box, orbit

    srv = serve(trickle(_reply_bytes()))
    agent = Agent({"query": {"embedder": "string"},
                   "answerer": {"name": "openai", "options": {"base_url": srv.url, "model": "m", "retries": 0,
                                                              "timeout_s": TIMEOUT_S}}})
    for fp in orbit([Box(1, "sofa", (0, 0, 0.4), (1.6, 0.8, 0.8))], 4, size=(64, 48)):
        agent.observe_perception(fp)
    t0 = time.monotonic()
    ans = agent.ask("Where is the sofa now?", options=OPTIONS)
    assert time.monotonic() - t0 < TIMEOUT_S + 1.0
    assert Flag.BACKEND_ERROR in ans.flags and "no reply within" in ans.text


@pytest.mark.parametrize("lp", [900.0, 1e308, float("nan"), "x", None, -1e308])
def test_broken_logprobs_never_raise(serve, lp):
    choice = {"logprobs": {"content": [{"token": "B", "logprob": lp,
                                        "top_logprobs": [{"token": "B", "logprob": lp}, {"token": " B", "logprob": lp},
                                                         {"token": "A", "logprob": -1e308}]}]}}
    got = letter_logprobs(choice, "ABCD")
    assert got is None or all(v <= 0 for v in got.values()), got  # the bad values are dropped, never raised on
    for garbage in ({"logprobs": "x"}, {"logprobs": {"content": "x"}}, {"logprobs": {"content": [1, None]}},
                    {"logprobs": {"content": [{"token": "B", "top_logprobs": "x"}]}}):
        assert letter_logprobs(garbage, "ABCD") is None
    reply = _reply_bytes("The answer is B", **choice)
    srv = serve(lambda conn, stop: conn.sendall(reply))
    ans, _ = _answer_timed({"base_url": srv.url, "retries": 0})
    assert ans.letter in ("A", "B") and Flag.BACKEND_ERROR not in ans.flags  # an answer, not an exception


def test_bad_bounds_are_refused():
    for bad in ({"timeout_s": 0}, {"timeout_s": float("inf")}, {"retries": -1}, {"retries": 1000},
                {"max_reply_bytes": 10}, {"backoff_s": -1}, {"api_key_env": "sk-not a variable"}):
        with pytest.raises(InvalidInputError) as err:
            build({"model": "m", **bad})
        assert "sk-not" not in str(err.value)  # a key put in api_key_env by mistake is not echoed
