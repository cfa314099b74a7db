"""DA3 chunk scale reconciliation (numpy) and checkpoint loading reports (tiny torch modules)."""
from __future__ import annotations

import logging
import math

import numpy as np
import pytest

from directme.errors import BackendError, InvalidInputError
from directme.perception.da3_scale import ScaleKeeper


def _chain(keeper: ScaleKeeper, n: int, bias: float, evidence_noise: float, seed: int = 0) -> list[float]:
    """Chunk scales when every overlap ratio is off by ``bias`` (a drifting chain) and each chunk's metric
    evidence (true scale 1) has lognormal noise; returns each chunk's scale error factor."""
    rng = np.random.default_rng(seed)
    errs, s = [], None
    for _ in range(n):
        chained = None if s is None else s * bias
        evidence = None if evidence_noise < 0 else float(np.exp(rng.normal(0.0, evidence_noise)))
        s = keeper.next(chained, evidence)
        errs.append(s)
    return errs


def test_scale_keeper_blends_chain_and_evidence() -> None:
    k = ScaleKeeper(gain=0.5)
    assert k.next(None, None) == 1.0 and not k.metric  # no evidence: provisional, flagged
    assert k.next(2.0, None) == 2.0 and not k.metric
    assert k.next(2.0, 4.0) == 4.0 and k.metric  # first evidence adopted whole
    assert math.isclose(k.next(2.0, 8.0), 4.0)  # then geometric blend: exp(mean(log 2, log 8))
    with pytest.raises(InvalidInputError):
        ScaleKeeper(gain=1.5)


def test_scale_keeper_bounds_a_drifting_chain() -> None:
    """A chain 3% off per chunk drifts without evidence (x2.4 after 30 chunks); with noisy evidence
    (10% per chunk) the error stays bounded and far below either source alone."""
    drift = _chain(ScaleKeeper(0.5, provisional=1.0), 30, 1.03, -1)
    kept = _chain(ScaleKeeper(0.5), 30, 1.03, 0.10)
    assert drift[-1] > 2.3
    assert max(abs(math.log(e)) for e in kept) < 0.25
    assert abs(float(np.mean(np.log(kept[10:])))) < 0.08  # no drift: log error averages near 0


torch = pytest.importorskip("torch")


def _save(tmp_path, state: dict) -> str:
    from safetensors.torch import save_file

    path = tmp_path / "model.safetensors"
    save_file({k: v.contiguous() for k, v in state.items()}, str(path))
    return str(path)


def test_load_reports_missing_and_unexpected_tensors_by_name(tmp_path, caplog) -> None:
    from directme.perception.weights import load_state_checked

    net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Linear(4, 2), torch.nn.Linear(2, 2))
    state = dict(net.state_dict())
    state.pop("2.bias")
    state["extra.weight"] = torch.zeros(1)
    with caplog.at_level(logging.WARNING):
        missing, unexpected = load_state_checked(net, _save(tmp_path, state), "tiny")
    assert missing == ["2.bias"] and unexpected == ["extra.weight"]
    assert "2.bias" in caplog.text and "extra.weight" in caplog.text


def test_load_refuses_another_architecture(tmp_path) -> None:
    from directme.perception.weights import load_state_checked

    net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Linear(4, 2))
    other = {"0.weight": torch.zeros(4, 3)}  # 3 of 4 tensors missing
    with pytest.raises(BackendError, match="another architecture"):
        load_state_checked(net, _save(tmp_path, other), "tiny")
    wrong = dict(net.state_dict(), **{"0.weight": torch.zeros(5, 3)})
    with pytest.raises(BackendError, match="does not fit"):
        load_state_checked(net, _save(tmp_path, wrong), "tiny")


def test_da3_current_repository_first_older_one_still_found(tmp_path, monkeypatch) -> None:
    from directme.errors import MissingWeightsError
    from directme.perception.da3 import PRESETS, _model_folder

    assert PRESETS["da3-large"].endswith("DA3-LARGE-1.1") and PRESETS["da3nested-giant-large"].endswith("-1.1")
    monkeypatch.setenv("DIRECTME_WEIGHTS_DIR", str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(MissingWeightsError, match="DA3-LARGE-1.1"):
        _model_folder("da3-large", None, "da3")
    old = tmp_path / "DA3-LARGE"
    old.mkdir()
    (old / "model.safetensors").write_bytes(b"")
    assert _model_folder("da3-large", None, "da3") == old
    new = tmp_path / "DA3-LARGE-1.1"
    new.mkdir()
    (new / "model.safetensors").write_bytes(b"")
    assert _model_folder("da3-large", None, "da3") == new
