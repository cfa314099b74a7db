"""What `directme eval` shows while it runs and when it ends: tqdm bars over videos and items with an
ETA (a line per finished video printed above them), then a plain aligned summary table."""
from __future__ import annotations

import sys
import time
from typing import Any, Mapping, Optional, Sequence, TextIO

from .annotations import BenchEpisode


class EvalProgress:
    """``run_evaluation``'s progress callback: on a terminal, two tqdm bars (videos, items) with a line per
    finished video above them; elsewhere (logs, CI) one line per finished video ending in the same ETA.
    Items advance when their video finishes (videos run in worker processes), so the ETA weighs each video
    by its number of questions."""

    def __init__(self, file: Optional[TextIO] = None, bars: Optional[bool] = None):
        self.file = file or sys.stderr
        self.bars = bars if bars is not None else bool(getattr(self.file, "isatty", lambda: False)())
        self._items: dict[str, int] = {}
        self._done_items = 0
        self._bars: list[Any] = []
        self.started = time.perf_counter()

    def start(self, todo: Sequence[BenchEpisode], total: int) -> None:
        """Called once the videos left to evaluate are known (``total`` counts the finished ones too)."""
        self._items = {e.episode_id: len(e.items) for e in todo}
        self.started = time.perf_counter()
        if self.bars and todo:
            from tqdm import tqdm

            kw = dict(file=self.file, dynamic_ncols=True, smoothing=0.1, mininterval=0.5)
            self._bars = [tqdm(total=total, initial=total - len(todo), unit="video", desc="videos", position=0, **kw),
                          tqdm(total=sum(self._items.values()), unit="item", desc="items ", position=1, **kw)]

    def __call__(self, done: int, total: int, result: Mapping[str, Any]) -> None:
        from .parallel import EpisodeStatus

        ok = result.get("status") == EpisodeStatus.OK
        n_items = self._items.get(str(result.get("episode_id")), 0)
        self._done_items += n_items
        detail = f"{len(result.get('records', []))} records" if ok else _first_line(str(result.get("error", "")), 300)
        line = (f"[{done}/{total}] {result.get('episode_id')} {result.get('status', '?')} "
                f"{float(result.get('wall_s') or 0.0):.1f}s {detail}")
        if not self._bars:
            print(f"{line} | {self.eta()}", file=self.file, flush=True)
            return
        videos, items = self._bars
        videos.write(line, file=self.file)
        videos.update(1)
        items.update(n_items)

    def eta(self) -> str:
        """"items D/N, ETA h:mm:ss" from the items finished so far and the time they took."""
        total = sum(self._items.values())
        left = total - self._done_items
        if not self._done_items or not left:
            return f"items {self._done_items}/{total}"
        eta = (time.perf_counter() - self.started) * left / self._done_items
        return f"items {self._done_items}/{total}, ETA {_hms(eta)}"

    def close(self) -> None:
        for bar in reversed(self._bars):
            bar.close()
        self._bars = []


def _hms(seconds: float) -> str:
    s = int(round(seconds))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


def summary_table(summary: Mapping[str, Any], wall_s: Optional[float] = None,
                  errors: Optional[Mapping[str, str]] = None) -> str:
    """The end of a run as aligned text: what ran, every metric, and the videos that failed (with
    ``errors``: episode id -> error, their cause)."""
    from .parallel import flatten

    took = f" in {wall_s:.1f} s" if wall_s is not None else ""
    head = (f"{summary['benchmark']}: {summary['finished']}/{summary['episodes']} videos finished{took} "
            f"({len(summary['failed'])} failed, {summary['skipped']} from earlier runs; "
            f"executor {summary['executor'].get('kind', '?')})")
    rows = [(k, _cell(v)) for k, v in flatten(summary["metrics"]).items()]
    return "\n".join([head, "", *_aligned([("metric", "value"), *rows]),
                      *([""] + _aligned([("failed video", "error")] + [(e, _first_line((errors or {}).get(e, "")))
                                                                 for e in summary["failed"]])
                        if summary["failed"] else [])])


def _aligned(rows: Sequence[tuple[str, str]]) -> list[str]:
    width = max(len(a) for a, _ in rows)
    lines = [f"{a:<{width}}  {b}".rstrip() for a, b in rows]
    return [lines[0], "-" * max(len(x) for x in lines), *lines[1:]]


def _first_line(text: str, n: int = 120) -> str:
    line = (text or "see errors/").splitlines()[0]
    return line if len(line) <= n else line[: n - 3] + "..."


def _cell(v: Any) -> str:
    return f"{v:.4f}" if isinstance(v, float) else ("" if v is None else str(v))
