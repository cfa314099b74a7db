"""The ready configs under examples/configs/: they parse into AgentConfig, name known backends with
options those backends accept, and the documented one-line commands use them; plain videos with no
depth backend stop before the first video with an error naming the perception config."""
from __future__ import annotations

import importlib
import json
import inspect
import re
from pathlib import Path

import pytest

from directme.validation import parse_options
from directme.answerers.registry import available_answerers
from directme.bench.models import PERCEPTION_EXAMPLE, ModelSpec, require_depth_backend
from directme.cli import main
from directme.config import AgentConfig
from directme.errors import InvalidInputError
from directme.perception.pipeline import PRESETS, REGISTRY, STAGES, resolve_config

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = sorted((ROOT / "examples" / "configs").glob("*.yaml"))
ART = ROOT / "tests" / "artifacts" / "bench"
# the class each real backend's build(cfg) constructs with the stage's options (minus "name")
BACKEND_CLASSES = {"da3": "DepthAnything3Backend", "grounding_dino": "GroundingDinoDetector",
                   "sam2": "Sam2StreamTracker", "clip": "ClipSceneTagger"}
ANSWERER_CONFIGS = {"transformers": ("directme.answerers.transformers_vl", "TransformersVLConfig"),
                    "openai": ("directme.answerers.openai_api", "OpenAIConfig"),
                    "policy": ("directme.answerers.policy", "PolicyConfig")}


def test_the_documented_configs_exist():
    names = {p.name for p in CONFIGS}
    assert {"perception-da3-gdino-sam2.yaml", "mllm-qwen3vl.yaml", "mllm-server.yaml", "policy-qwen3vl.yaml"} <= names
    assert (ROOT / "directme" / "configs" / f"{PERCEPTION_EXAMPLE}.yaml").is_file()  # packaged: found by name


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_example_config_parses_with_known_backends(path):
    cfg = AgentConfig.from_file(path)
    assert cfg.perception.backend in {"given", "oracle"} | set(PRESETS)
    stages = resolve_config(cfg.perception)
    assert stages["depth_pose"]["name"] == "da3"  # a depth model: plain videos carry no depth
    for stage in STAGES:
        opts = stages.get(stage)
        if not opts:
            continue
        name = opts["name"]
        assert name in REGISTRY[stage], f"{path.name}: unknown {stage} backend {name!r}"
        cls = getattr(importlib.import_module(REGISTRY[stage][name]), BACKEND_CLASSES[name])
        inspect.signature(cls).bind(**{k: v for k, v in opts.items() if k != "name"})  # TypeError on a bad key
    assert cfg.answerer.name in available_answerers()
    if cfg.answerer.name in ANSWERER_CONFIGS:
        module, attr = ANSWERER_CONFIGS[cfg.answerer.name]
        options = parse_options(getattr(importlib.import_module(module), attr), cfg.answerer.options,
                                f"{cfg.answerer.name} answerer options", "answerer.options")
        if cfg.answerer.name == "policy":
            mllm_module, mllm_attr = ANSWERER_CONFIGS[options.mllm]
            parse_options(getattr(importlib.import_module(mllm_module), mllm_attr), options.mllm_options,
                          f"{options.mllm} answerer options", "answerer.options.mllm_options")
    require_depth_backend(ModelSpec("agent", config=str(path)), "plain videos")  # does not raise


def test_mllm_configs_share_the_perception_section():
    reference = AgentConfig.from_file(PERCEPTION_EXAMPLE).perception  # by name, as users give it
    for path in CONFIGS:
        assert AgentConfig.from_file(path).perception == reference, f"{path.name} drifted from {PERCEPTION_EXAMPLE}"


@pytest.mark.parametrize("config", [None, {"perception": {"backend": "sensors"}},
                                    {"perception": {"backend": "pipeline", "options": {"depth_pose": "given"}}}])
def test_no_depth_backend_names_the_perception_config(config):
    with pytest.raises(InvalidInputError, match=re.escape(f"--config {PERCEPTION_EXAMPLE}")):
        require_depth_backend(ModelSpec("agent", config=config), "plain videos")


def test_depth_check_passes_models_that_need_none():
    require_depth_backend(ModelSpec("scripted"), "plain videos")
    require_depth_backend(ModelSpec("agent", config={"perception": {"backend": "oracle"}}), "plain videos")
    require_depth_backend(ModelSpec("agent", config={"perception": {"backend": "rgbd"}}), "plain videos")


def test_eval_on_videos_without_depth_backend_stops_before_the_first_video(tmp_path, capsys):
    out = tmp_path / "out"
    rc = main(["eval", "ucsbench", "--annotations", str(ART / "ucsbench_questions.jsonl"), "--videos", str(tmp_path),
               "--out", str(out)])
    err = capsys.readouterr().err
    assert rc == 2 and f"--config {PERCEPTION_EXAMPLE}" in err and "plain videos carry no depth" in err
    assert not (out / "predictions").exists()
    # black frames carry an empty depth map and a pose: the default agent dry-runs the protocol on them
    rc = main(["eval", "ucsbench", "--annotations", str(ART / "ucsbench_questions.jsonl"), "--blank-frames",
               "--in-process", "--out", str(out / "blank")])
    assert rc == 0, capsys.readouterr().err
    preds = json.loads(next((out / "blank" / "predictions").glob("*.json")).read_text())
    assert preds and "no_evidence" in json.dumps(preds)


def _documented_configs(page: str, command: str) -> list[str]:
    text = (ROOT / "docs" / page).read_text(encoding="utf-8")
    lines = [ln for ln in text.splitlines() if "[--" not in ln  # not the usage synopsis
             and (f"directme {command} " in ln and "--videos " in ln or f"directme {command} my_video" in ln)]
    assert lines, f"no `directme {command}` one-liner in {page}"
    found = []
    for ln in lines:
        m = re.search(r"--config (\S+?)`?(?:\s|$)", ln)
        assert m, f"{page}: one-line command without --config: {ln}"
        found.append(m.group(1))
    return found


@pytest.mark.parametrize("page,command", [("benchmarks.md", "eval"), ("mllm.md", "run"), ("mllm.md", "eval")])
def test_one_line_commands_on_plain_videos_use_a_ready_config(page, command):
    for ref in _documented_configs(page, command):
        assert ref.startswith("examples/configs/") and (ROOT / ref).is_file(), ref
        require_depth_backend(ModelSpec("agent", config=str(ROOT / ref)), "plain videos")
