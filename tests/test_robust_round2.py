"""Nothing lost, round two: a refused frame changes nothing, network limits hold after decompression, every
damaged save is refused clearly, disk errors say the previous save is intact, frames and the scene graph are
bounded, and the CLI refuses bad arguments. Each test is one reproduction of issue 45's probes; servers are
on 127.0.0.1 only, started and stopped by the test."""
from __future__ import annotations

import errno
import gzip
import hashlib
import http.server
import json
import multiprocessing
import os
import threading
import time
import tracemalloc
import zipfile
from pathlib import Path

import numpy as np
import pytest

from directme import Agent
from directme._atomic import SELF_SHA, manifest_digest
from directme.cli import main
from directme.errors import InvalidInputError, InvalidSaveError, SaveFailedError
from directme.geometry import Intrinsics, Pose
from directme.memory import MemoryConfig, SpatialMemory
from directme.memory.graph import ObjectTable, build_graph
from directme.memory.testing import Box, orbit, snapshot_facts
from directme.types import Frame, FramePerception, InstanceObservation

SCENE = [Box(1, "cup", (0.0, 0.0, 0.05), (0.1, 0.1, 0.1)), Box(2, "chair", (0.8, 0.6, 0.4), (0.5, 0.5, 0.8)),
         Box(3, "lamp", (-0.7, 0.5, 0.6), (0.3, 0.3, 1.2))]
CFG = {"memory": MemoryConfig(up_world=(0.0, 0.0, 1.0)).to_dict()}


def _frames(n: int = 8):
    return list(orbit(SCENE, n, size=(96, 72), radius=2.0, t0=3.0))


def _with_embedding(fp: FramePerception, size: int, t_s: float = None) -> FramePerception:
    frame = fp.frame if t_s is None else Frame(t_s, fp.frame.rgb, fp.frame.depth_m, fp.frame.T_world_cam,
                                               fp.frame.intrinsics, index=fp.frame.index + 1)
    insts = tuple(InstanceObservation(i.track_id, i.label, i.score, i.mask, np.ones(size), i.box_xyxy)
                  for i in fp.instances)
    return FramePerception(frame, insts, fp.scene_tag, fp.scene_tag_score)


def _print(agent: Agent):
    snap = agent.memory.as_of(agent.latest_t)
    return agent._first_t, agent._last_t, agent._last_input_t, snapshot_facts(snap)


def _agent(frames) -> Agent:
    agent = Agent(CFG)
    for fp in frames:
        agent.observe_perception(fp)
    return agent


# ------------------------------------------------------------------ 1. a refused frame changes nothing

def test_a_frame_with_another_embedding_size_is_refused_whole_and_the_save_reloads(tmp_path):
    fps = _frames(2)
    agent = _agent([_with_embedding(fps[0], 4)])
    before = _print(agent)
    with pytest.raises(InvalidInputError, match="embedding has 7 values, but the memory's embeddings have 4"):
        agent.observe_perception(_with_embedding(fps[0], 7, t_s=fps[0].t_s + 1.0))  # the same view, later
    assert _print(agent) == before and agent.memory.ego.t.view().tolist() == [fps[0].t_s]
    agent.save(tmp_path / "a")
    assert _print(Agent.load(tmp_path / "a")) == before


def test_a_refused_frame_mid_stream_leaves_memory_and_save_as_a_replay_without_it(tmp_path):
    fps = [_with_embedding(fp, 8) for fp in _frames(10)]
    bad = [_with_embedding(fps[5], 3),  # another embedding size
           FramePerception(fps[5].frame, tuple(InstanceObservation(i.track_id, i.label, i.score, i.mask,
                                                                   np.full(8, 1e300), i.box_xyxy)
                                               for i in fps[5].instances))]  # its norm overflows
    streamed = Agent(CFG)
    for k, fp in enumerate(fps):
        if k == 5:
            for b in bad:
                with pytest.raises(InvalidInputError, match="embedding"):
                    streamed.observe_perception(b)
        streamed.observe_perception(fp)
    replay = _agent(fps)
    assert _print(streamed) == _print(replay)
    streamed.save(tmp_path / "s")
    replay.save(tmp_path / "r")
    assert _print(Agent.load(tmp_path / "s")) == _print(Agent.load(tmp_path / "r"))


# ------------------------------------------------------------------ 6. bounded frames and graph

def _crowded_frame(n: int, side: int = 4, size=(320, 240)) -> FramePerception:
    w, h = size
    K = Intrinsics.from_fov(w, h, 70.0)
    insts = []
    for k in range(n):
        r, c = divmod(k, w // side)
        m = np.zeros((h, w), bool)
        m[(r * side) % h:(r * side) % h + side, c * side:c * side + side] = True
        insts.append(InstanceObservation(k, "cup", 0.9, m))
    R = np.array([[0.0, 0.0, 1.0], [-1.0, 0.0, 0.0], [0.0, -1.0, 0.0]])  # looking along world +x
    frame = Frame(0.0, np.zeros((h, w, 3), np.uint8), np.full((h, w), 2.0, np.float32),
                  Pose.from_Rt(R, [0.0, 0.0, 1.5]), K, index=0)
    return FramePerception(frame, tuple(insts), "hall")


def test_a_10000_instance_frame_is_refused_at_once_and_a_1000_instance_one_is_answered():
    agent = Agent(CFG)
    crowded = _crowded_frame(10_000, side=1, size=(128, 96))
    t0 = time.perf_counter()
    with pytest.raises(InvalidInputError, match="max_instances_per_frame=1000"):
        agent.observe_perception(crowded)
    assert time.perf_counter() - t0 < 2.0 and agent.latest_t is None and len(agent.memory.ego.t.view()) == 0
    del crowded
    agent.observe_perception(_crowded_frame(1000, size=(320, 240)))
    t0 = time.perf_counter()
    answer = agent.ask("Where is the cup?")
    assert time.perf_counter() - t0 < 20.0 and answer.text  # 2,000 instances took 6.7 s before the bound
    graph = agent.memory.as_of(agent.latest_t).graph
    cfg = agent.config.memory.places
    own = cfg.edge_knn + cfg.max_near_edges
    near_degree = [sum(1 for _, _, k in graph.edges(n, data="kind") if k == "near") for n in graph
                   if graph.nodes[n]["kind"] == "object"]
    assert len(near_degree) == 1000 and np.mean(near_degree) <= 2 * own


def _table(pos: np.ndarray, max_near: int = 16) -> ObjectTable:
    class Rows:
        index = np.arange(len(pos))
        present = np.ones(len(pos), bool)
        position_w = pos
        last_frame = np.zeros(len(pos), np.int64)
        label_id = np.zeros(len(pos), np.int64)
    return ObjectTable(Rows(), ["cup"], lambda i: None, 3, 1.5, max_near)


@pytest.mark.parametrize("scale", [0.5, 15.0], ids=["dense heap", "spread"])
def test_a_restricted_graph_has_exactly_the_full_graphs_edges_and_degrees_are_bounded(scale):
    pos = np.random.default_rng(1).uniform(0, scale, (600, 3))
    ego = SpatialMemory().ego.track(0)
    full = build_graph(_table(pos), {}, ego, None)
    for targets in (["o5"], ["o17", "o400"], []):
        sub = build_graph(_table(pos), {}, ego, None, targets)
        for a, b in sub.edges:
            assert full.has_edge(a, b)
        for a, b in full.subgraph(sub.nodes).edges:
            assert sub.has_edge(a, b)
        for t in targets:
            assert set(sub.neighbors(t)) == set(full.neighbors(t))
    chosen = _table(pos).neighbours(np.arange(len(pos)))
    assert ((chosen < len(pos)).sum(axis=1) <= 3 + 16).all()
    d = np.linalg.norm(pos[:, None] - pos[None], axis=-1)
    if scale > 1:  # sparse enough that no cap applies: every pair within the radius is an edge
        assert ((d <= 1.5).sum(axis=1) - 1).max() <= 16
        i, j = np.nonzero(np.triu(d <= 1.5, 1))
        assert all(full.has_edge(f"o{a}", f"o{b}") for a, b in zip(i, j))


def test_the_graph_of_10000_objects_in_a_heap_is_built_quickly():
    pos = np.random.default_rng(0).uniform(0, 0.5, (10_000, 3))  # every object within 1.5 m of every other
    ego = SpatialMemory().ego.track(0)
    t0 = time.perf_counter()
    g = build_graph(_table(pos), {}, ego, None, ["o5", "o77"])
    assert time.perf_counter() - t0 < 2.0 and g.degree("o5") <= 2 * (3 + 16) + 10_000  # bounded by choosers
    t0 = time.perf_counter()
    g = build_graph(_table(pos), {}, ego, None)
    assert time.perf_counter() - t0 < 10.0 and g.number_of_edges() <= 10_000 * (3 + 16)


# ------------------------------------------------------------------ 4. damaged saves

def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def _reseal(save: Path) -> None:
    """Recompute the manifests' sizes and sha256 and their own (memory/ first): damage checksums cannot catch."""
    for m in (save / "memory" / "manifest.json", save / "manifest.json"):
        data = json.loads(m.read_text())
        for rel in data["files"]:
            if (m.parent / rel).is_file():
                data["files"][rel] = {"size": (m.parent / rel).stat().st_size, "sha256": _sha(m.parent / rel)}
        data[SELF_SHA] = manifest_digest(data)
        m.write_text(json.dumps(data))


@pytest.fixture(scope="module")
def agent6():
    return _agent(_frames(6))


@pytest.fixture
def saved(agent6, tmp_path):
    agent6.save(tmp_path / "agent")
    return tmp_path / "agent"


def _refused(saved: Path, *words: str) -> str:
    with pytest.raises(InvalidSaveError) as err:
        Agent.load(saved)
    msg = str(err.value)
    assert all(w in msg for w in words), msg
    return msg


def test_a_manifest_replaced_by_deep_nesting_is_refused(saved):
    (saved / "manifest.json").write_text("[" * 100_000)
    _refused(saved, "manifest.json", "nested")


@pytest.mark.parametrize("rel", ["agent.json", "memory/memory.json"])
def test_deep_nesting_in_a_resealed_json_file_is_refused(saved, rel):
    (saved / rel).write_text("[" * 100_000 + "]" * 100_000)
    _reseal(saved)
    _refused(saved, rel.split("/")[-1], "nested")


def test_a_5000_digit_integer_is_refused_by_load_and_by_run_load(saved, capsys):
    state = (saved / "agent.json").read_text()
    (saved / "agent.json").write_text(state.replace('"last_t":', '"huge": ' + "7" * 5000 + ', "last_t":'))
    _reseal(saved)
    _refused(saved, "agent.json", "5000 digits")
    assert main(["run", "--load", str(saved), "--ask", "Where is the cup?", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "agent.json" in err and "5000 digits" in err and "Traceback" not in err


def test_a_file_name_with_a_nul_byte_in_the_manifest_is_refused(saved):
    data = json.loads((saved / "manifest.json").read_text())
    data["files"]["agent\x00.json"] = data["files"]["agent.json"]
    data[SELF_SHA] = manifest_digest(data)
    (saved / "manifest.json").write_text(json.dumps(data))
    _refused(saved, "manifest.json", "control characters")


def test_an_npy_header_declaring_a_terabyte_is_refused_before_allocating(saved):
    arrays = saved / "memory" / "arrays.npz"
    with zipfile.ZipFile(arrays, "a") as z, z.open("extra.npy", "w") as f:
        np.lib.format.write_array_header_1_0(f, {"descr": "<f8", "fortran_order": False, "shape": (10 ** 12,)})
        f.write(b"\0" * 64)
    _reseal(saved)
    tracemalloc.start()
    try:
        _refused(saved, "arrays.npz", "extra.npy", "(1000000000000,)")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 << 20


# ------------------------------------------------------------------ 5. disk errors while saving

def _intact(saved: Path, agent: Agent, err: SaveFailedError, cause: str) -> None:
    msg = str(err)
    assert str(saved) in msg and "intact" in msg and cause in msg, msg
    assert _print(Agent.load(saved)) == _print(agent)
    assert sorted(p.name for p in saved.parent.iterdir()) == ["agent"]  # nothing left beside it


def _save_with_file_limit(agent: Agent, target: str, limit: int, out) -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
    try:
        agent.save(target)
        out.put(("saved", ""))
    except Exception as e:  # noqa: BLE001 - reported to the parent
        out.put((type(e).__name__, f"{getattr(e, 'errno', None)} {e}"))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_file_size_limit_gives_a_clear_error_and_keeps_the_previous_save(saved, agent6):
    newer = _agent(_frames(12))
    ctx = multiprocessing.get_context("fork")
    out = ctx.Queue()
    p = ctx.Process(target=_save_with_file_limit, args=(newer, str(saved), 2048, out))
    p.start()
    kind, msg = out.get(timeout=60)
    p.join(timeout=30)
    assert kind == "SaveFailedError" and msg.startswith(f"{errno.EFBIG} "), (kind, msg)
    assert "intact" in msg and "size limit" in msg
    assert _print(Agent.load(saved)) == _print(agent6)
    assert sorted(p.name for p in saved.parent.iterdir()) == ["agent"]


def test_a_full_disk_gives_a_clear_error_and_keeps_the_previous_save(saved, agent6, monkeypatch):
    import directme._atomic as atomic

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(atomic.os, "fsync", full)
    with pytest.raises(SaveFailedError) as err:
        _agent(_frames(12)).save(saved)
    monkeypatch.undo()
    assert err.value.errno == errno.ENOSPC
    _intact(saved, agent6, err.value, "No space left on device")


def test_a_read_only_filesystem_gives_a_clear_error_and_keeps_the_previous_save(saved, agent6, monkeypatch):
    real = os.mkdir

    def read_only(path, *a, **k):
        if str(path).startswith(str(saved.parent)):
            raise OSError(errno.EROFS, "Read-only file system", str(path))
        return real(path, *a, **k)
    monkeypatch.setattr(os, "mkdir", read_only)
    with pytest.raises(SaveFailedError) as err:
        _agent(_frames(12)).save(saved)
    monkeypatch.undo()
    assert err.value.errno == errno.EROFS
    _intact(saved, agent6, err.value, "read-only")


# ------------------------------------------------------------------ 2, 3. the OpenAI-compatible answerer

class _Handler(http.server.BaseHTTPRequestHandler):
    reply = staticmethod(lambda handler: (200, {}, b"{}"))

    def _send(self):
        status, headers, body = self.reply(self)
        self.send_response(status)
        for k, v in {"Content-Type": "application/json", "Content-Length": str(len(body)), **headers}.items():
            self.send_header(k, v)
        self.end_headers()
        try:
            self.wfile.write(body)
        except OSError:  # the client gave up: expected
            pass

    def do_GET(self):
        self._send()

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self._send()

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    servers = []

    def start(reply):
        handler = type("H", (_Handler,), {"reply": staticmethod(reply)})
        srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        srv.daemon_threads = True
        threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        servers.append(srv)
        return f"http://127.0.0.1:{srv.server_address[1]}/v1"
    yield start
    for srv in servers:
        srv.shutdown()
        srv.server_close()


def _chat(content: str = "B") -> bytes:
    return json.dumps({"choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                                    "finish_reason": "stop"}]}).encode()


def _gzip_bomb(decoded_mb: int) -> bytes:
    """A gzip reply of about a thousandth of its decoded size (a JSON string of ``decoded_mb`` MB of x)."""
    import zlib

    z = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    parts = [z.compress(b'{"choices": [{"message": {"content": "')]
    block = b"x" * (1 << 20)
    parts += [z.compress(block) for _ in range(decoded_mb)]
    return b"".join(parts + [z.compress(b'"}}]}'), z.flush()])


BOMB_MB = 64  # 16 times max_reply_bytes' default


def _answer(url: str, **options):
    from directme.answerers.openai_api import build
    from directme.commands.doctor_checks import OPTIONS
    from directme.answerers.base import QueryContext

    pytest.importorskip("httpx")
    ctx = QueryContext(question="Where is the sofa now?", t_s=10.0, options=OPTIONS, intent=None, snapshot=None,
                       subgraph_text="Time: 10.0 s.\nObjects:\n- sofa [o1]: front, 2.0 m")
    a = build({"base_url": url, "model": "m", "backoff_s": 0.05, **options})
    t0 = time.monotonic()
    return a.answer(ctx), time.monotonic() - t0


@pytest.mark.parametrize("timeout_s", [60.0, 2.0])
def test_a_compressed_bomb_is_refused_by_its_decoded_size(server, timeout_s):
    pytest.importorskip("openai")  # imported before memory is traced
    bomb = _gzip_bomb(BOMB_MB)
    url = server(lambda h: (200, {"Content-Encoding": "gzip"}, bomb))
    tracemalloc.start()
    try:
        ans, took = _answer(url, timeout_s=timeout_s, retries=2)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert "backend_error" in ans.flags and "max_reply_bytes" in ans.text and "decoded" in ans.text, ans.text
    assert took < min(timeout_s, 10.0) and peak < 64 << 20, (took, peak)


def test_the_deadline_covers_decompression(server, monkeypatch):
    import directme.answerers._bounded_http as bh

    monkeypatch.setattr(bh, "DECODE_PIECE", 16)  # decoding 64 MB 16 bytes at a time would take an hour
    bomb = _gzip_bomb(BOMB_MB)
    url = server(lambda h: (200, {"Content-Encoding": "gzip"}, bomb))
    ans, took = _answer(url, timeout_s=1.5, retries=0, max_reply_bytes=2 ** 31 - 1)
    assert "backend_error" in ans.flags and "no reply within" in ans.text and took < 3.0, (ans.text, took)


@pytest.mark.parametrize("encoding", ["gzip, gzip", "br", "compress", "gzip, identity, deflate"])
def test_nested_or_unknown_encodings_are_refused(server, encoding):
    url = server(lambda h: (200, {"Content-Encoding": encoding}, gzip.compress(_chat())))
    ans, took = _answer(url, timeout_s=5.0, retries=2)
    assert "backend_error" in ans.flags and "Content-Encoding" in ans.text and took < 2.0, ans.text


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "identity"])
def test_a_normal_compressed_reply_is_answered(server, encoding):
    import zlib

    body = {"gzip": gzip.compress, "deflate": zlib.compress, "identity": lambda b: b}[encoding](_chat("B"))
    url = server(lambda h: (200, {"Content-Encoding": encoding}, body))
    ans, _ = _answer(url, timeout_s=5.0)
    assert ans.letter == "B" and "backend_error" not in ans.flags


def test_the_api_key_never_reaches_the_answerers_name(server):
    key = "sk-test-0123456789abcdef"

    def reply(h):  # a hostile server: its model id is the Authorization header it received
        if h.path.endswith("/models"):
            return 200, {}, json.dumps({"data": [{"id": h.headers.get("Authorization", "")}]}).encode()
        return 200, {}, _chat(f"B. Your token: {h.headers.get('Authorization', '')}")
    url = server(reply)
    ans, _ = _answer(url, timeout_s=5.0, model="", api_key=key)
    assert ans.letter == "B"
    for text in (ans.answerer, ans.text, ans.raw_output):
        assert key not in text, text
    assert ans.answerer.startswith("openai:") and "<redacted>" in ans.answerer


# ------------------------------------------------------------------ 7. CLI arguments

@pytest.mark.parametrize("args", [["--max-frames", "-3"], ["--fps", "-1"], ["--fps", "nan"], ["--fps", "1e308"]])
def test_run_refuses_bad_numbers_as_eval_does(tmp_path, capsys, args):
    with pytest.raises(SystemExit) as exc:
        main(["run", str(tmp_path), *args])
    assert exc.value.code == 2 and f"argument {args[0]}" in capsys.readouterr().err
    if args[0] == "--fps":
        with pytest.raises(SystemExit) as exc:
            main(["eval", "sim", "--annotations", str(tmp_path), *args])
        assert exc.value.code == 2 and "argument --fps" in capsys.readouterr().err


def test_run_refuses_a_directory_as_rerun_file(tmp_path, capsys):
    assert main(["run", str(tmp_path), "--rerun", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "--rerun" in err and "is a directory" in err


def test_eval_refuses_a_file_as_out_directory(tmp_path, capsys):
    f = tmp_path / "hostname"
    f.write_text("keep me")
    assert main(["eval", "sim", "--annotations", str(tmp_path), "--out", str(f)]) == 2
    err = capsys.readouterr().err
    assert "--out" in err and "is a file" in err and f.read_text() == "keep me"
