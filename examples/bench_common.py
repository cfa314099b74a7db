"""Shared plumbing of the benchmark example scripts: each is `directme eval BENCHMARK` with the
benchmark fixed, using the command's own options, parser and run (`directme eval --help` lists them:
--videos, --annotations, --out, --config, --workers, --ray, --video-timeout, --check, --blank-frames,
--judge-url, ...). Per-video predictions go to OUT/predictions/*.json, the metrics to OUT/metrics.md
and OUT/metrics.json."""
from __future__ import annotations

import argparse
import sys
from typing import Optional, Sequence

from directme.cli import configure_logging
from directme.commands import eval as eval_command
from directme.errors import DirectmeError


def parser(benchmark: str, description: str) -> argparse.ArgumentParser:
    """`directme eval`'s parser with ``benchmark`` fixed and this script's description."""
    p = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    eval_command.add_arguments(p, benchmark=benchmark)
    p.add_argument("-v", "--verbose", action="store_true", help="show the INFO logs of directme and model packages")
    return p


def main(benchmark: str, description: str, argv: Optional[Sequence[str]] = None) -> int:
    """Parse ``argv`` and run `directme eval` on ``benchmark``; exit code as the command's (2: bad input)."""
    args = parser(benchmark, description).parse_args(argv)
    configure_logging(args.verbose)
    try:
        return int(eval_command.run(args) or 0)
    except DirectmeError as exc:
        print(f"{benchmark}: error: {exc}", file=sys.stderr)
        return 2
