"""`directme sim`: generate a synthetic egocentric episode and write it to a directory."""
from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seed", type=int, default=0, help="random seed (same seed = same episode)")
    parser.add_argument("--minutes", type=float, default=5.0, help="episode length in minutes")
    parser.add_argument("--out", required=True, help="output directory (created)")
    parser.add_argument("--width", type=int, default=320, help="image width in pixels")
    parser.add_argument("--height", type=int, default=240, help="image height in pixels")
    parser.add_argument("--fps", type=float, default=1.0, help="frames per second")
    parser.add_argument("--no-frames", action="store_true",
                        help="do not write images (load_episode re-renders them identically)")


def run(args: argparse.Namespace) -> int:
    import time

    from ..sim import generate_episode, save_episode

    t0 = time.perf_counter()
    ep = generate_episode(seed=args.seed, minutes=args.minutes, width=args.width, height=args.height, fps=args.fps)
    out = save_episode(ep, args.out, write_frames=not args.no_frames)
    counts: dict[str, int] = {}
    for q in ep.questions:
        counts[q.subtask] = counts.get(q.subtask, 0) + 1
    print(f"episode {ep.video_uid}: {ep.n_frames} frames {ep.intrinsics.width}x{ep.intrinsics.height} "
          f"at {ep.fps:g} fps, {len(ep.layout.rooms)} rooms, {len(ep.objects)} objects, {len(ep.events)} events")
    for subtask, n in counts.items():
        print(f"  {subtask}: {n} questions")
    print(f"wrote {out} in {time.perf_counter() - t0:.1f} s")
    print(f"questions={len(ep.questions)}")
    return 0
