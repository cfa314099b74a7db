"""Write the offline lmms-eval task ``directme_sim_vsibench``: simulator episodes and VSI-Bench's questions
about them (vsi_kinds.py), as a folder for ``lmms-eval --include_path``:

    DIR/directme_sim_vsibench.yaml   the task: VSI-Bench's prompt, scoring and per-kind metrics
    DIR/docs.jsonl                   one document per question (VSI-Bench's fields + video, t_s)
    DIR/episodes/<video_uid>/        the episodes (``directme sim`` format; frames re-rendered on load)

    python -m directme.bench.lmms.simtask --out DIR --seeds 0 1 2 --minutes 10
    lmms-eval --model directme --model_args perception=oracle --tasks directme_sim_vsibench \\
        --include_path DIR --output_path out/lmms

No network: the documents are read with the ``json`` dataset builder from DIR, and the scoring is imported
from the installed lmms-eval (``lmms_eval.tasks.vsibench.utils``).
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Optional, Sequence

from ...errors import InvalidInputError
from .vsi_kinds import KINDS, episode_items

TASK = "directme_sim_vsibench"
VSI = "lmms_eval.tasks.vsibench.utils"
DIRECTION_LEVELS = ("object_rel_direction_easy", "object_rel_direction_medium", "object_rel_direction_hard")
# VSI-Bench's question_type -> its per-kind metric in lmms-eval (the three direction levels share one)
METRIC_OF_KIND = {
    "obj_appearance_order": "obj_appearance_order_accuracy", "object_abs_distance": "object_abs_distance_mra",
    "object_counting": "object_counting_mra", "object_rel_distance": "object_rel_distance_accuracy",
    "object_size_estimation": "object_size_estimation_mra", "room_size_estimation": "room_size_estimation_mra",
    "route_planning": "route_planning_accuracy",
    **{k: "object_rel_direction_accuracy" for k in DIRECTION_LEVELS},
}
# VSI-Bench's prompt lines (its task yaml's lmms_eval_specific_kwargs)
PROMPT_KWARGS = {"pre_prompt": "",
                 "mca_post_prompt": "Answer with the option's letter from the given choices directly.",
                 "na_post_prompt": "Please answer the question using a single word or phrase."}


def doc_to_visual(doc: dict) -> list[str]:
    """The task's visual: the episode folder the model streams (perception=oracle reads its ground truth)."""
    return [doc["video"]]


def _yaml(docs_path: Path, kinds: Sequence[str]) -> str:
    metrics = ["vsibench_overall"] + list(dict.fromkeys(METRIC_OF_KIND[k] for k in kinds))
    lines = [f"# written by python -m directme.bench.lmms.simtask; kinds: {', '.join(kinds)}",
             f"task: {TASK}", "dataset_path: json", "dataset_kwargs:", "  data_files:",
             f"    test: {json.dumps(str(docs_path))}", "test_split: test", "output_type: generate_until",
             "doc_to_visual: !function directme.bench.lmms.simtask.doc_to_visual",
             f"doc_to_text: !function {VSI}.vsibench_doc_to_text", 'doc_to_target: "ground_truth"',
             "generation_kwargs:", "  max_new_tokens: 16", "  temperature: 0", "  do_sample: false",
             f"process_results: !function {VSI}.vsibench_process_results", "metric_list:"]
    for m in metrics:
        agg = "vsibench_aggregate_overall" if m == "vsibench_overall" else f"vsibench_aggregate_{m}"
        lines += [f"  - metric: {m}", f"    aggregation: !function {VSI}.{agg}", "    higher_is_better: true"]
    lines += ["lmms_eval_specific_kwargs:", "  default:"]
    lines += [f"    {k}: {json.dumps(v)}" for k, v in PROMPT_KWARGS.items()]
    lines += ["metadata:", "  - version: 0.0"]
    return "\n".join(lines) + "\n"


def build_task(out: Path, seeds: Sequence[int], minutes: float, kinds: Optional[Sequence[str]] = None,
               per_kind: int = 5, seed: int = 0) -> list[dict]:
    """Generate the episodes, their questions and the task folder (module docstring); returns the documents.
    ``kinds``: VSI-Bench question types (default: every registered one). The three direction levels are
    scored together by lmms-eval and need each other: they are dropped together when one has no question."""
    from ...sim import generate_episode, save_episode

    kinds = tuple(kinds or KINDS)
    out = Path(out).resolve()
    docs: list[dict] = []
    for s in seeds:
        ep = generate_episode(seed=int(s), minutes=float(minutes), with_questions=False)
        folder = save_episode(ep, out / "episodes" / ep.video_uid, write_frames=False).resolve()
        t_end = ep.frames_gt[-1].t_s
        for item in episode_items(ep, kinds, per_kind, seed):
            docs.append({"id": len(docs), "dataset": "directme-sim", "scene_name": ep.video_uid,
                         "question_type": item.question_type, "question": item.question,
                         "options": list(item.options), "ground_truth": item.ground_truth,
                         "video": str(folder), "t_s": t_end})
    present = {d["question_type"] for d in docs}
    if any(k in present for k in DIRECTION_LEVELS) and not all(k in present for k in DIRECTION_LEVELS):
        docs = [d for d in docs if d["question_type"] not in DIRECTION_LEVELS]  # lmms-eval needs all three
        docs = [{**d, "id": i} for i, d in enumerate(docs)]
    if not docs:
        raise InvalidInputError(f"no question of kinds {kinds} in episodes {list(seeds)} of {minutes} min: "
                                "give more or longer episodes")
    used = [k for k in kinds if any(d["question_type"] == k for d in docs)]
    docs_path = out / "docs.jsonl"
    docs_path.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    (out / f"{TASK}.yaml").write_text(_yaml(docs_path, used), encoding="utf-8")
    return docs


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m directme.bench.lmms.simtask", description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, type=Path, help="task folder to write (for lmms-eval --include_path)")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2], help="one episode per seed")
    ap.add_argument("--minutes", type=float, default=10.0, help="episode length")
    ap.add_argument("--kinds", nargs="+", default=None, help=f"VSI-Bench question types (default: {' '.join(KINDS)})")
    ap.add_argument("--per-kind", type=int, default=5, help="questions of each kind per episode (at most)")
    args = ap.parse_args(argv)
    docs = build_task(args.out, args.seeds, args.minutes, args.kinds, args.per_kind)
    counts = {k: sum(d["question_type"] == k for d in docs) for k in dict.fromkeys(d["question_type"] for d in docs)}
    print(f"{TASK}: {len(docs)} questions on {len(args.seeds)} episodes in {args.out} ({counts})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
