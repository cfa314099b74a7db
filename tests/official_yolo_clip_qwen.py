"""Our YOLO-World / YOLOE, CLIP scene-tag and Qwen-VL code checked against the official code
(ultralytics, transformers) on random weights: same text embeddings, same detections, same pixels,
same chat prompt."""
from __future__ import annotations

import copy
import sys
import types
import zlib

import numpy as np
import pytest

torch = pytest.importorskip("torch")

NAMES = ["cup", "chair", "tv"]
VOCAB = 1000  # token ids of the stand-in CLIP tokenizer


def _stand_in_tokenize(texts, context_length: int = 77, truncate: bool = True):
    """A deterministic CLIP-like tokenizer (SOT, word ids, EOT, zero padding) standing in for `clip.tokenize`."""
    texts = [texts] if isinstance(texts, str) else list(texts)
    out = torch.zeros(len(texts), context_length, dtype=torch.long)
    for i, t in enumerate(texts):
        ids = [VOCAB - 2] + [zlib.crc32(w.encode()) % (VOCAB - 3) + 1 for w in t.lower().split()] + [VOCAB - 1]
        out[i, :len(ids)] = torch.tensor(ids[:context_length])
    return out


class _StandInTextEncoder(torch.nn.Module):
    """Token ids (N, 77) -> unit vectors (N, 512), like ultralytics' TorchScript MobileCLIP text encoder."""

    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(VOCAB, 64)
        self.proj = torch.nn.Linear(64, 512)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        mask = (tokens > 0).float().unsqueeze(-1)
        h = (self.emb(tokens) * mask).sum(1) / mask.sum(1).clamp(min=1.0)
        return torch.nn.functional.normalize(self.proj(h), dim=-1)


@pytest.fixture
def stand_in_text_model(tmp_path, monkeypatch):
    """`mobileclip_blt.ts` (a TorchScript stand-in, weights cannot be downloaded) in the working directory,
    where ultralytics' own `MobileCLIPTS` finds it, and a stand-in `clip` tokenizer package for both paths."""
    clip = types.ModuleType("clip")
    clip.tokenize = _stand_in_tokenize
    clip.clip = clip
    monkeypatch.setitem(sys.modules, "clip", clip)
    torch.manual_seed(7)
    path = tmp_path / "mobileclip_blt.ts"
    torch.jit.trace(_StandInTextEncoder().eval(), _stand_in_tokenize(["a cup"])).save(str(path))
    monkeypatch.chdir(tmp_path)
    return path


def _detector(model: str, **kw):
    pytest.importorskip("ultralytics")
    from directme.perception.yolo_world import YoloWorldDetector

    torch.manual_seed(0)
    return YoloWorldDetector(model=model, weights="random", device="cpu", **kw)


def test_yoloe_matches_official_text_embeddings(stand_in_text_model, tmp_path):
    det = _detector("yoloe-11s", imgsz=64, text_model=str(stand_in_text_model))
    head = det.net.model[-1]
    torch.manual_seed(1)
    for p in head.reprta.parameters():  # a trained RepRTA; the random one is the identity (zero init)
        torch.nn.init.normal_(p, std=0.05)
    raw = det._text_features(NAMES)
    with torch.no_grad():
        tpe = head.get_tpe(torch.as_tensor(raw)[None])[0].numpy()
    assert np.abs(tpe - raw).max() > 0.05  # RepRTA changes the vectors measurably
    det.set_vocabulary(NAMES)
    official = det.net.get_text_pe(NAMES)  # YOLOEModel.get_text_pe: ultralytics' MobileCLIPTS -> head.get_tpe
    np.testing.assert_allclose(det.net.pe.numpy(), official.numpy(), atol=1e-6)
    assert det.net.names == dict(enumerate(NAMES))
    # an .npz of RAW text-model vectors goes through the same RepRTA
    npz = tmp_path / "yoloe_text.npz"
    np.savez(npz, labels=np.array(NAMES), embeddings=raw)
    det.text_model, det.text_embeddings = None, str(npz)
    det.set_vocabulary(NAMES)
    np.testing.assert_allclose(det.net.pe.numpy(), official.numpy(), atol=1e-6)


def test_yoloe_tokens_without_clip_package_are_clip_tokenize(tmp_path, monkeypatch):
    """Without the `clip` package, a local CLIP tokenizer gives `clip.tokenize`'s layout: SOT, tokens,
    EOT, zero padding to 77, EOT kept last when truncating."""
    tf = pytest.importorskip("transformers")
    from directme.perception.yolo_world import clip_tokens

    monkeypatch.setitem(sys.modules, "clip", None)  # `import clip` raises ImportError
    letters = "abcdefghijklmnopqrstuvwxyz"
    vocab = {c: i for i, c in enumerate(letters)} | {c + "</w>": 26 + i for i, c in enumerate(letters)}
    vocab |= {"<|startoftext|>": 52, "<|endoftext|>": 53}
    tf.CLIPTokenizer(vocab=vocab, merges=[]).save_pretrained(tmp_path)
    ids = clip_tokens(["a cup", "x " * 100], clip_dir=str(tmp_path))
    assert ids.shape == (2, 77) and ids.dtype == torch.long
    assert ids[0, :6].tolist() == [52, 26, 2, 20, 41, 53] and not ids[0, 6:].any()
    assert ids[1, 0] == 52 and ids[1, -1] == 53 and ids[1].count_nonzero() == 77


def _test_image() -> np.ndarray:
    """A smooth, non-square image without flat regions (flat regions tie the random network's scores)."""
    rng = np.random.default_rng(1)
    yy, xx = np.mgrid[0:72, 0:100]
    ramp = np.stack([xx * 1.5, yy * 2.5, 255 - xx - yy], -1)
    return np.clip(rng.integers(0, 256, (72, 100, 3)) * 0.3 + ramp * 0.7, 0, 255).astype(np.uint8)


def _lively(det, rgb: np.ndarray) -> None:
    """Make the random network discriminative, the same weights for both paths: batch-norm statistics
    from the image (random init otherwise shrinks activations to ~1e-7), box-head biases spread, and
    per-level class logits scaled so that ~10% of the stride-8/16 scores pass 0.5 (stride 32 off)."""
    net, head = det.net, det.net.model[-1]
    x = det._letterbox(rgb)[0]
    for m in net.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.momentum = 1.0
    net.train()
    with torch.no_grad():
        net(x)
    net.eval()
    torch.manual_seed(2)
    for seq in head.cv2:
        seq[-1].bias.data = torch.randn_like(seq[-1].bias) * 2.0
    raw = []
    for m in head.cv4:
        m.bias.data.fill_(0.0)
        m.logit_scale.data.fill_(0.0)
    hooks = [m.register_forward_hook(lambda mod, i, o: raw.append(o.flatten().double().numpy())) for m in head.cv4]
    with torch.no_grad():
        net(x)
    for h in hooks:
        h.remove()
    for level, (m, logits) in enumerate(zip(head.cv4, raw)):
        gain = 3.0 / logits.std()
        m.logit_scale.data.fill_(float(np.log(gain)))
        m.bias.data.fill_(float(-np.quantile(logits * gain, 0.9)) if level < 2 else -100.0)


@pytest.mark.parametrize("model", ["yolov8s-worldv2", "yoloe-11s"])
def test_yolo_world_matches_official_predict(model):
    from PIL import Image
    from ultralytics import YOLOE, YOLOWorld

    rgb = _test_image()
    det = _detector(model, imgsz=128, conf=0.5, iou=0.5, max_detections=30)
    det.set_vocabulary(NAMES)
    _lively(det, rgb)
    ours = det.detect(rgb)
    official = (YOLOE if det.is_yoloe else YOLOWorld)(f"{model}.yaml")
    official.model = copy.deepcopy(det.net)  # predict fuses the network in place
    res = official.predict(Image.fromarray(rgb), imgsz=128, conf=0.5, iou=0.5, max_det=30, verbose=False,
                           device="cpu")[0]
    theirs = [(res.names[int(c)], float(s), [float(v) for v in b])
              for b, s, c in zip(res.boxes.xyxy, res.boxes.conf, res.boxes.cls)]
    assert len(ours) >= 5 and len(ours) == len(theirs)
    assert len({round(d.score, 4) for d in ours}) == len(ours)  # no ties: the order is meaningful
    for d, (label, score, box) in zip(ours, theirs):
        assert d.label == label
        assert d.score == pytest.approx(score, abs=1e-3)  # Conv+BN fusion in predict moves scores ~1e-5
        np.testing.assert_allclose(d.box_xyxy, box, atol=0.05)


def _clip_reference(rgb: np.ndarray, side: int) -> np.ndarray:
    """CLIP preprocessing written out: shorter side to ``side`` (bicubic), centre crop, CLIP mean/std."""
    from PIL import Image

    h, w = rgb.shape[:2]
    s = side / min(h, w)
    nw, nh = max(side, round(w * s)), max(side, round(h * s))
    img = np.asarray(Image.fromarray(rgb).resize((nw, nh), Image.BICUBIC), np.float32) / 255.0
    top, left = (nh - side) // 2, (nw - side) // 2
    img = img[top:top + side, left:left + side]
    mean, std = np.array([0.48145466, 0.4578275, 0.40821073]), np.array([0.26862954, 0.26130258, 0.27577711])
    return ((img - mean) / std).transpose(2, 0, 1)[None]


@pytest.mark.parametrize("hw", [(48, 80), (90, 40)])
def test_clip_matches_official_processor(hw):
    tf = pytest.importorskip("transformers")
    from directme.perception.scene_tag import ClipSceneTagger, clip_image_processor

    assert clip_image_processor(224).to_dict() == tf.CLIPImageProcessor().to_dict()  # openai/clip-vit-base-patch32
    tagger = ClipSceneTagger(weights="random", device="cpu")  # toy CLIP, 64 px input
    side = tagger.image_size
    yy, xx = np.mgrid[0:hw[0], 0:hw[1]]
    rgb = np.stack([xx * 255 // hw[1], yy * 255 // hw[0], (xx + yy) % 256], -1).astype(np.uint8)
    ours = tagger._pixels(rgb).numpy()
    official = tf.CLIPImageProcessor(size={"shortest_edge": side}, crop_size={"height": side, "width": side})
    np.testing.assert_allclose(ours, official(images=rgb, return_tensors="pt")["pixel_values"].numpy(), atol=1e-5)
    ref = _clip_reference(rgb, side)  # cropped, not squashed (PIL and torchvision bicubic differ slightly)
    assert ours.shape == ref.shape and np.abs(ours - ref).mean() < 0.02


DATA = __import__("pathlib").Path(__file__).parent / "data"
QWEN_TEMPLATES = {"qwen2_5_vl": DATA / "qwen2_5_vl_chat_template.jinja",
                  "qwen3_vl": DATA / "qwen3_vl_instruct_chat_template.jinja"}


def _render_official(template: str, system: str, parts) -> str:
    """Qwen's template rendered by plain jinja2 the way transformers compiles chat templates, on messages
    in Qwen's documented form (image items carry their image; text items their text)."""
    import jinja2

    content = [{"type": "text", "text": p[1]} if p[0] == "text" else {"type": "image", "image": "frame.jpg"}
               for p in parts]
    messages = [{"role": "system", "content": system}, {"role": "user", "content": content}]
    env = jinja2.Environment(trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"])
    return env.from_string(template).render(messages=messages, add_generation_prompt=True)


@pytest.mark.parametrize("family", ["qwen2_5_vl", "qwen3_vl"])
def test_qwen_vl_matches_official_chat_template(family, tmp_path):
    pytest.importorskip("transformers")
    from directme.answerers.base import Keyframe, QueryContext
    from directme.answerers.prompts import build_prompt
    from directme.answerers.tiny import build_tiny_vl
    from directme.answerers.transformers_vl import build

    template = QWEN_TEMPLATES[family].read_text(encoding="utf-8")
    answerer = build({"model": str(build_tiny_vl(family, tmp_path / family, chat_template=template))}).load()
    proc = answerer._processor
    assert proc.chat_template == template and proc.tokenizer.chat_template == template
    rng = np.random.default_rng(0)
    keyframes = tuple(Keyframe(t_s=t, frame_index=int(t), rgb=rng.integers(0, 256, (60, 80, 3), dtype=np.uint8))
                      for t in (4.0, 8.0))
    question = "Where is the sofa now?"
    ctx = QueryContext(question=question, t_s=10.0, options=("behind you", "in front of you"), intent=None,
                       snapshot=None, subgraph_text="Objects:\n- sofa [o1]: front, 2.0 m", keyframes=keyframes)
    prompt = build_prompt(ctx, 4, True)
    inputs = answerer.encode([prompt])
    ids = inputs["input_ids"][0].tolist()
    tok = proc.tokenizer
    # the official rendering, each image placeholder expanded to its merged patch count (grid / 2x2 merge)
    official = _render_official(template, prompt.system, prompt.parts)
    pads = [int(g.prod()) // 4 for g in inputs["image_grid_thw"]]
    pieces = official.split("<|image_pad|>")
    assert len(pieces) == len(keyframes) + 1
    expanded = pieces[0] + "".join("<|image_pad|>" * n + rest for n, rest in zip(pads, pieces[1:]))
    assert ids == tok(expanded, add_special_tokens=False)["input_ids"]
    text = tok.decode(ids)
    assert text.startswith(f"<|im_start|>system\n{prompt.system}<|im_end|>\n<|im_start|>user\n")
    assert text.endswith("<|im_end|>\n<|im_start|>assistant\n")
    assert "You are a helpful assistant." not in text  # our system prompt replaces Qwen's default
    image_id = tok.convert_tokens_to_ids("<|image_pad|>")
    assert ids.count(image_id) == sum(pads) and len(pads) == 2
    last_image = text.rindex("<|vision_end|>")
    assert text.index(question, last_image) > last_image  # the question comes after the images


def test_truthfed_clip_tags_the_true_room():
    pytest.importorskip("transformers")
    from directme.errors import InvalidInputError
    from directme.perception.scene_tag import ClipSceneTagger
    from directme.sim import generate_episode
    from directme.sim.truthfed import TruthSource
    from directme.sim.truthfed.clip import install

    ep = generate_episode(seed=0, minutes=0.5)
    truth = TruthSource(ep)
    tagger = ClipSceneTagger(weights="random", device="cpu")  # default places: every simulator room type
    install(tagger, truth, noise=0.3, seed=0)
    tags = []
    for frame in ep.frames():
        truth.register(frame)
        tags.append(tagger.tag(frame.rgb)[0])
    truths = [truth.room(i) for i in range(ep.n_frames)]
    assert len(set(truths)) >= 3
    assert np.mean([a == b for a, b in zip(tags, truths)]) >= 0.95
    with pytest.raises(InvalidInputError, match="places"):
        install(ClipSceneTagger(weights="random", device="cpu", places=["kitchen", "garage"]), truth)
