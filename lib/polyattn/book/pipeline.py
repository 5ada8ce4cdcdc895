"""The whole run: execute what changed, keep the manifest, then assemble and build the site."""
from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Sequence

from .common import PRESETS, REPO_ROOT, BookError
from .execute import execute_all, no_progress_bars, stored_only
from .keys import key_of, key_parts, load_manifest, results_hash, save_manifest
from .notebooks import check_chapter, declared_results, read_notebook, runs_alone
from .site import assemble, build_html
from .toc import Entry, discover

#: The verdicts of the book preset, as the README's findings block states them (committed).
from .verdicts import VERDICTS_FILE  # noqa: E402,F401  (re-exported)
from .verdicts import write as write_verdicts


@dataclass
class RunReport:
    executed: list[str] = field(default_factory=list)
    cached: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    html: Optional[Path] = None


def _select(entries: list[Entry], chapters: Optional[Sequence[str]]) -> set[str]:
    names = [e.name for e in entries if e.kind == "notebook"]
    if not chapters:
        return set(names)
    chosen = set()
    for want in chapters:
        hits = [n for n in names if n == want or n.split("_", 1)[0] == want or n.startswith(want)]
        if not hits:
            raise BookError(f"--chapters: no notebook chapter matches {want!r}; chapters are {', '.join(names)}")
        chosen.update(hits)
    return chosen


def run(preset: str = "book", chapters: Optional[Sequence[str]] = None, force: bool = False,
        recompute: bool = False, seeds: Optional[list[int]] = None, device: str = "cpu",
        html: bool = True, root: Path = REPO_ROOT, build_root: Optional[Path] = None,
        strict: bool = True, jobs: int = 1) -> RunReport:
    """Execute what changed, then build the site.  Raises BookError naming the failing chapter.

    ``jobs`` chapters execute at once (each in its own kernel, with its share of the cores);
    a chapter whose metadata says ``polyattn.alone`` (it times code) runs after them, alone.
    """
    if preset not in PRESETS:
        raise BookError(f"unknown preset {preset!r}; use one of {', '.join(PRESETS)}")
    if jobs < 1:
        raise BookError(f"--jobs {jobs}: at least one chapter must execute at a time; pass --jobs 1 or more")
    root = Path(root).resolve()
    build_root = Path(build_root).resolve() if build_root is not None else root
    executed_dir = build_root / "_build" / "executed"
    entries = discover(root)
    for e in entries:
        if e.kind == "missing":
            print(f"[book] WARNING: {e.docname} is in _toc.yml but has no source yet; left out of this build",
                  file=sys.stderr, flush=True)
    selected = _select(entries, chapters)
    params = {"preset": preset, "recompute": bool(recompute), "seeds": seeds, "device": device}
    manifest = load_manifest(build_root)
    report = RunReport()
    executed: dict[str, Path] = {}
    done: dict[str, tuple[dict, list[str]]] = {}
    todo: list[tuple[Entry, Path, str, bool]] = []
    for e in entries:
        if e.kind != "notebook":
            continue
        out = executed_dir / f"{e.name}.ipynb"
        rec = manifest["chapters"].get(e.name, {})
        if e.name not in selected:
            if out.exists() and rec.get("status") == "ok":
                executed[e.name] = out
                rec["state"] = "not selected (earlier output)"
                print(f"[book] {e.name}: not selected, earlier output kept", flush=True)
            else:
                report.skipped.append(e.name)
                print(f"[book] WARNING: {e.name}: not selected and never executed; left out", file=sys.stderr, flush=True)
            continue
        check_chapter(e)
        nb = read_notebook(e.source)
        experiments = declared_results(nb)
        parts = key_parts(e.source, params, root)
        key = key_of(parts, results_hash(experiments, preset))
        done[e.name] = (parts, experiments)
        if (not force and not recompute and out.exists() and rec.get("key") == key and rec.get("status") == "ok"):
            rec["state"] = "cached"
            manifest["chapters"][e.name] = rec
            executed[e.name] = out
            report.cached.append(e.name)
            print(f"[book] {e.name}: cached (executed {rec.get('executed_at')} in {rec.get('seconds', 0):.1f} s)", flush=True)
            continue
        todo.append((e, out, key, runs_alone(nb)))

    def finished(e: Entry, out: Path, key: Optional[str], stamp: str, seconds: Optional[float]) -> None:
        ok = seconds is not None
        manifest["chapters"][e.name] = {"key": key if ok else None, "status": "ok" if ok else "failed",
                                        "preset": preset, "params": params, "state": "executed" if ok else "failed",
                                        "seconds": round(seconds, 2) if ok else None, "executed_at": stamp,
                                        "source": str(e.source.relative_to(root)), "docname": e.docname}
        if ok:
            manifest["chapters"][e.name]["results"] = done[e.name][1]
            executed[e.name] = out
            report.executed.append(e.name)
            print(f"[book] {e.name}: executed in {seconds:.1f} s", flush=True)
        save_manifest(manifest, build_root)

    with stored_only(preset == "book" and not recompute), no_progress_bars():
        execute_all(todo, params, root, jobs, finished)
    executed = {e.name: executed[e.name] for e in entries if e.name in executed}     # the book's order
    report.executed.sort(key=[e.name for e in entries].index)
    # Records written during this run by the chapters themselves (a chapter creates the records
    # it misses, and two chapters may share an experiment) belong to the keys, so that a rerun
    # finds every chapter cached.  Records that appear between runs still execute again.
    for name, (parts, experiments) in done.items():
        if experiments and manifest["chapters"].get(name, {}).get("status") == "ok":
            manifest["chapters"][name]["key"] = key_of(parts, results_hash(experiments, preset))
    # chapters that left the TOC leave the manifest
    names = {e.name for e in entries if e.kind == "notebook"}
    manifest["chapters"] = {k: v for k, v in manifest["chapters"].items() if k in names}
    save_manifest(manifest, build_root)
    print(f"[book] {len(report.executed)} executed, {len(report.cached)} cached", flush=True)
    if preset == "book" and build_root == root and Path(root).resolve() == REPO_ROOT.resolve():
        # the verdicts come from the repository's records alone, whichever chapters were executed
        changed = write_verdicts(root)
        if changed:
            print(f"[book] {', '.join(changed)} rewritten from the records (python -m polyattn verdicts)", flush=True)
    if html:
        src = assemble(entries, executed, build_root, root)
        report.html = build_html(src, build_root, strict=strict)
    return report

