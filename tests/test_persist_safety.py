"""Saves survive a kill mid-save, damage is reported (file, problem, fix) instead of loaded, and a save never
writes outside its own directory: the persistence part of "Nothing lost, nothing corrupted"."""
from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import shutil
import signal
import sys
from pathlib import Path

import numpy as np
import pytest

from directme import Agent
from directme._atomic import SELF_SHA, manifest_digest
from directme.errors import InvalidInputError, InvalidSaveError
from directme.memory import MemoryConfig, SpatialMemory
from directme.memory.testing import Box, orbit, snapshot_facts

SCENE = [Box(1, "cup", (0.0, 0.0, 0.05), (0.1, 0.1, 0.1)), Box(2, "chair", (0.8, 0.6, 0.4), (0.5, 0.5, 0.8)),
         Box(3, "lamp", (-0.7, 0.5, 0.6), (0.3, 0.3, 1.2))]
CFG = {"memory": MemoryConfig(up_world=(0.0, 0.0, 1.0)).to_dict()}


def _agent(n: int) -> Agent:
    agent = Agent(CFG)
    for fp in orbit(SCENE, n, size=(96, 72), radius=2.0, t0=3.0):
        agent.observe_perception(fp)
    return agent


def _print(agent: Agent):
    """Everything a loaded agent answers from, comparable."""
    snap = agent.memory.as_of(agent.latest_t)
    return agent._first_t, agent._last_t, agent._last_input_t, snapshot_facts(snap)


@pytest.fixture(scope="module")
def agents():
    old, new = _agent(6), _agent(12)
    assert _print(old) != _print(new)
    return old, new


@pytest.fixture
def saved(agents, tmp_path):
    agents[0].save(tmp_path / "agent")
    return tmp_path / "agent"


# ------------------------------------------------------------------ a kill during the save

def _kill_at(n: int, root: str):
    """Audit hook: SIGKILL this process at its n-th filesystem change under ``root`` (before it happens)."""
    changes = ("os.rename", "os.remove", "os.rmdir", "os.mkdir", "shutil.rmtree", "os.truncate", "os.symlink")
    writing = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC
    seen = [0]

    def hook(event, args):
        if event == "open":
            if not (isinstance(args[2], int) and args[2] & writing):
                return
        elif event not in changes:
            return
        if str(os.fsdecode(args[0]) if isinstance(args[0], (str, bytes, os.PathLike)) else "").startswith(root):
            seen[0] += 1
            if seen[0] == n:
                os.kill(os.getpid(), signal.SIGKILL)
    return hook


def _save_killed(agent: Agent, target: Path, n: int) -> None:
    sys.addaudithook(_kill_at(n, str(target.parent)))
    agent.save(target)
    os._exit(0)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_kill_at_any_step_of_a_save_leaves_the_old_or_the_new_save(agents, tmp_path):
    """A child re-saves the longer memory over the old save and is SIGKILLed just before its 1st, 2nd, ...
    filesystem change, until one save completes; every time, the directory loads as the old or the new save."""
    old, new = agents
    want = {"old": _print(old), "new": _print(new)}
    target = tmp_path / "agent"
    ctx = multiprocessing.get_context("fork")
    outcomes = []
    for n in range(1, 200):
        for p in [target, *tmp_path.glob(".agent*")]:
            if p.exists():
                shutil.rmtree(p)
        old.save(target)
        child = ctx.Process(target=_save_killed, args=(new, target, n))
        child.start()
        child.join()
        got = _print(Agent.load(target))
        outcomes.append((n, child.exitcode, [k for k, v in want.items() if v == got]))
        if child.exitcode == 0:
            break
    assert outcomes[-1][1] == 0 and outcomes[-1][2] == ["new"], outcomes[-1]
    killed = [o for o in outcomes if o[1] == -signal.SIGKILL]
    assert len(killed) >= 5 and all(o[2] in (["old"], ["new"]) for o in killed), outcomes
    assert {"old", "new"} <= {o[2][0] for o in killed}  # killed both before and after the commit


# ------------------------------------------------------------------ damage: named, never loaded

def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def _reseal(save: Path) -> None:
    """Recompute the manifests' sizes and sha256 and their own (memory/ first): an edit that a checksum cannot
    catch."""
    for m in (save / "memory" / "manifest.json", save / "manifest.json"):
        if m.is_file():
            data = json.loads(m.read_text())
            for rel in data["files"]:
                data["files"][rel] = {"size": (m.parent / rel).stat().st_size, "sha256": _sha(m.parent / rel)}
            data[SELF_SHA] = manifest_digest(data)
            m.write_text(json.dumps(data))


FILES = ["agent.json", "manifest.json", "memory/manifest.json", "memory/memory.json", "memory/arrays.npz",
         "memory/images.npz"]


@pytest.mark.parametrize("damage", ["truncated", "flipped", "missing"])
@pytest.mark.parametrize("rel", FILES)
def test_a_damaged_file_is_named_not_loaded(saved, rel, damage):
    p = saved / rel
    data = bytearray(p.read_bytes())
    assert len(data) > 20
    if damage == "truncated":
        p.write_bytes(bytes(data[: len(data) // 2]))
    elif damage == "flipped":
        data[len(data) // 2] ^= 0x5A
        p.write_bytes(bytes(data))
    else:
        p.unlink()
    with pytest.raises(InvalidSaveError) as err:
        Agent.load(saved)
    msg = str(err.value)
    assert Path(rel).name in msg and ("restore" in msg or "save it again" in msg), msg


def _edit_json(path: Path, **changes) -> None:
    data = json.loads(path.read_text())
    data.update(changes)
    path.write_text(json.dumps(data))


def _edit_component(s: Path, key: str, **changes) -> None:
    """Change fields of one component's metadata in a memory save."""
    path = s / "memory" / "memory.json"
    data = json.loads(path.read_text())
    data["components"][key].update(changes)
    path.write_text(json.dumps(data))


def _edit_arrays(path: Path, fn) -> None:
    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files}
    fn(arrays)
    with open(path, "wb") as f:
        np.savez(f, **arrays)


def _labels(s: Path) -> list:
    return json.loads((s / "memory" / "memory.json").read_text())["components"]["objects"]["labels"]


def _reverse_ego_t(a):
    a["ego/ego_t"] = a["ego/ego_t"][::-1].copy()


def _label_out_of_range(a):
    a["objects/obj/obs_label/data"] = a["objects/obj/obs_label/data"] + 7


def _shift_observation_times(a):
    a["objects/obj/obs_t/data"] = a["objects/obj/obs_t/data"] + 0.5


EDITS = {  # what a checksum cannot catch once the manifests are recomputed; the file the error must name
    "later last_t": (lambda s: _edit_json(s / "agent.json", last_t=99.0), "agent.json", "last_t"),
    "earlier first_t": (lambda s: _edit_json(s / "agent.json", first_t=0.0), "agent.json", "first_t"),
    "last_input_t before last_t": (lambda s: _edit_json(s / "agent.json", last_input_t=4.0), "agent.json",
                                   "last_input_t"),
    "other memory config": (lambda s: _edit_json(s / "agent.json", config={"memory": {"map": {"voxel_m": 0.3}}}),
                            "agent.json", "memory"),
    "reversed ego_t": (lambda s: _edit_arrays(s / "memory" / "arrays.npz", _reverse_ego_t), "arrays.npz", "ego_t"),
    "label ids out of range": (lambda s: _edit_arrays(s / "memory" / "arrays.npz", _label_out_of_range), "arrays.npz",
                               "obs_label"),
    "observations off their frames": (lambda s: _edit_arrays(s / "memory" / "arrays.npz", _shift_observation_times),
                                      "arrays.npz", "obs_t"),
    "a label dropped": (lambda s: _edit_component(s, "objects", labels=_labels(s)[:1]), "arrays.npz", "out"),
    "place tags dropped": (lambda s: _edit_component(s, "places", tags=[]), "arrays.npz", "frame_place"),
    "agent format": (lambda s: _edit_json(s / "agent.json", format="directme-agent/99"), "agent.json",
                     "version that wrote it"),
    "memory format": (lambda s: _edit_json(s / "memory" / "memory.json", format="directme-memory/99"), "memory.json",
                      "version that wrote it"),
    "manifest format": (lambda s: _edit_json(s / "manifest.json", format="directme-manifest/99"), "manifest.json",
                        "version that wrote it"),
}


def _shuffle_labels(s: Path) -> None:
    labels = _labels(s)
    _edit_component(s, "objects", labels=labels[1:] + labels[:1])


def _mix(s: Path) -> None:
    """agent.json of a save of the first frames only, into this save (an interrupted copy, a mix-up)."""
    shorter = s.parent / "shorter"
    _agent(4).save(shorter)
    shutil.copy(shorter / "agent.json", s / "agent.json")


@pytest.mark.parametrize("edit,rel", [(_shuffle_labels, "memory/memory.json"), (_mix, "agent.json"),
                                      (lambda s: _edit_arrays(s / "memory" / "arrays.npz", _reverse_ego_t),
                                       "memory/arrays.npz")], ids=["shuffled labels", "mixed saves", "reversed ego_t"])
def test_an_edit_is_caught_by_the_checksums(saved, edit, rel):
    edit(saved)
    with pytest.raises(InvalidSaveError, match="manifest.json") as err:
        Agent.load(saved)
    assert str(saved / rel) in str(err.value)


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_an_edit_with_recomputed_checksums_is_refused(saved, edit):
    change, name, word = EDITS[edit]
    change(saved)
    _reseal(saved)
    with pytest.raises(InvalidSaveError) as err:
        Agent.load(saved)
    msg = str(err.value)
    assert name in msg and word in msg, msg


def test_a_save_has_format_versions_and_is_replaced_whole(agents, saved):
    assert _print(Agent.load(saved)) == _print(agents[0])
    assert json.loads((saved / "agent.json").read_text())["format"] == "directme-agent/1"
    assert json.loads((saved / "manifest.json").read_text())["format"] == "directme-manifest/1"
    agents[1].save(saved)
    assert _print(Agent.load(saved)) == _print(agents[1])
    assert sorted(p.name for p in saved.parent.iterdir()) == ["agent"]  # nothing left beside it


# ------------------------------------------------------------------ where a save may go

def test_a_non_empty_directory_that_is_not_a_save_is_refused(agents, tmp_path):
    d = tmp_path / "mine"
    d.mkdir()
    (d / "notes.txt").write_text("keep me")
    with pytest.raises(InvalidInputError, match="not a directme save"):
        agents[0].save(d)
    with pytest.raises(InvalidInputError, match="not a directme save"):
        agents[0].memory.save(d)
    assert [p.name for p in d.iterdir()] == ["notes.txt"] and (d / "notes.txt").read_text() == "keep me"
    assert not list(tmp_path.glob(".mine*"))


def test_a_save_holding_other_files_is_not_replaced(agents, saved):
    (saved / "notes.txt").write_text("keep me")
    with pytest.raises(InvalidInputError, match="notes.txt"):
        agents[1].save(saved)
    assert (saved / "notes.txt").read_text() == "keep me" and _print(Agent.load(saved)) == _print(agents[0])


def test_a_save_of_another_kind_is_not_replaced(agents, saved, tmp_path):
    with pytest.raises(InvalidInputError, match="holds a saved agent"):
        agents[1].memory.save(saved)
    agents[0].memory.save(tmp_path / "m")
    with pytest.raises(InvalidInputError, match="holds a saved memory"):
        agents[1].save(tmp_path / "m")
    assert _print(Agent.load(saved)) == _print(agents[0]) and (tmp_path / "m" / "memory.json").is_file()


@pytest.mark.parametrize("path", ["", "  ", "."])
def test_an_empty_path_is_refused(agents, tmp_path, monkeypatch, path):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InvalidInputError, match="directory of its own"):
        agents[0].save(path)
    with pytest.raises(InvalidInputError, match="directory of its own"):
        agents[0].memory.save(path)
    assert list(tmp_path.iterdir()) == []


def test_a_memory_symlink_is_not_followed(agents, saved, tmp_path):
    """An old save's memory/ links elsewhere: re-saving leaves the link's target untouched, and a save that
    reaches outside through a link is refused on load."""
    elsewhere = tmp_path / "elsewhere"
    shutil.move(str(saved / "memory"), elsewhere)
    (saved / "memory").symlink_to(elsewhere, target_is_directory=True)
    before = {p.name: p.read_bytes() for p in elsewhere.iterdir()}
    with pytest.raises(InvalidSaveError, match="symbolic link"):
        Agent.load(saved)
    agents[1].save(saved)
    assert {p.name: p.read_bytes() for p in elsewhere.iterdir()} == before
    assert not (saved / "memory").is_symlink() and _print(Agent.load(saved)) == _print(agents[1])


def test_a_symlinked_destination_is_refused(agents, tmp_path):
    real = tmp_path / "real"
    agents[0].save(real)
    (tmp_path / "link").symlink_to(real, target_is_directory=True)
    with pytest.raises(InvalidInputError, match="symbolic link"):
        agents[1].save(tmp_path / "link")
    assert _print(Agent.load(real)) == _print(agents[0])


def test_an_interrupted_swap_loads_the_previous_save(agents, saved, caplog):
    """Killed between renaming the old save aside and renaming the new one in: the old save is loaded."""
    aside = saved.parent / ".agent.directme-old"
    saved.rename(aside)
    assert _print(Agent.load(saved)) == _print(agents[0])
    assert "interrupted" in caplog.text
    agents[1].save(saved)  # the next save cleans up
    assert sorted(p.name for p in saved.parent.iterdir()) == ["agent"]


def test_a_memory_save_alone_is_checked_too(agents, tmp_path):
    mem = agents[0].memory
    mem.save(tmp_path / "m")
    assert snapshot_facts(SpatialMemory.load(tmp_path / "m").as_of(8.0)) == snapshot_facts(mem.as_of(8.0))
    (tmp_path / "m" / "arrays.npz").write_bytes(b"PK\x03\x04" + b"\0" * 40)
    with pytest.raises(InvalidSaveError, match="arrays.npz"):
        SpatialMemory.load(tmp_path / "m")


# ------------------------------------------------------------------ directme run

def test_run_checks_out_and_save_before_streaming(tmp_path, monkeypatch, capsys):
    from directme.cli import main
    from directme.commands import run as run_cmd
    from directme.sim import generate_episode, save_episode

    save_episode(generate_episode(seed=0, minutes=0.1, with_questions=False), tmp_path / "ep", write_frames=False)

    def streamed(*args, **kwargs):
        raise AssertionError("streamed before checking the destinations")

    monkeypatch.setattr(run_cmd.Runner, "run", streamed)
    existing = tmp_path / "existing"
    existing.mkdir()
    assert main(["run", str(tmp_path / "ep"), "--out", str(existing), "--save", str(tmp_path / "x"), "--quiet"]) == 2
    assert "--out" in capsys.readouterr().err
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    assert main(["run", str(tmp_path / "ep"), "--out", str(tmp_path / "a.json"), "--save", str(foreign),
                 "--quiet"]) == 2
    assert "--save" in capsys.readouterr().err and (foreign / "notes.txt").is_file()
    assert main(["run", str(tmp_path / "ep"), "--out", str(tmp_path / "x" / "a.json"), "--save", str(tmp_path / "x"),
                 "--quiet"]) == 2
    assert "inside the --save directory" in capsys.readouterr().err
