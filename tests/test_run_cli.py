"""`directme run`: question files, --ask/--at pairing, and clear errors for bad input."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pytest

from directme.cli import main
from directme.commands import run as run_cmd
from directme.commands import run_source
from directme.commands import run_questions as rq
from directme.errors import InvalidInputError

UCS = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "qa" / "ucsbench" / "sample_qa.json"


def _args(*argv: str) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    run_cmd.add_arguments(p)
    return p.parse_args(list(argv))


def test_ask_at_pairs_in_order_and_unpaired_go_last():
    asks = rq.collect_questions(_args("x", "--ask", "A?", "--at", "00:01:05", "--ask", "B?", "--ask", "C?",
                                           "--at", "3"), default=())
    assert [(a.text, a.t_s) for a in asks] == [("B?", 3.0), ("A?", 65.0), ("C?", None)]


def test_more_at_than_ask_is_an_error():
    with pytest.raises(InvalidInputError, match="--at"):
        rq.collect_questions(_args("x", "--at", "3"), default=())


def test_text_and_json_question_files(tmp_path):
    txt = tmp_path / "q.txt"
    txt.write_text("# comment\n12 Where is the sink?\n01:30 Can I reach the cup?\n")
    assert [(a.text, a.t_s) for a in rq.read_questions(str(txt))] == [
        ("Where is the sink?", 12.0), ("Can I reach the cup?", 90.0)]
    js = tmp_path / "q.json"
    js.write_text(json.dumps({"questions": [{"question": "Which is closer?", "t_s": 4,
                                             "options": {"B": "the lamp", "A": "the sofa"}, "answer_label": "A"}]}))
    (a,) = rq.read_questions(str(js))
    assert a.options == ("the sofa", "the lamp") and a.answer == "A" and a.t_s == 4.0
    bad = tmp_path / "bad.txt"
    bad.write_text("soon where is it\n")
    with pytest.raises(InvalidInputError, match="line 1"):
        rq.read_questions(str(bad))


def test_ucsbench_file_reads_with_hhmmss_times():
    if not UCS.is_file():
        pytest.skip(f"UCS-Bench sample not found at {UCS}")
    asks = rq.read_questions(str(UCS))
    assert asks[0].text == "Which side is the whiteboard on right now?" and asks[0].t_s == 9.0


def test_frames_without_pose_give_a_clear_error(tmp_path, capsys):
    from PIL import Image

    folder = tmp_path / "imgs"
    folder.mkdir()
    for i in range(2):
        Image.fromarray(np.full((32, 48, 3), 50 * i, np.uint8)).save(folder / f"{i:04d}.png")
    assert main(["run", str(folder), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "no depth" in err and "camera pose" in err and "docs/backends.md" in err


def test_progress_total_for_image_folders_and_videos(tmp_path):
    """The progress bar gets a total (so an ETA) for inputs without a length: image folders, videos."""
    from PIL import Image

    folder = tmp_path / "imgs"
    folder.mkdir()
    for i in range(40):  # 30 Hz by default: 1.3 s, frames kept at 0 and 1 s at --fps 1
        Image.fromarray(np.full((8, 8, 3), i, np.uint8)).save(folder / f"{i:04d}.png")
    src = run_source.open_source(str(folder), 1.0)
    assert src.total == 2 == len(list(src.frames))
    av = pytest.importorskip("av")
    video = tmp_path / "clip.mkv"  # Matroska stores a duration, not a frame count
    with av.open(str(video), "w") as out:
        stream = out.add_stream("mpeg4", rate=10)
        stream.width, stream.height, stream.pix_fmt = 32, 32, "yuv420p"
        for i in range(45):
            out.mux(stream.encode(av.VideoFrame.from_ndarray(np.full((32, 32, 3), i, np.uint8), format="rgb24")))
        out.mux(stream.encode())
    src = run_source.open_source(str(video), 2.0)
    assert src.total == 9 == len(list(src.frames))


def test_missing_input_and_missing_file(tmp_path, capsys):
    assert main(["run"]) == 2
    assert "give an INPUT" in capsys.readouterr().err
    assert main(["run", str(tmp_path / "nope.mp4")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_cli_and_viz_modules_import_light():
    import subprocess
    import sys

    code = ("import sys, directme.cli, directme.viz.rerun_log, directme.viz.report; directme.cli.build_parser(); "
            "print(sorted(m for m in ('rerun', 'matplotlib', 'torch', 'open3d') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
