"""`directme run INPUT [--ask Q --at S ...] [--questions FILE] [--config FILE] [--rerun FILE.rrd | --rerun-serve]
[--report DIR] [--save DIR] [--load DIR]`: stream an input through the Agent and answer questions.

INPUT: a video file, an image or RGB-D folder (7-Scenes, TUM), an Aria .vrs recording (or a folder holding
video.vrs), or a simulator episode folder (`directme sim --out DIR`; its questions are asked by default).
"""
from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from pathlib import Path
from typing import Any, Iterable, Iterator, Optional, Sequence

import numpy as np

from ..errors import InvalidInputError
from ..types import OPTION_LETTERS, Answer, Flag
from .argtypes import at_least, check_path, fps, rate_hz, seconds
from .run_questions import Ask, collect_questions, parse_time
from .run_source import GeometryCheck, configure, open_source


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("input", nargs="?", default=None,
                   help="video file, image / RGB-D folder, Aria .vrs, or simulator episode folder "
                        "(optional with --load: only ask questions)")
    p.add_argument("--ask", action="append", default=[], metavar="QUESTION",
                   help="a question; repeatable; the i-th --at gives its time (default: end of the stream)")
    p.add_argument("--at", action="append", default=[], type=parse_time, metavar="SECONDS",
                   help="stream time of the matching --ask, in seconds or HH:MM:SS")
    p.add_argument("--questions", default=None, metavar="FILE",
                   help="questions file: JSON/YAML list of {question, t_s, options} (UCS-Bench files work) "
                        "or text lines 'SECONDS QUESTION'")
    p.add_argument("--config", default=None, metavar="FILE", help="agent config (YAML/JSON), see docs/backends.md")
    p.add_argument("--fps", type=fps, default=1.0, help="frames per second fed to the agent (0 = every frame)")
    p.add_argument("--max-frames", type=at_least(1), default=None, help="stop after this many frames")
    p.add_argument("--source-fps", type=rate_hz, default=None, metavar="HZ",
                   help="frame rate of a 7-Scenes or image folder (no timestamps in those layouts; default 30)")
    p.add_argument("--trajectory", default=None, metavar="CSV",
                   help="Aria MPS / ADT trajectory for a .vrs input (for an Aria folder found beside the recording "
                        "when not given: aria_trajectory.csv, mps/slam/closed_loop_trajectory.csv)")
    p.add_argument("--skip-corrupt", action="store_true",
                   help="video input: skip damaged parts (a warning names each) instead of stopping with an error")
    view = p.add_mutually_exclusive_group()
    view.add_argument("--rerun", default=None, metavar="FILE.rrd", help="write a rerun recording (`rerun FILE.rrd`)")
    view.add_argument("--rerun-serve", action="store_true", help="serve the recording live to a rerun viewer")
    p.add_argument("--rerun-image-side", type=at_least(1), default=320, help="longest side of images logged to rerun")
    p.add_argument("--map-every", type=seconds, default=1.0, metavar="SECONDS",
                   help="log the memory (objects, places, graph) to rerun every this many stream seconds")
    p.add_argument("--report", default=None, metavar="DIR", help="write top-down PNGs and DIR/index.html")
    p.add_argument("--report-maps", type=at_least(0), default=4,
                   help="map snapshots in the report besides the questions")
    p.add_argument("--report-questions", type=at_least(0), default=12,
                   help="at most this many question images in the report (evenly spread; 0 = none)")
    p.add_argument("--save", default=None, metavar="DIR", help="save the memory at the end (resume with --load)")
    p.add_argument("--load", default=None, metavar="DIR", help="start from a saved memory; frames already "
                                                               "in it are skipped")
    p.add_argument("--out", default=None, metavar="FILE.json", help="write the answers as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


# ------------------------------------------------------------------ the run

class _Tap:
    """Wraps a perception backend and keeps what it produced, so the viewer can show it."""

    def __init__(self, inner: Any = None) -> None:
        self.inner, self.produced = inner, []

    def _keep(self, out: list) -> list:
        self.produced.extend(out)
        return out

    def process(self, frame: Any) -> list:
        return self._keep(self.inner.process(frame))

    def flush(self) -> list:
        return self._keep(self.inner.flush())

    def reset(self) -> None:
        if self.inner is not None:
            self.inner.reset()

    def drain(self) -> list:
        out, self.produced = self.produced, []
        return out



class Runner:
    """Streams frames through the agent, asks questions on time, feeds the viewer and the report.

    The questions are scheduled with the benchmarks' runner (directme.bench.runner.StreamRunner): each is
    asked once every frame before its time is observed and before any later frame is; questions without a
    time, or after the last frame, are asked at the end. This object is the model that runner drives."""

    def __init__(self, args: argparse.Namespace, agent: Any, tap: _Tap, asks: list[Ask]) -> None:
        self.args, self.agent, self.tap = args, agent, tap
        self.asks = list(asks)
        self.results: list[tuple[Ask, Any]] = []
        self.logger = None
        if args.rerun or args.rerun_serve:
            from ..viz.rerun_log import RerunLogger

            self.logger = RerunLogger(args.rerun, serve=args.rerun_serve, image_max_side=args.rerun_image_side)
            if self.logger.url:
                print(f"rerun: serving at {self.logger.url} (watch live with `rerun {self.logger.url}`)")
        self._next_map_t = -float("inf")
        self.n_objects = 0
        self.last_input_t: Optional[float] = None
        self.say = print  # tqdm.write while the progress bar is shown, so lines do not mix
        self._bar: Any = None

    def _snapshot(self, t_s: float) -> Any:
        snap = self.agent.memory.as_of(t_s)
        self.n_objects = sum(1 for o in snap.objects.values() if o.present)
        return snap

    def _after_perception(self) -> None:
        for fp in self.tap.drain():
            if self.logger is not None:
                self.logger.log_frame(fp)
            if fp.t_s >= self._next_map_t:
                snap = self._snapshot(fp.t_s)
                if self.logger is not None:
                    self.logger.log_memory(snap)
                self._next_map_t = fp.t_s + self.args.map_every

    def _ask(self, ask: Ask, at_end: bool = False) -> None:
        seen = [x for x in (self.agent.latest_t, self.last_input_t) if x is not None]
        latest = max(seen) if seen else None
        t = ask.t_s if ask.t_s is not None else latest
        if t is not None and latest is not None and t > latest:  # between frames, or after the last one
            if at_end:
                self.say(f"note: question at t={t:.1f}s is after the last frame (t={latest:.1f}s); asked then")
            t = latest
        answer = self.agent.ask(ask.text, t=t, options=ask.options or None)
        self.results.append((ask, answer))
        print_answer(ask, answer, self.say)
        if self.logger is not None and self.agent.latest_t is not None:
            self.logger.log_answer(answer, self.agent.memory.as_of(answer.t_s))

    # -- the model driven by StreamRunner (directme.bench.runner.ModelUnderTest)
    def observe(self, frame: Any) -> None:
        self.agent.observe(frame)
        self.last_input_t = frame.t_s
        self._after_perception()
        self._bar.update(1)
        self._bar.set_postfix(objects=self.n_objects, t=f"{frame.t_s:.1f}s", refresh=False)

    def ask(self, question: str, t: Optional[float] = None, options: Optional[Sequence[str]] = None) -> Answer:
        return self.agent.ask(question, t=t, options=options)

    def _unseen(self, frames: Iterable[Any], check: GeometryCheck) -> Iterator[Any]:
        """The frames after those already in a loaded memory, each checked before any question is asked."""
        start = self.agent.latest_t
        for frame in frames:
            if start is not None and frame.t_s <= start:
                self._bar.update(1)
                continue
            check(frame)
            yield frame

    def _end_of_stream(self) -> None:
        bar = self._bar
        if not bar.disable and bar.total is not None and bar.n != bar.total:  # an estimate: end at 100 %
            bar.total = bar.n
            bar.refresh()
        self.agent.flush()
        self._after_perception()
        bar.close()
        self.say = print

    def run(self, frames: Optional[Iterable[Any]], total: Optional[int], check: GeometryCheck) -> int:
        """Stream ``frames`` (None: nothing to stream, only the questions to ask), asking each question on
        time; returns how many frames were observed."""
        from ..bench.runner import StreamRunner

        stream = StreamRunner(self, () if frames is None else self._unseen(frames, check), fps=None)
        for ask in self.asks:
            stream.schedule(float("inf") if ask.t_s is None else ask.t_s,
                            lambda r, _t, ask=ask: self._ask(ask, at_end=r.stream_ended))
        if frames is None:
            stream.run()
        else:
            from tqdm import tqdm

            self._bar = tqdm(total=total, unit="frame", disable=self.args.quiet, file=sys.stderr, dynamic_ncols=True)
            self.say = print if self.args.quiet else (lambda line: tqdm.write(line, file=sys.stdout))
            try:
                stream.run(on_end=self._end_of_stream)
            finally:
                self._bar.close()
        if self.logger is not None:
            if self.logger.url and sys.stdin.isatty():
                input(f"rerun: still serving at {self.logger.url}; press Enter to stop ")
            self.logger.close()
        return stream.frames_observed


def print_answer(ask: Ask, answer: Any, say: Any = print) -> None:
    """The answer with its time, options, confidence (and correctness when known), evidence and flags."""
    from ..viz.common import answer_line

    check = ""
    abstained = answer.abstained
    if ask.answer and answer.letter:
        check = "  [correct]" if answer.letter == ask.answer else f"  [wrong; correct: {ask.answer}]"
    elif ask.answer and abstained:
        check = f"  [no answer; correct: {ask.answer}]"
    lines = [f"[t={answer.t_s:7.1f}s] {ask.text}"]
    if ask.options:
        lines.append("           options: " + " | ".join(f"{c}. {o}" for c, o in zip(OPTION_LETTERS, ask.options)))
    if abstained and Flag.NO_EVIDENCE in answer.flags:  # memory holds nothing to choose an option from
        lines.append(f"           -> no answer - no evidence in memory ({' '.join(str(answer.text).split())}){check}")
    elif abstained:  # the geometric answerer gave no answer and no MLLM did either
        why = "the MLLM failed" if Flag.MLLM_FAILED in answer.flags else "no MLLM configured"
        lines.append(f"           -> not understood - {why} ({' '.join(str(answer.text).split())}){check}")
    else:
        lines.append(f"           -> {answer_line(answer)}   confidence {answer.confidence:.2f}{check}")
    for ev in answer.evidence[:4]:
        seen = f" seen {min(ev.times_s):.1f}-{max(ev.times_s):.1f}s" if ev.times_s else ""
        kf = f", keyframes at {', '.join(f'{k:.1f}' for k in ev.keyframe_times_s[:3])}s" if ev.keyframe_times_s else ""
        lines.append(f"           evidence: {ev.label or ev.node_id} [{ev.node_id}]{seen}{kf} {ev.detail}".rstrip())
    if answer.flags:
        lines.append(f"           flags: {', '.join(answer.flags)}")
    say("\n".join(lines))


def _answers_json(results: list[tuple[Ask, Any]]) -> list[dict]:
    return [{"question": a.text, "t_s": ans.t_s, "options": list(a.options), "letter": ans.letter,
             "text": ans.text, "confidence": ans.confidence, "correct_letter": a.answer, "flags": list(ans.flags),
             "abstained": ans.abstained,
             "evidence": [{"node_id": e.node_id, "label": e.label, "times_s": list(e.times_s)} for e in ans.evidence]}
            for a, ans in results]


def _write_report(args: argparse.Namespace, agent: Any, results: list[tuple[Ask, Any]]) -> None:
    from ..viz.report import ReportItem, report_times, write_report

    first, last = agent.memory.as_of(agent.latest_t).ego.times_s[[0, -1]]
    items = [ReportItem(agent.memory.as_of(t)) for t in report_times(float(first), float(last), args.report_maps)]
    answers = [ans for _, ans in results if ans.t_s >= first]
    if len(answers) > args.report_questions:
        keep = np.unique(np.linspace(0, len(answers) - 1, args.report_questions).round().astype(int))
        answers = [answers[i] for i in keep] if args.report_questions > 0 else []
    items += [ReportItem(agent.memory.as_of(ans.t_s), ans) for ans in answers]
    title = f"directme run {args.input or args.load}"
    index = write_report(args.report, items, title=title)
    print(f"report: {index} ({len(items)} images)")


def check_outputs(args: argparse.Namespace) -> None:
    """Refuse now, before anything is streamed, an output that could only fail at the end: ``--out`` naming a
    directory, or inside the ``--save`` directory (a save replaces its whole directory), ``--report`` inside
    it, and a ``--save`` directory that ``Agent.save`` would refuse."""
    from ..agent import check_save_destination

    save = None
    if args.save is not None:
        try:
            save = check_save_destination(args.save).resolve()
        except InvalidInputError as e:
            raise InvalidInputError(f"--save: {e}") from None
    for flag, value, is_dir in (("--out", args.out, False), ("--report", args.report, True),
                                ("--rerun", args.rerun, False)):
        p = check_path(flag, value, is_dir)
        if p is None:
            continue
        if save is not None and (p.resolve() == save or save in p.resolve().parents):
            raise InvalidInputError(f"{flag} {p} is inside the --save directory {args.save}, which the save replaces "
                                    f"as a whole; write it elsewhere")


def run(args: argparse.Namespace) -> int:
    from ..agent import Agent, build_perception
    from ..bench.models import ModelSpec

    if args.input is None and args.load is None:
        raise InvalidInputError("give an INPUT to stream (video, folder, .vrs, episode) or --load DIR")
    check_outputs(args)
    src = open_source(args.input, args.fps or None, args.trajectory, args.skip_corrupt,
                      args.source_fps) if args.input else None
    tap = _Tap()
    if args.load:
        agent = Agent.load(args.load, perception=tap, episode=src.episode if src else None)
    else:
        agent = Agent(configure(args, src), perception=tap, episode=src.episode if src else None)
    # no config given: ModelSpec(config=None), so the error can say the backend is the default one
    check = GeometryCheck(ModelSpec("agent", config=agent.config if args.config or args.load else None),
                          agent.config.perception.backend, str(args.input))
    if src is not None and src.no_geometry:
        check.source(src.no_geometry)
    if src is not None:
        tap.inner = build_perception(agent.config.perception, agent.episode)
    asks = collect_questions(args, src.questions if src else ())
    runner = Runner(args, agent, tap, asks)
    t0 = time.perf_counter()
    frames, total = None, None
    if src is not None:
        frames = itertools.islice(src.frames, args.max_frames) if args.max_frames else src.frames
        total = min(src.total, args.max_frames or src.total) if src.total else args.max_frames
        print(f"input: {args.input} ({src.kind}); perception: {agent.config.perception.backend}; "
              f"answerer: {agent.config.answerer.name}; {len(asks)} question(s)")
        if src.aria is not None and agent.config.perception.backend == "aria_gt":
            from ..perception.aria_gt import describe_run

            print(describe_run(src.aria))
    n = runner.run(frames, total, check)
    wall = time.perf_counter() - t0
    n_obj = len(agent.memory.as_of(agent.latest_t).objects) if agent.latest_t is not None else 0
    random = f" random_weights={','.join(agent.random_weights)}" if agent.random_weights else ""
    print(f"frames={n} wall_s={wall:.1f} frames_per_s={n / wall if wall > 0 else 0:.2f} objects={n_obj} "
          f"answers={len(runner.results)}{random}")
    scored = [(a, ans) for a, ans in runner.results if a.answer]
    if scored:
        acc = sum(ans.letter == a.answer for a, ans in scored) / len(scored)
        n_abstained = sum(ans.abstained for _, ans in scored)
        print(f"accuracy={acc:.3f} ({len(scored)} questions with a known answer; {n_abstained} abstained, "
              f"counted wrong)")
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(_answers_json(runner.results), indent=2), encoding="utf-8")
    if args.rerun:
        print(f"rerun: {args.rerun} (view with `rerun {args.rerun}`)")
    if args.report:
        if agent.latest_t is None:
            raise InvalidInputError("--report: nothing was observed, there is no map to draw")
        _write_report(args, agent, runner.results)
    if args.save:
        print(f"saved: {agent.save(args.save)}")
    return 0
