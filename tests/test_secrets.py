"""API keys and URL credentials are used, never written: not in Agent.save, `directme run --save/--out/--report`,
`directme eval`'s config.json and results, logs, printed output or answer text (directme/redact.py).

Every file those commands write is searched for each secret; the servers are stubs on 127.0.0.1 started here."""
from __future__ import annotations

import json
import logging
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

pytest.importorskip("httpx")

from directme import Agent  # noqa: E402
from directme.cli import main  # noqa: E402
from directme.config import AgentConfig  # noqa: E402
from directme.redact import REDACTED, redact_config, redact_text, redact_url  # noqa: E402
from directme.types import Flag  # noqa: E402

KEY = "sk-LITERAL-k3y-0123456789"
ENV_KEY = "sk-ENV-k3y-9876543210"
USER, PASSWORD = "alice", "PW-s3cr3t-777"
QUERY_KEY = "QUERY-s3cr3t-555"
SECRETS = (KEY, ENV_KEY, PASSWORD, QUERY_KEY)


class Stub:
    """A chat-completions server that answers "B" and records each request's path and headers."""

    def __init__(self):
        self.seen: list[tuple[str, dict]] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _reply(self, body):
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                stub.seen.append((self.path, self.headers))  # case-insensitive, as HTTP headers are
                self._reply({"data": [{"id": "stub"}]})

            def do_POST(self):
                self.rfile.read(int(self.headers["Content-Length"]))
                stub.seen.append((self.path, self.headers))  # case-insensitive, as HTTP headers are
                self._reply({"choices": [{"message": {"role": "assistant", "content": "B"}}]})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def stub():
    s = Stub()
    yield s
    s.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _options(port: int, **extra) -> dict:
    return {"base_url": f"http://{USER}:{PASSWORD}@127.0.0.1:{port}/v1?api_key={QUERY_KEY}", "model": "m",
            "api_key": KEY, "retries": 0, "timeout_s": 5.0, **extra}


def assert_no_secret(root: Path, also: str = "", skip: tuple[Path, ...] = ()) -> int:
    """Every file under ``root`` (and the text ``also``) free of every secret; returns how many files."""
    files = [p for p in Path(root).rglob("*") if p.is_file() and p not in skip]
    for p in files:
        data = p.read_bytes()
        for s in SECRETS:
            assert s.encode() not in data, f"{s} written to {p}"
    for s in SECRETS:
        assert s not in also, f"{s} in output: ...{also[max(0, also.find(s) - 200):also.find(s) + 50]}"
    return len(files)


def _feed(agent):
    from directme.memory.testing import Box, orbit

    for fp in orbit([Box(1, "sofa", (0, 0, 0.4), (1.6, 0.8, 0.8))], 6, size=(64, 48)):
        agent.observe_perception(fp)


def test_redaction_rules():
    assert redact_url(f"http://{USER}:{PASSWORD}@h:8000/v1?key={QUERY_KEY}&n=2") == \
        f"http://{REDACTED}@h:8000/v1?key={REDACTED}&n=2"
    assert redact_url("https://api.example.com/v1") == "https://api.example.com/v1"
    text = redact_text(f"Authorization: Bearer {KEY} token={QUERY_KEY} see http://{USER}:{PASSWORD}@h/v1", [KEY])
    assert not any(s in text for s in SECRETS) and "http://" in text
    cfg = redact_config({"answerer": {"options": {"api_key": KEY, "api_key_env": "MY_KEY", "max_tokens": 16,
                                                  "mllm_options": {"hf_token": QUERY_KEY, "api_key": ""}}}})
    assert cfg == {"answerer": {"options": {"api_key": REDACTED, "api_key_env": "MY_KEY", "max_tokens": 16,
                                            "mllm_options": {"hf_token": REDACTED, "api_key": ""}}}}
    # the config in memory keeps the key (it works); what is written does not
    c = AgentConfig.from_dict({"answerer": {"name": "openai", "options": {"api_key": KEY}}})
    assert c.answerer.options["api_key"] == KEY and c.to_dict(secrets=True)["answerer"]["options"]["api_key"] == KEY
    assert c.to_dict()["answerer"]["options"]["api_key"] == REDACTED


def test_agent_save_and_answers_hold_no_secret(stub, tmp_path, monkeypatch, caplog):
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    agent = Agent({"query": {"embedder": "string"}, "answerer": {"name": "openai", "options": _options(stub.port)}})
    _feed(agent)
    ans = agent.ask("Where is the sofa now?", options=("in front of you", "behind you"))
    assert ans.letter == "B" and QUERY_KEY in stub.seen[-1][0]  # the credentials were used...
    assert ans.answerer == "openai:m"
    agent.save(tmp_path / "save")
    saved = json.loads((tmp_path / "save" / "agent.json").read_text())["config"]["answerer"]["options"]
    assert saved["api_key"] == REDACTED and saved["base_url"] == \
        f"http://{REDACTED}@127.0.0.1:{stub.port}/v1?api_key={REDACTED}"
    assert_no_secret(tmp_path / "save", also=repr(ans) + caplog.text)  # ...and written nowhere

    # a loaded agent takes the key from api_key_env again; a redacted URL is refused with a clear reason
    loaded = Agent.load(tmp_path / "save")
    ans = loaded.ask("Where is the sofa now?")
    assert ans.flags == (Flag.BACKEND_ERROR,) and "redacted when the config was saved" in ans.text
    plain = Agent({"query": {"embedder": "string"}, "answerer": {"name": "openai", "options": {
        "base_url": f"http://127.0.0.1:{stub.port}/v1", "model": "m", "api_key": KEY}}})
    _feed(plain)
    plain.save(tmp_path / "plain")
    assert Agent.load(tmp_path / "plain").ask("Where is the sofa now?").text
    assert stub.seen[-1][1]["Authorization"] == f"Bearer {ENV_KEY}"
    assert_no_secret(tmp_path / "plain", also=caplog.text)


def test_errors_name_the_server_without_its_credentials(tmp_path, caplog):
    caplog.set_level(logging.DEBUG)
    port = _free_port()  # nothing listens: the error message names the URL
    agent = Agent({"query": {"embedder": "string"}, "answerer": {"name": "openai", "options": _options(port)}})
    _feed(agent)
    ans = agent.ask("Where is the sofa now?")
    assert ans.flags == (Flag.BACKEND_ERROR,) and f"127.0.0.1:{port}" in ans.text and REDACTED in ans.text
    assert_no_secret(tmp_path, also=ans.text + str(ans.raw_output) + ans.answerer + caplog.text)


@pytest.fixture(scope="module")
def episode(tmp_path_factory):
    from directme.sim import generate_episode, save_episode

    ep = generate_episode(seed=1, minutes=0.5, width=96, height=72)
    out = tmp_path_factory.mktemp("secrets") / "ep"
    save_episode(ep, out, write_frames=False)
    return out


def _config_file(tmp_path: Path, port: int) -> Path:
    cfg = tmp_path / "cfg" / "agent.json"
    cfg.parent.mkdir()
    cfg.write_text(json.dumps({"query": {"embedder": "string"},
                               "answerer": {"name": "openai", "options": _options(port)}}))
    return cfg


@pytest.mark.parametrize("server", ["up", "down"])
def test_run_writes_no_secret(episode, stub, tmp_path, capsys, caplog, server):
    caplog.set_level(logging.DEBUG)
    port = stub.port if server == "up" else _free_port()
    cfg = _config_file(tmp_path, port)
    out = tmp_path / "out"
    args = ["run", str(episode), "--config", str(cfg), "--ask", "Where is the sofa?", "--at", "20",
            "--ask", "How many chairs did I see?", "--save", str(out / "save"), "--out", str(out / "answers.json"),
            "--quiet"]
    try:
        import matplotlib  # noqa: F401

        args += ["--report", str(out / "report"), "--report-maps", "1"]
    except ImportError:
        pass
    assert main(args) == 0
    printed = capsys.readouterr()
    answers = json.loads((out / "answers.json").read_text())
    if server == "up":
        assert all(a["letter"] is None or a["answerer"] == "openai:m" for a in answers)
        assert stub.seen and all(QUERY_KEY in path for path, _ in stub.seen)
    else:
        assert all("backend_error" in a["flags"] for a in answers), answers
    n = assert_no_secret(out, also=printed.out + printed.err + caplog.text)
    assert n >= 3


def test_eval_writes_no_secret(episode, stub, tmp_path, capsys, caplog):
    caplog.set_level(logging.DEBUG)
    cfg = _config_file(tmp_path, stub.port)
    out = tmp_path / "eval"
    assert main(["eval", "sim", "--annotations", str(episode), "--out", str(out), "--config", str(cfg),
                 "--fps", "0"]) == 0
    printed = capsys.readouterr()
    assert stub.seen  # the worker process asked the server, with the key
    assert any(h.get("Authorization", "").startswith("Basic") or h.get("Authorization") == f"Bearer {KEY}"
               for _, h in stub.seen)
    fingerprint = json.loads((out / "config.json").read_text())["fingerprint"]
    assert REDACTED in json.dumps(fingerprint)
    n = assert_no_secret(out, also=printed.out + printed.err + caplog.text)
    assert n >= 3
