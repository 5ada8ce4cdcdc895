"""Execute the book's chapters with papermill under a content key, then build the site.

The command line of ``python -m polyattn.book``; see the package's docstring for the flow.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Optional, Sequence

from .common import PRESETS, REPO_ROOT, BookError
from .pipeline import run


def _parse_seeds(text: Optional[str]) -> Optional[list[int]]:
    if text is None or text.strip() == "":
        return None
    try:
        return [int(s) for s in text.split(",") if s.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--seeds takes comma-separated integers, e.g. 0,1,2; got {text!r}") from None


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m polyattn.book", description=__doc__.split("\n\n")[0])
    parser.add_argument("--preset", default="book", choices=PRESETS, help="experiment size (default: book)")
    parser.add_argument("--chapters", default=None,
                        help="comma-separated chapters to execute (names or numbers, e.g. 01,04_vit); default all")
    parser.add_argument("--force", action="store_true", help="execute even when the content key is unchanged")
    parser.add_argument("--recompute", action="store_true",
                        help="pass recompute=True to the chapters (rerun experiments instead of loading records)")
    parser.add_argument("--seeds", type=_parse_seeds, default=None, help="comma-separated seeds passed to the chapters")
    parser.add_argument("--device", default="cpu", help="device passed to the chapters (default: cpu)")
    parser.add_argument("--no-html", action="store_true", help="execute only; do not build the site")
    parser.add_argument("--root", type=Path, default=REPO_ROOT, help="the book's source folder (holds _toc.yml)")
    parser.add_argument("--build-root", type=Path, default=None,
                        help="folder that receives _build/ (default: the source folder)")
    parser.add_argument("--jobs", type=int, default=1,
                        help="chapters executed at once, each with its share of the cores (default 1); "
                             "chapters that time code still run alone")
    args = parser.parse_args(argv)
    chapters = [c.strip() for c in args.chapters.split(",") if c.strip()] if args.chapters else None
    start = time.perf_counter()
    try:
        run(preset=args.preset, chapters=chapters, force=args.force, recompute=args.recompute, seeds=args.seeds,
            device=args.device, html=not args.no_html, root=args.root, build_root=args.build_root,
            jobs=args.jobs)
    except BookError as exc:
        print(f"[book] FAILED: {exc}", file=sys.stderr, flush=True)
        return 1
    print(f"[book] done in {time.perf_counter() - start:.1f} s", flush=True)
    return 0

