"""`directme doctor`: one line per backend, non-zero exit when an installed backend is broken, then the
verdict: device, torch build, weight sets found, what runs now, the `hf download` command per missing set."""
from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from directme.cli import main
from directme.commands import doctor_verdict as V
from directme.commands.doctor import BackendCheck, check_line
from directme.perception import weights as W


def test_doctor_imports_only_lists_backends(capsys) -> None:
    assert main(["doctor", "--imports-only"]) == 0
    out = capsys.readouterr().out
    for name in ("depth_pose da3", "detector grounding_dino", "detector yolo_world", "tracker sam2",
                 "scene_tagger clip", "depth_pose rgbd_odometry"):
        assert name in out
    assert "\nverdict\n" in out and out.splitlines()[-1].startswith("doctor: ")
    assert "installed backends import (not built: --imports-only)" in out


def test_doctor_runs_given_backend(capsys) -> None:
    assert main(["doctor", "--only", "given"]) == 0
    assert "random-weight build+forward ok" in capsys.readouterr().out


def test_broken_backend_is_reported() -> None:
    def boom() -> str:
        raise RuntimeError("shape mismatch")

    line, broken = check_line(BackendCheck("detector fake", "numpy", boom, lambda: "none"))
    assert broken and "BROKEN" in line and "shape mismatch" in line
    line, broken = check_line(BackendCheck("detector absent", "no_such_pkg_xyz", boom, lambda: "none"))
    assert not broken and "not installed" in line


def test_doctor_da3_one_line_and_weights_of_default_preset(capsys) -> None:
    pytest.importorskip("depth_anything_3")
    assert main(["doctor", "--only", "depth_pose da3"]) == 0
    out = capsys.readouterr().out
    lines = out.split("\nverdict\n")[0].strip().splitlines()
    assert len(lines) == 1 and "[INFO]" not in out and "[WARN]" not in out, lines  # no DA3 log lines
    line = lines[0]
    assert line.startswith("depth_pose da3") and "random-weight build+forward ok" in line
    assert "built da3-small" in line and "weights: da3-large (default preset)" in line
    assert "da3metric-large (its metric scale)" in line  # the default pipeline's metric model
    assert "| metres: da3nested-giant-large (depth+poses)" in line and "otherwise up to scale, flagged" in line


# --- the verdict --------------------------------------------------------------------------------

@pytest.fixture
def no_weights(tmp_path, monkeypatch):
    """A machine where no weight set is on disk: empty search folders and Hugging Face cache."""
    monkeypatch.delenv("DIRECTME_WEIGHTS_DIR", raising=False)
    for var in ("HOME", "TORCH_HOME"):
        monkeypatch.setenv(var, str(tmp_path))
    monkeypatch.setattr(W, "_hf_cached", lambda repo, filename: None)
    monkeypatch.setattr(W, "hf_snapshot_dir", lambda repo: None)
    return tmp_path


def test_verdict_without_weights_names_device_folders_and_fetch_commands(no_weights) -> None:
    m = V.gather()
    assert (len(m.found), m.n_sets) == (0, len(V.weight_sets())) and len(m.missing) == m.n_sets >= 9
    text = V.format_verdict(m, n_backends=11, n_broken=0, built=True)
    assert "device:   " in text and "torch:    " in text and ("CPU" in text or "CUDA" in text)
    assert f"0 of {m.n_sets} weight sets found; searched $DIRECTME_WEIGHTS_DIR (not set), ~/.cache/directme, " \
           "the Hugging Face cache" in text
    assert "simulator episodes" in text and "RGB-D folders" in text and "Aria recordings" in text
    assert "videos and image folders: nothing (depth and camera pose need the DA3 weights)" in text
    for ws in m.missing:  # one exact fetch command per missing set
        assert f"{ws.used_by}" in text and ws.fetch in text
        assert ws.fetch.startswith(("hf download ", "curl -L ")), ws.fetch
    last = text.splitlines()[-1]
    assert last.startswith("doctor: ") and "all installed backends work" not in last and "no weight set" in last
    assert "huggingface-cli" not in text


def test_verdict_counts_found_sets_and_what_they_enable(no_weights) -> None:
    m = V.gather()
    clip = next(ws for ws in m.missing if ws.key == "clip")
    gd = next(ws for ws in m.missing if ws.key == "grounding_dino")
    some = V.Machine(m.device, m.torch, m.searched, (("clip", "~/w/clip"), ("grounding_dino", "~/w/gd")),
                     tuple(ws for ws in m.missing if ws not in (clip, gd)), m.installed | {"transformers"}, m.n_sets)
    text = V.format_verdict(some, 11, 0, built=True)
    assert f"2 of {m.n_sets} weight sets found" in text and "found clip: ~/w/clip" in text
    assert "object questions (detector grounding_dino)" in text and "room names (CLIP)" in text
    assert clip.fetch not in text and "doctor: backends work; 2 of" in text
    assert "1 broken backend(s)" in V.format_verdict(some, 11, 1, built=True).splitlines()[-1]


def test_yolo_world_hint_names_a_real_source(no_weights) -> None:
    ws = {w.key: w for w in V.weight_sets()}
    for key, name in (("yolo_world", "yolov8s-worldv2.pt"), ("yoloe", "yoloe-11s-seg.pt")):
        assert re.fullmatch(rf"curl -L --create-dirs -o ~/.cache/directme/{re.escape(name)} "
                            rf"https://github.com/ultralytics/assets/releases/download/v[\d.]+/{re.escape(name)}",
                            ws[key].fetch), ws[key].fetch
        assert "~/.cache/directme" in V.gather().searched[1]  # where curl puts it is a folder searched


def _hf_download_command():
    """The installed huggingface_hub's `hf download` command (click), to parse commands without running them."""
    try:
        from huggingface_hub.cli.hf import app

        return app.get_command(None, "download").materialize()
    except (ImportError, AttributeError) as exc:  # another huggingface_hub layout
        pytest.skip(f"cannot load the installed `hf download` command: {exc}")


def _documented_hf_commands() -> list[str]:
    root = Path(__file__).resolve().parents[1]
    texts = [p.read_text(encoding="utf-8") for p in sorted((root / "docs").glob("*.md")) + [root / "README.md"]]
    texts += [p.read_text(encoding="utf-8") for p in sorted((root / "directme").rglob("*.py"))]
    found = [m.group(1).strip() for t in texts for m in re.finditer(r"hf download ([^`)\n\"';{]+)", t)]
    return sorted({c for c in found if "<" not in c})  # "<org/repo>" placeholders are prose


def test_every_hf_download_command_parses_with_the_installed_cli(no_weights) -> None:
    cmd = _hf_download_command()
    commands = [ws.fetch for ws in V.weight_sets() if ws.fetch.startswith("hf download ")]
    commands += [f"hf download {c}" for c in _documented_hf_commands()]
    assert len(commands) >= 10
    for line in commands:
        args = shlex.split(line)[2:]
        ctx = cmd.make_context("download", args)  # raises click.UsageError on anything `hf` would refuse
        assert ctx.params["repo_id"].count("/") == 1, line
    root = Path(__file__).resolve().parents[1]
    stale = [str(p.relative_to(root)) for p in [*(root / "docs").glob("*.md"), root / "README.md",
                                                 *(root / "directme").rglob("*.py")]
             if "huggingface-cli" in p.read_text(encoding="utf-8")]
    assert not stale, f"`huggingface-cli` is not in huggingface_hub >= 1.0: {stale}"
