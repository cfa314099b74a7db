"""`directme doctor`: one line per backend, non-zero exit when an installed backend is broken."""
from __future__ import annotations

from directme.cli import main
from directme.commands.doctor import BackendCheck, check_line


def test_doctor_imports_only_lists_backends(capsys) -> None:
    assert main(["doctor", "--imports-only"]) == 0
    out = capsys.readouterr().out
    for name in ("depth_pose da3", "detector grounding_dino", "detector yolo_world", "tracker sam2",
                 "scene_tagger clip", "depth_pose rgbd_odometry"):
        assert name in out
    assert "doctor: all installed backends work" in out


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
    import pytest

    pytest.importorskip("depth_anything_3")
    assert main(["doctor", "--only", "depth_pose da3"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 2, lines  # the backend line and the summary: no DA3 [INFO]/[WARN] log lines
    line = lines[0]
    assert line.startswith("depth_pose da3") and "random-weight build+forward ok" in line
    assert "built da3-small" in line and "weights: da3-large (default preset)" in line
