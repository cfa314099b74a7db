"""The LLM judge through the project's OpenAI-compatible client, against a local fake server."""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from directme.bench import phostream
from directme.bench.judge import JudgeSpec, build_judge, parse_score
from directme.bench.models import ModelSpec
from directme.bench.parallel import EvalJob, evaluate_episode
from directme.bench.runner import BlankFrames


class _Handler(BaseHTTPRequestHandler):
    requests: list = []

    def do_POST(self):  # noqa: N802 (http.server API)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        _Handler.requests.append((self.path, body))
        reply = {"choices": [{"message": {"role": "assistant", "content": '{"score": 4}'}}]}
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture()
def server():
    httpd = HTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    _Handler.requests.clear()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()


def test_parse_score():
    assert parse_score('{"score": 4}') == 4.0
    assert parse_score("Score: 3.5 because...") == 3.5
    assert parse_score("7") == 5.0 and parse_score("no number") is None


def test_judge_over_openai_compatible_server(server):
    judge = build_judge(JudgeSpec(base_url=server, model="judge-model"))
    assert judge.score("q?", "the reference", "an answer") == 4.0
    assert judge.score("q?", "the reference", "   ") == 0.0  # empty answers are not sent
    (path, body), = _Handler.requests
    assert path.endswith("/chat/completions") and body["model"] == "judge-model"
    assert "the reference" in json.dumps(body["messages"])
    assert build_judge(None) is None


def test_phostream_scored_by_judge_in_worker(server, tmp_path):
    rows = [{"user_query": "what now?", "timestamp_question": "00:03", "time_type": "instant", "response": "ref"}]
    path = tmp_path / "p.json"
    path.write_text(json.dumps([{"video_path": "a.mp4", "verified_responses": rows}]))
    (ep,) = phostream.load(str(path))
    job = EvalJob("phostream", ModelSpec("scripted", kwargs={"default_text": "an answer"}), BlankFrames(),
                  opts={"judge_spec": JudgeSpec(base_url=server, model="judge-model")})
    result = evaluate_episode(job, ep)
    assert result["status"] == "ok" and result["records"][0]["score"] == 80.0


def test_judge_calls_are_bounded_by_its_timeout():
    import socket
    import time

    from directme.errors import BackendError

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens
    judge = build_judge(JudgeSpec(base_url=f"http://127.0.0.1:{port}/v1", model="m", timeout_s=1.0))
    t0 = time.monotonic()
    with pytest.raises(BackendError, match="cannot connect"):
        judge.score("q?", "the reference", "an answer")
    assert time.monotonic() - t0 < 2.0  # one deadline per call, retries included
