"""Every perception backend against its package's official inference code, with the same random weights:
DA3 (`DepthAnything3.inference`), Grounding DINO (groundingdino-py's `predict`, transformers'
`post_process_grounded_object_detection`), SAM2 (`build_sam2_video_predictor` + `propagate_in_video`),
YOLO-World / YOLOE (ultralytics `predict`, `get_text_pe`), CLIP (`CLIPImageProcessor`) and Qwen-VL (its own
chat template). One module per backend (tests/official_<backend>.py), collected here, so that
``pytest tests/test_perception_official.py`` runs them all."""
from official_da3 import *  # noqa: F401,F403
from official_gdino import *  # noqa: F401,F403
from official_sam2 import *  # noqa: F401,F403
from official_yolo_clip_qwen import *  # noqa: F401,F403
