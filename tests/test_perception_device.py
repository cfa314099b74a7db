"""`device: auto` (CUDA when available, else CPU) is every model backend's default and the shipped configs'
value; any other spelling than auto | cpu | cuda | cuda:N | mps is refused when the config loads."""
from __future__ import annotations

import importlib
import inspect
from pathlib import Path

import pytest
import yaml

from directme._compat.device import check_device, resolve_device
from directme.config import AgentConfig
from directme.errors import InvalidInputError

ROOT = Path(__file__).resolve().parents[1]
BACKENDS = [("directme.perception.da3", "DepthAnything3Backend"),
            ("directme.perception.grounding_dino", "GroundingDinoDetector"),
            ("directme.perception.grounding_dino_ida", "GroundingDinoIdaDetector"),
            ("directme.perception.yolo_world", "YoloWorldDetector"),
            ("directme.perception.sam2_tracker", "Sam2StreamTracker"),
            ("directme.perception.scene_tag", "ClipSceneTagger"),
            ("directme.answerers.transformers_vl", "TransformersVLConfig")]


@pytest.mark.parametrize("value", ["auto", "cpu", "cuda", "cuda:0", "cuda:3", "mps"])
def test_accepted_devices(value) -> None:
    assert check_device(value) == value


@pytest.mark.parametrize("value", ["gpu", "CUDA", "cuda:", "cuda:x", "", None, 0])
def test_refused_devices_name_the_option(value) -> None:
    with pytest.raises(InvalidInputError, match=r"detector device must be one of auto \| cpu"):
        check_device(value, "detector device")


def test_auto_picks_cuda_only_when_torch_sees_a_gpu() -> None:
    torch = pytest.importorskip("torch")
    assert resolve_device("auto") == ("cuda" if torch.cuda.is_available() else "cpu")
    assert resolve_device("cpu") == "cpu"


@pytest.mark.parametrize("module, name", BACKENDS)
def test_every_model_backend_defaults_to_auto(module, name) -> None:
    params = inspect.signature(getattr(importlib.import_module(module), name)).parameters
    assert params["device"].default == "auto", f"{module}.{name}"


def test_a_misspelt_device_fails_when_the_config_loads() -> None:
    cfg = {"perception": {"backend": "pipeline", "options": {"depth_pose": {"name": "given"},
                                                             "detector": {"name": "grounding_dino", "device": "gpu"}}}}
    with pytest.raises(InvalidInputError, match="perception detector device must be one of"):
        AgentConfig.from_dict(cfg)


def _devices(node) -> list:
    if isinstance(node, dict):
        return [v for k, v in node.items() if k == "device"] + [d for v in node.values() for d in _devices(v)]
    if isinstance(node, list):
        return [d for v in node for d in _devices(v)]
    return []


def test_shipped_configs_use_auto_and_load() -> None:
    configs = sorted((ROOT / "examples" / "configs").glob("*.yaml")) + sorted((ROOT / "directme").rglob("*.yaml"))
    assert configs
    for path in configs:
        devices = _devices(yaml.safe_load(path.read_text(encoding="utf-8")))
        assert devices and set(devices) == {"auto"}, (path.name, devices)
        AgentConfig.from_file(path)
