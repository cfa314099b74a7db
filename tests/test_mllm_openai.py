"""The OpenAI-compatible MLLM answerer against servers on loopback.

A scripted stub server (stdlib http.server) checks the wire format: keyframes inline as base64
images, timestamps and options in the text, top_logprobs -> option probabilities, retries,
a server that rejects logprobs, malformed replies, a server that never answers and one that is
down. A real `transformers serve` with a tiny random Qwen2.5-VL runs the whole path end to end."""
from __future__ import annotations

import base64
import io
import json
import math
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

pytest.importorskip("httpx")

from directme.answerers.base import Keyframe, QueryContext  # noqa: E402
from directme.commands.doctor_checks import OPTIONS, sample_frames  # noqa: E402
from directme.answerers.openai_api import build, letter_logprobs  # noqa: E402
from directme.errors import BackendError  # noqa: E402


class Stub:
    """Replies from a script: each entry is (status, body dict | str | None=hang)."""

    def __init__(self, script):
        self.script, self.requests = list(script), []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _reply(self, status, body):
                data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                self._reply(200, {"object": "list", "data": [{"id": "stub-vl"}]})

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                stub.requests.append((self.headers, body))  # case-insensitive, as HTTP headers are
                status, reply = stub.script.pop(0) if len(stub.script) > 1 else stub.script[0]
                if reply is None:  # never answer
                    time.sleep(3.0)
                    return
                self._reply(status, reply)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def stub_factory():
    stubs = []

    def make(*script):
        stubs.append(Stub(script))
        return stubs[-1]
    yield make
    for s in stubs:
        s.close()


def reply(content, top=None):
    choice = {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
    if top is not None:
        choice["logprobs"] = {"content": [
            {"token": "The", "logprob": -0.1, "top_logprobs": [{"token": "The", "logprob": -0.1}]},
            {"token": next(iter(top)), "logprob": math.log(next(iter(top.values()))),
             "top_logprobs": [{"token": k, "logprob": math.log(v)} for k, v in top.items()]}]}
    return {"id": "x", "object": "chat.completion", "choices": [choice]}


def _ctx(n_kf=2, t_s=10.0):
    kfs = tuple(Keyframe(t_s=float(t), frame_index=t, rgb=np.random.default_rng(t).integers(0, 256, (60, 80, 3),
                                                                                             dtype=np.uint8))
                for t in (2, 6)[:n_kf])
    return QueryContext(question="Where is the sofa now?", t_s=t_s, options=OPTIONS, intent=None, snapshot=None,
                        subgraph_text="Time: 10.0 s.\nObjects:\n- sofa [o1]: front, 2.0 m", keyframes=kfs)


def _images(body):
    from PIL import Image

    parts = body["messages"][1]["content"]
    urls = [p["image_url"]["url"] for p in parts if p["type"] == "image_url"]
    return [Image.open(io.BytesIO(base64.b64decode(u.split(",", 1)[1]))) for u in urls], \
        "\n".join(p["text"] for p in parts if p["type"] == "text")


def test_wire_format_and_logprobs(stub_factory, monkeypatch):
    stub = stub_factory((200, reply("The answer is B", top={" B": 0.5, "B": 0.2, " A": 0.2, "C": 0.05, "x": 0.05})))
    monkeypatch.setenv("DIRECTME_OPENAI_BASE_URL", stub.url)
    monkeypatch.setenv("DIRECTME_OPENAI_MODEL", "my-vl")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    ans = build({}).answer(_ctx())
    headers, body = stub.requests[0]
    assert body["model"] == "my-vl" and headers["Authorization"] == "Bearer sk-test"
    assert body["logprobs"] is True and body["top_logprobs"] == 20 and body["temperature"] == 0.0
    images, text = _images(body)
    assert [im.size for im in images] == [(80, 60), (80, 60)]  # both keyframes, inline
    assert "Keyframe 1 at t = 2.0 s" in text and "Keyframe 2 at t = 6.0 s" in text
    assert "A. in front of you\nB. behind you" in text
    assert ans.letter == "B" and not ans.flags
    assert ans.option_scores == pytest.approx({"A": 0.2 / 0.95, "B": 0.7 / 0.95, "C": 0.05 / 0.95, "D": 0.0})
    assert ans.confidence == pytest.approx(0.7 / 0.95)


def test_agent_ask_through_openai_backend(stub_factory):
    from directme.agent import Agent

    stub = stub_factory((200, reply("C", top={"C": 0.6, "A": 0.4})))
    agent = Agent({"query": {"embedder": "string"},
                   "answerer": {"name": "openai", "options": {"base_url": stub.url, "model": "m"}}})
    for f in sample_frames():
        agent.observe(f)
    agent.flush()
    ans = agent.ask("Where is the sofa now?", options=OPTIONS)
    assert ans.letter == "C" and sum(ans.option_scores.values()) == pytest.approx(1.0)
    images, text = _images(stub.requests[0][1])
    assert images and "Question (asked at t = 3.0 s): Where is the sofa now?" in text and "sofa" in text


def test_agent_policy_hint_reaches_the_server(stub_factory):
    from directme.agent import Agent

    stub = stub_factory((200, reply("A", top={"A": 0.9, "B": 0.1})))
    agent = Agent({"query": {"embedder": "string"},
                   "answerer": {"name": "policy", "options": {"mode": "hint", "mllm": "openai",
                                                              "mllm_options": {"base_url": stub.url, "model": "m"}}}})
    for f in sample_frames():
        agent.observe(f)
    agent.flush()
    ans = agent.ask("Where is the sofa now?", options=OPTIONS)
    _, text = _images(stub.requests[0][1])
    assert "A geometric solver working on the same memory suggests option" in text
    assert ans.letter == "A" and ans.answerer.startswith("policy[mllm+hint:openai:m]")


def test_server_rejecting_logprobs_and_retry_on_5xx(stub_factory):
    stub = stub_factory((500, "overloaded"), (400, {"error": "logprobs not supported"}), (200, reply("(D)")))
    a = build({"base_url": stub.url, "model": "m", "backoff_s": 0.01})
    ans = a.answer(_ctx())
    assert ans.letter == "D" and "no_probs" in ans.flags and ans.option_scores is None
    assert [("logprobs" in b) for _, b in stub.requests] == [True, True, False]
    a.answer(_ctx())  # remembered: no more logprobs requests
    assert "logprobs" not in stub.requests[-1][1]


def test_malformed_reply_is_flagged_or_raised(stub_factory):
    stub = stub_factory((200, {"choices": []}))
    ans = build({"base_url": stub.url, "model": "m"}).answer(_ctx())
    assert ans.letter is None and ans.confidence == 0.0 and ans.flags == ("backend_error",)
    assert "malformed reply" in ans.text
    with pytest.raises(BackendError, match="malformed reply"):
        build({"base_url": stub.url, "model": "m", "on_error": "raise"}).answer(_ctx())
    stub.script = [(200, "<html>not json</html>")]
    with pytest.raises(BackendError, match="not JSON"):
        build({"base_url": stub.url, "model": "m", "on_error": "raise"}).answer(_ctx())


def test_timeout_when_server_never_answers(stub_factory):
    """timeout_s is one deadline per question: a retry left needs time left, so one attempt here."""
    stub = stub_factory((200, None))
    a = build({"base_url": stub.url, "model": "m", "timeout_s": 0.3, "retries": 1, "backoff_s": 0.01,
               "on_error": "raise"})
    t0 = time.perf_counter()
    with pytest.raises(BackendError, match=r"after 1 attempt: no reply within 0.3 s"):
        a.answer(_ctx())
    assert time.perf_counter() - t0 < 0.3 + 1.0


def test_server_down_gives_clear_error():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    a = build({"base_url": f"http://127.0.0.1:{port}/v1", "model": "m", "retries": 1, "backoff_s": 0.01})
    ans = a.answer(_ctx())
    assert ans.flags == ("backend_error",) and "cannot connect" in ans.text and "server running" in ans.text
    with pytest.raises(BackendError, match="cannot connect"):
        build({"base_url": f"http://127.0.0.1:{port}/v1", "model": "m", "retries": 0,
               "on_error": "raise"}).answer(_ctx())


def test_letter_logprobs_uses_the_letter_step():
    choice = reply("x", top={" B": 0.5, "A": 0.25, "(C": 0.25})["choices"][0]
    lp = letter_logprobs(choice, "ABC")
    assert {k: round(math.exp(v), 6) for k, v in lp.items()} == {"A": 0.25, "B": 0.5, "C": 0.25}
    assert letter_logprobs({"message": {}}, "ABC") is None


@pytest.fixture(scope="module")
def transformers_serve(tmp_path_factory):
    """`transformers serve` in this process (uvicorn thread) on a free loopback port, serving a
    tiny random Qwen2.5-VL. On this CPU machine torchvision's image codecs do not load (CUDA
    torchvision build), so its image decoder is replaced with PIL for the duration."""
    pytest.importorskip("fastapi")
    pytest.importorskip("uvicorn")
    import httpx

    from directme.answerers.tiny import build_tiny_vl
    from directme.answerers.transformers_vl import ensure_vision_imports

    ensure_vision_imports()
    import torch
    import torchvision.io
    from PIL import Image
    from transformers.cli.serve import Serve

    def pil_decode(src, mode=None, apply_exif_orientation=False):
        data = bytes(src.numpy()) if hasattr(src, "numpy") else open(src, "rb").read()
        return torch.from_numpy(np.asarray(Image.open(io.BytesIO(data)).convert("RGB")).copy()).permute(2, 0, 1)

    mp = pytest.MonkeyPatch()
    mp.setattr(torchvision.io, "decode_image", pil_decode)
    mp.setenv("HF_HUB_OFFLINE", "1")
    model_dir = str(build_tiny_vl("qwen2_5_vl", tmp_path_factory.mktemp("serve") / "tiny"))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    srv = Serve(force_model=model_dir, host="127.0.0.1", port=port, device="cpu", non_blocking=True,
                log_level="error")
    url = f"http://127.0.0.1:{port}"
    for _ in range(200):
        try:
            if httpx.get(f"{url}/health", timeout=1.0).status_code == 200:
                break
        except httpx.TransportError:
            time.sleep(0.05)
    yield f"{url}/v1", model_dir
    srv.kill_server()
    mp.undo()


@pytest.mark.slow
def test_transformers_serve_end_to_end(transformers_serve):
    url, model_dir = transformers_serve
    a = build({"base_url": url, "model": model_dir, "max_tokens": 6, "timeout_s": 60})
    answers = a.answer_batch([_ctx(), _ctx(n_kf=1)])
    for ans in answers:
        assert "backend_error" not in ans.flags, ans.text
        assert ans.raw_output  # the random model said something
        assert "no_probs" in ans.flags  # transformers serve ignores logprobs; nominal confidence
        assert (ans.letter is None) == ("unparsed" in ans.flags)
