"""First steps of a new user: packaged configs found by name from any folder, the random-weights smoke
config on a short video, hints that name real flags (`--config NAME`, `--source-fps`), and a stage line
while the question encoder loads."""
from __future__ import annotations

import logging
import time
from pathlib import Path

import numpy as np
import pytest
from video_builders import seven_scenes_folder

from directme.cli import main
from directme.config import AgentConfig, config_path, packaged_configs
from directme.errors import InvalidInputError

ROOT = Path(__file__).resolve().parent.parent


def test_packaged_configs_are_found_by_name_from_any_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # not the repository: examples/configs is not here
    assert {"smoke-random", "perception-da3-gdino-sam2"} <= set(packaged_configs())
    for given in ("smoke-random", "smoke-random.yaml", "examples/configs/perception-da3-gdino-sam2.yaml"):
        path = config_path(given)
        assert path.is_file() and path.parent == ROOT / "directme" / "configs", given
    assert AgentConfig.from_file("smoke-random").perception.backend == "pipeline"
    mine = tmp_path / "smoke-random.yaml"  # a file of the user's own wins over the packaged name
    mine.write_text("answerer: {name: geometric}\n", encoding="utf-8")
    assert config_path("smoke-random.yaml") == Path("smoke-random.yaml")
    with pytest.raises(InvalidInputError, match="packaged config: .*smoke-random"):
        config_path("smoke-randon")


def test_the_example_configs_are_the_packaged_ones():
    for link in (ROOT / "examples" / "configs").glob("*.yaml"):
        assert link.resolve() == (ROOT / "directme" / "configs" / link.name).resolve(), link


def test_the_seven_scenes_hint_names_a_real_flag_and_the_flag_works(tmp_path, capsys):
    data = seven_scenes_folder(tmp_path / "scene", 3)
    assert main(["run", str(data), "--fps", "0", "--quiet", "--ask", "What path did I take?"]) == 0
    err = capsys.readouterr().err
    assert "--source-fps HZ" in err and "source_fps=" in err  # the warning names the flag
    assert main(["run", str(data), "--fps", "0", "--quiet", "--source-fps", "2", "--ask", "What path did I take?"]) == 0
    out, err = capsys.readouterr()
    assert "no timestamps" not in err and "in 1 s (0-1 s)" in out, out  # 3 frames at 2 Hz: 0, 0.5, 1 s
    video = tmp_path / "v.mp4"
    video.write_bytes(b"")
    assert main(["run", str(video), "--source-fps", "2", "--quiet"]) == 2
    assert "--source-fps" in capsys.readouterr().err


class _FakeMiniLM:
    """Stands in for the sentence model: the classifier only needs vectors and the encoder's name."""

    name = "minilm"
    question_encoder_used = "onnx"

    def encode_questions(self, texts):
        rng = np.random.default_rng(len(texts))
        v = rng.normal(size=(len(texts), 8)).astype(np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_a_stage_line_while_the_question_encoder_loads(caplog):
    from directme.query.classify import KindClassifier

    with caplog.at_level(logging.INFO, logger="directme.loading"):
        KindClassifier(_FakeMiniLM()).prepare()
    lines = [r.getMessage() for r in caplog.records if r.name == "directme.loading"]
    assert lines[0].startswith("loading question encoder: all-MiniLM-L6-v2 and ") and lines[0].endswith(" ...")
    assert lines[1].startswith("loading question encoder: onnx ... ") and lines[1].endswith(" s")


@pytest.mark.slow
def test_smoke_random_config_runs_a_short_video_from_any_folder(tmp_path, monkeypatch, capsys):
    """The packaged smoke config (random weights) on a 10-frame video: every stage loads and runs and every
    answer says its weights are random. docs/getting-started.md gives the time it takes."""
    pytest.importorskip("depth_anything_3")
    pytest.importorskip("transformers")
    from video_builders import write_video

    monkeypatch.chdir(tmp_path)
    video = write_video(tmp_path / "walk.mp4", n=10, fps=1)
    t0 = time.perf_counter()
    rc = main(["run", str(video), "--config", "smoke-random", "--fps", "0", "--quiet", "--ask", "Where is the chair?"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    assert "loading depth_pose: da3 da3-small (random weights)" in err and "random weights in depth_pose" in err
    assert "[RANDOM WEIGHTS: meaningless]" in out and "frames=10 " in out
    assert time.perf_counter() - t0 < 120  # about 30 s on 2 busy CPU cores (docs/getting-started.md)
