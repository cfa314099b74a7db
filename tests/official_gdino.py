"""Our Grounding DINO detectors against the official inference paths, with the same random weights
and one prompt: `grounding_dino_ida` vs groundingdino-py's `util.inference` (its load_image
transform + `predict`), `grounding_dino` vs transformers' processor (PIL image processor +
`post_process_grounded_object_detection`). Both official paths score a box by the max sigmoid over
ALL token positions; ours by the max over the tokens of a label only ("[CLS]", "." and "[SEP]"
name no label). The tests check the pixels, boxes, scores and labels are the official ones
everywhere, and that the only boxes where we differ are those whose best token is such a token.
Also: the prompts of one image in one batched forward, equal to one forward per prompt."""
from __future__ import annotations

import numpy as np
import pytest

from directme.perception.grounding_common import preprocess, split_prompts

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

pytestmark = pytest.mark.usefixtures("one_torch_thread")

LABELS = ["cup", "dining table", "tv", "chair", "potted plant"]  # no word shared by two labels
HW = (60, 100)  # shortest side 64 -> 64 x 106: the official sizes truncate (106.7), rounding gives 107
IMAGE_SIZE = 64
THRESHOLD = 0.6  # box and text threshold: the scaled random heads put part of the queries above it
NO_NMS = 1.01  # IoU never reaches it: every query above the threshold is a detection
SPECIALS = ("[CLS]", "[SEP]", ".")


def _rgb(seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    coarse = rng.integers(0, 255, (6, 10, 3)).astype(np.uint8)  # blocks: resizing matters, as in photos
    return (np.kron(coarse, np.ones((10, 10, 1))) + rng.integers(0, 20, (*HW, 3))).clip(0, 255).astype(np.uint8)


def _to_pixels(cxcywh: np.ndarray) -> np.ndarray:
    h, w = HW
    b = cxcywh * [w, h, w, h]
    xyxy = np.stack([b[:, 0] - b[:, 2] / 2, b[:, 1] - b[:, 3] / 2, b[:, 0] + b[:, 2] / 2, b[:, 1] + b[:, 3] / 2], 1)
    return np.clip(xyxy, 0, [w, h, w, h])  # ours clips to the image; the official boxes are not clipped


def _compare(det, ours, probs: np.ndarray, off_xyxy: np.ndarray, off_scores: np.ndarray,
             off_phrases: list[str], ids: list[int]) -> None:
    """``probs`` (queries, 256): the sigmoid of the official run's logits; ``off_*``: its outputs
    for the queries whose max over all tokens > THRESHOLD (in query order)."""
    spans = det.prompts[0].spans
    tokens = det.tokenizer.convert_ids_to_tokens(ids)
    label_tokens = {t for _, toks in spans for t in toks}
    assert {tokens[i] for i in range(len(ids)) if i not in label_tokens} == set(SPECIALS)
    kept = np.flatnonzero(probs.max(1) > THRESHOLD)
    assert len(kept) == len(off_scores) >= 5
    np.testing.assert_allclose(off_scores, probs[kept].max(1), rtol=1e-6)
    matched, dropped, differ = set(), 0, 0
    for j, q in enumerate(kept):
        per_label = [probs[q, list(toks)].max() for _, toks in spans]
        hit = [k for k, d in enumerate(ours) if np.allclose(d.box_xyxy, off_xyxy[j], atol=1e-3)]
        if max(per_label) <= THRESHOLD:  # kept officially on "[CLS]", "." or "[SEP]" alone: not a detection here
            assert not hit and tokens[int(probs[q].argmax())] in SPECIALS
            dropped += 1
            continue
        assert len(hit) == 1, f"query {q}: official box {off_xyxy[j]} not among ours"
        d = ours[hit[0]]
        label = spans[int(np.argmax(per_label))][0]
        assert d.label == label and np.isclose(d.score, max(per_label), rtol=1e-5)
        if not np.isclose(d.score, off_scores[j], rtol=1e-5):  # the official score is a special token's
            assert d.score < off_scores[j] and tokens[int(probs[q].argmax())] in SPECIALS
            differ += 1
        phrase_words = off_phrases[j].replace("[CLS]", " ").replace("[SEP]", " ").replace(".", " ").split()
        assert set(phrase_words) & set(label.split())  # the label's best token is in the official phrase
        named = {lab for lab, _ in spans if set(lab.split()) & set(phrase_words)}
        assert len(named) > 1 or named == {label}  # a phrase naming one label names ours
        matched.add(hit[0])
    assert matched == set(range(len(ours))) and len(ours) >= 3 and len(ours) + dropped == len(kept)
    print(f"{det.name}: {len(kept)} official boxes, {len(ours)} ours (equal boxes and labels), {differ} of them "
          f"with a lower score, {dropped} not ours: their best token is [CLS], '.' or [SEP]")


def _spread(class_embeds, scale: float) -> None:
    """Scale the random heads' token logits so that the scores spread instead of saturating at 0 or 1."""
    for head in class_embeds:
        head.register_forward_hook(lambda _m, _a, logits: logits * scale)


@pytest.fixture(scope="module")
def ida():
    pytest.importorskip("groundingdino")
    from directme.perception.grounding_dino_ida import GroundingDinoIdaDetector

    torch.manual_seed(0)  # the random weights: the same figures every run
    det = GroundingDinoIdaDetector(weights="random", image_size=IMAGE_SIZE, box_threshold=THRESHOLD,
                                   nms_iou=NO_NMS, max_detections=1000)
    det.set_vocabulary(LABELS)
    _spread(det.model.class_embed, 0.5)
    return det


@pytest.fixture(scope="module")
def hf():
    from directme.perception.grounding_dino import GroundingDinoDetector

    torch.manual_seed(0)
    det = GroundingDinoDetector(weights="random", image_size=IMAGE_SIZE, box_threshold=THRESHOLD,
                                nms_iou=NO_NMS, max_detections=1000)
    det.set_vocabulary(LABELS)
    _spread(det.model.class_embed, 0.05)
    return det


def test_gdino_matches_official_groundingdino_inference(ida) -> None:
    import groundingdino.datasets.transforms as T
    from groundingdino.util.inference import predict
    from PIL import Image

    rgb = _rgb()
    # load_image's transform, with our shortest side instead of its 800
    transform = T.Compose([T.RandomResize([IMAGE_SIZE], max_size=1333), T.ToTensor(),
                           T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])
    image, _ = transform(Image.fromarray(rgb), None)
    assert image.shape == (3, 64, 106)
    np.testing.assert_allclose(preprocess(torch, rgb, ida.processed_hw(*HW), "cpu")[0].numpy(), image.numpy(),
                               atol=1e-5)
    raw = {}
    hook = ida.model.register_forward_hook(lambda _m, _a, out: raw.update(out))
    try:
        boxes, scores, phrases = predict(ida.model, image, ". ".join(LABELS), THRESHOLD, THRESHOLD, device="cpu")
    finally:
        hook.remove()
    ids = ida.model.tokenizer(". ".join(LABELS) + ".")["input_ids"]
    assert ids == ida.prompts[0].enc["input_ids"][0].tolist()  # our prompt text tokenizes as theirs
    _compare(ida, ida.detect(rgb), raw["pred_logits"][0].sigmoid().numpy(), _to_pixels(boxes.numpy()),
             scores.numpy(), phrases, ids)


def test_gdino_matches_official_transformers_post_process(hf) -> None:
    import transformers
    from PIL import Image

    rgb = _rgb(1)
    processor = transformers.GroundingDinoProcessor(
        transformers.GroundingDinoImageProcessorPil(size={"shortest_edge": IMAGE_SIZE, "longest_edge": 1333}),
        hf.tokenizer)
    inputs = processor(images=Image.fromarray(rgb), text=LABELS, return_tensors="pt")
    assert tuple(inputs["pixel_values"].shape) == (1, 3, 64, 106) and bool(inputs["pixel_mask"].all())
    np.testing.assert_allclose(preprocess(torch, rgb, hf.processed_hw(*HW), "cpu").numpy(),
                               inputs["pixel_values"].numpy(), atol=1e-5)
    ids = inputs["input_ids"][0].tolist()
    assert ids == hf.prompts[0].enc["input_ids"][0].tolist()
    with torch.no_grad():
        out = hf.model(**inputs)
    res = processor.post_process_grounded_object_detection(out, inputs["input_ids"], threshold=THRESHOLD,
                                                           text_threshold=THRESHOLD, target_sizes=[HW])[0]
    off_xyxy = np.clip(res["boxes"].numpy(), 0, [HW[1], HW[0], HW[1], HW[0]])
    _compare(hf, hf.detect(rgb), out.logits[0].sigmoid().numpy(), off_xyxy, res["scores"].numpy(),
             list(res["text_labels"]), ids)


@pytest.mark.parametrize("which", ["hf", "ida"])
def test_gdino_prompts_batched_in_one_forward(which, request) -> None:
    """Several prompts of different lengths (padded in the batch): one forward per image, the
    same detections as one forward per prompt."""
    det = request.getfixturevalue(which)
    saved = det._prompts, det.nms_iou, det.prompt_batch if hasattr(det, "prompt_batch") else None
    calls = []
    hook = det.model.register_forward_hook(lambda *_: calls.append(1))
    try:
        det._prompts = split_prompts(det.tokenizer, LABELS, 6, det.name)  # 6-token prompts: 4 of them
        assert len(det._prompts) == 4 and len({p.enc["input_ids"].shape[1] for p in det._prompts}) > 1
        det.nms_iou = 0.5
        rgb = _rgb(2)
        det.prompt_batch = 1
        single = det.detect(rgb)
        assert len(calls) == 4
        det.prompt_batch = 4
        batched = det.detect(rgb)
        assert len(calls) == 5  # one more forward for all four prompts
    finally:
        hook.remove()
        det._prompts, det.nms_iou = saved[0], saved[1]
        if saved[2] is not None:
            det.prompt_batch = saved[2]
    assert len(single) >= 3 and [d.label for d in batched] == [d.label for d in single]
    np.testing.assert_allclose([d.box_xyxy for d in batched], [d.box_xyxy for d in single], atol=1e-3)
    np.testing.assert_allclose([d.score for d in batched], [d.score for d in single], atol=1e-5)


def _scripted(det, per_label: dict[str, list[tuple[tuple[float, ...], float]]]):
    """A `_forward` returning, for each prompt, one query per (cxcywh box, score) of its labels."""
    def forward(_pixels, prompts):
        single = not isinstance(prompts, (list, tuple))
        probs, boxes = torch.zeros(len([prompts] if single else prompts), 4, 256), torch.full((1, 4, 4), 0.5)
        boxes = boxes.repeat(probs.shape[0], 1, 1)
        for b, prompt in enumerate([prompts] if single else prompts):
            queries = [(label, toks, q) for label, toks in prompt.spans for q in per_label.get(label, [])]
            for k, (_label, toks, (box, score)) in enumerate(queries):
                probs[b, k, list(toks)] = score
                boxes[b, k] = torch.tensor(box)
        return (probs[0], boxes[0]) if single else (probs, boxes)  # one prompt per call before batching
    return forward


def test_gdino_one_object_named_by_two_prompts_is_one_detection() -> None:
    """Prompts "couch ." and "bed ." both find the couch: one detection, not one per label."""
    from directme.perception.grounding_dino import GroundingDinoDetector

    det = GroundingDinoDetector(weights="random", image_size=IMAGE_SIZE, box_threshold=0.3, nms_iou=0.5)
    det.set_vocabulary(["couch", "bed", "chair"])
    det._prompts = split_prompts(det.tokenizer, ["couch", "bed", "chair"], 4, det.name)
    assert [[lab for lab, _ in p.spans] for p in det._prompts] == [["couch"], ["bed"], ["chair"]]
    couch, shifted, chair = (0.3, 0.5, 0.4, 0.6), (0.32, 0.5, 0.4, 0.58), (0.8, 0.3, 0.2, 0.2)
    det._forward = _scripted(det, {"couch": [(couch, 0.9)], "bed": [(shifted, 0.6)], "chair": [(chair, 0.8)]})
    out = det.detect(_rgb())
    assert [(d.label, round(d.score, 3)) for d in out] == [("couch", 0.9), ("chair", 0.8)]
    np.testing.assert_allclose(out[0].box_xyxy, _to_pixels(np.array([couch]))[0], atol=1e-4)
    # the label is a score-weighted vote over the group: two "bed" boxes (0.6 + 0.5) outvote one couch (0.7);
    # the box stays the best one, the score is the best "bed" score
    det._forward = _scripted(det, {"couch": [(couch, 0.7)], "bed": [(shifted, 0.6), (couch, 0.5)]})
    out = det.detect(_rgb())
    assert [(d.label, round(d.score, 3)) for d in out] == [("bed", 0.6)]
    np.testing.assert_allclose(out[0].box_xyxy, _to_pixels(np.array([couch]))[0], atol=1e-4)


def test_gdino_resize_sizes_match_official() -> None:
    """Our resize target against both official size rules, where ``max_size`` binds too."""
    from PIL import Image

    from directme._compat.torchvision_cpu import import_torch_stack
    from directme.perception.grounding_common import resized_hw

    pytest.importorskip("groundingdino")
    gd_transforms = import_torch_stack("groundingdino.datasets.transforms", "perception", "groundingdino-py")
    get_size_with_aspect_ratio = import_torch_stack("transformers.image_transforms").get_size_with_aspect_ratio
    for h, w in [(60, 100), (240, 320), (100, 1000), (1000, 90), (480, 640), (333, 500), (800, 801)]:
        for size, max_size in [(64, 1333), (800, 1333), (180, 300), (96, 100)]:
            theirs, _ = gd_transforms.resize(Image.new("RGB", (w, h)), None, size, max_size)
            assert resized_hw(h, w, size, max_size, long_from_raw=False) == (theirs.height, theirs.width)
            assert resized_hw(h, w, size, max_size, long_from_raw=True) == get_size_with_aspect_ratio(
                (h, w), size, max_size)


def test_gdino_label_scores_are_the_best_token_per_label() -> None:
    """The one segment-max over all labels equals taking each label's best token one label at a time
    (values and chosen label), also for labels without tokens (score 0)."""
    import torch

    from directme.perception.grounding_common import label_scores

    g = torch.Generator().manual_seed(0)
    for _ in range(50):
        prob = torch.rand(20, 64, generator=g)
        spans, pos = [], 1
        for i in range(int(torch.randint(1, 12, (1,), generator=g))):
            n = int(torch.randint(0, 4, (1,), generator=g))
            spans.append((f"label{i}", list(range(pos, pos + n))))
            pos += n + 1
        want = torch.stack([prob[:, t].max(dim=1).values if t else prob.new_zeros(20) for _, t in spans], dim=1)
        best, idx = label_scores(torch, prob, spans)
        assert torch.equal(best, want.max(dim=1).values) and torch.equal(idx, want.max(dim=1).indices)
