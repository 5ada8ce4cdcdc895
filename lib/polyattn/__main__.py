"""Command line: ``python -m polyattn train|grid|records|tolerance|verdicts|bench|book ...``.

Errors a user can fix (a bad activation spec, a missing dataset, an inconsistent config)
are printed as one line with the cause and the fix, without a traceback.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import sys

from . import reproduce
from .book.status import rates_note, records_table, stored_evidence, unpriced, unread_records
from .config import TrainConfig
from .results import record_path
from .runs import load_or_run, load_or_run_all
from .step_cost import measure_missing


def _train_parser(sub):
    p = sub.add_parser("train", help="train one configuration of any task (works under torchrun)")
    for f in dataclasses.fields(TrainConfig):
        if f.name == "probe_metrics":
            p.add_argument("--probe-metrics", default=None, help="comma-separated probe metrics")
            continue
        if f.name == "options":
            p.add_argument("--options", default=None, help='task options as JSON, e.g. \'{"max_len": 512}\'')
            continue
        default = f.default
        kind = {int: int, float: float, str: str}.get(type(default), str)
        p.add_argument("--" + f.name.replace("_", "-"), dest=f.name, default=None, type=kind,
                       help=f"default: {default}")
    p.add_argument("--recompute", action="store_true", help="ignore a stored result and run again")
    p.add_argument("--no-progress", action="store_true")
    return p


def _parse_value(name, text):
    field = {f.name: f for f in dataclasses.fields(TrainConfig)}[name]
    if text is None:
        return None
    if field.default is None and name in ("train_subset", "test_subset", "threads"):
        return int(text)
    if field.default is None and name == "qk_weight_decay":
        return float(text)
    return text


def cmd_train(args) -> int:
    kw = {}
    for f in dataclasses.fields(TrainConfig):
        if f.name == "probe_metrics":
            if args.probe_metrics:
                kw["probe_metrics"] = tuple(args.probe_metrics.split(","))
            continue
        if f.name == "options":
            if args.options:
                try:
                    kw["options"] = json.loads(args.options)
                except ValueError as exc:
                    raise ValueError(f"--options must be a JSON object ({exc})") from None
            continue
        v = _parse_value(f.name, getattr(args, f.name))
        if v is not None:
            kw[f.name] = v
    config = TrainConfig(**kw)
    record = load_or_run(config, recompute=args.recompute, progress=not args.no_progress)
    if record.get("rank", 0) == 0:
        last = record["metrics"][-1] if record["metrics"] else {}
        declared = {m["name"]: last.get(m["name"]) for m in record["metrics_spec"]}
        print(json.dumps({"status": record["status"], **declared, "record": str(record_path(config))}))
    return 0


def cmd_grid(args) -> int:
    from .experiments import GRIDS

    if args.name not in GRIDS:
        raise ValueError(f"unknown experiment {args.name!r}; choose one of {sorted(GRIDS)}")
    seeds = tuple(int(s) for s in args.seeds.split(",")) if args.seeds else None
    configs = GRIDS[args.name](args.preset, seeds)
    for field, wanted in (("activation", args.activation), ("n_mode", args.n_mode), ("dataset", args.dataset)):
        if wanted:
            configs = [c for c in configs if getattr(c, field) in wanted.split(";")]
            if not configs:
                raise ValueError(f"no configuration of {args.name!r} has {field} in {wanted!r}; "
                                 f"its {field}s: {sorted({getattr(c, field) for c in GRIDS[args.name](args.preset, seeds)})}")
    if args.context:
        wanted = {int(t) for t in args.context.split(";")}
        lengths = sorted({int(c.options.get("context", 0)) for c in configs})
        configs = [c for c in configs if int(c.options.get("context", 0)) in wanted]
        if not configs:
            raise ValueError(f"no configuration of {args.name!r} has a training length in {args.context!r}; "
                             f"its lengths: {lengths}")
    overrides = {k: v for k, v in (("data_root", args.data_root), ("device", args.device)) if v is not None}
    configs = [c.replace(**overrides) for c in configs]
    records = load_or_run_all(configs, recompute=args.recompute, desc=args.name)
    ok = sum(r["status"] == "ok" for r in records)
    print(f"{args.name} [{args.preset}]: {len(records)} records, {ok} ok, {len(records) - ok} diverged")
    return 0


def cmd_records(args) -> int:
    evidence = stored_evidence()
    if args.measure:
        stored, missing = evidence
        measure_missing(unpriced(stored, missing), [c for _, c, _ in stored], steps=args.steps, rounds=args.rounds)
    rows = records_table(evidence=evidence)
    widths = {k: max(len(k), *(len(str(r[k])) for r in rows)) for k in rows[0]}
    print("  ".join(k.ljust(w) for k, w in widths.items()))
    for r in rows:
        print("  ".join(str(r[k]).ljust(w) for k, w in widths.items()))
    unread = unread_records()
    if unread:
        print(f"{len(unread)} stored record(s) that no grid names (superseded settings; no chapter reads them): "
              + ", ".join(str(p.relative_to(p.parents[3])) for p in unread), file=sys.stderr)
    print()
    print(rates_note(stored=evidence[0]))
    return 0


def cmd_tolerance(args) -> int:
    if args.measure:
        short = reproduce.measure_short()
        reproduce.write_spread(short, reproduce.SHORT_FILE)
        epoch = reproduce.measure_spread()
        reproduce.write_spread(epoch)
        readme = reproduce.REPO_ROOT / "README.md"
        readme.write_text(reproduce.replace_readme_block(readme.read_text(), reproduce.readme_block()))
        for path in (reproduce.SHORT_FILE, reproduce.SPREAD_FILE, readme):
            print(f"wrote {path.relative_to(reproduce.REPO_ROOT)}")
    short, epoch = reproduce.stored_short(), reproduce.stored_spread()
    noise, signal, tol = short["spread_between_instruction_sets"], short["effect_of_one_lr_step"], short["tolerance"]
    print(f"the first {short['steps']} steps of {short['record']}, measured on {short['cpu']} "
          f"under instruction sets {', '.join(short['runs'])}:")
    print(f"  losses: spread {noise['loss']:.2e} (relative), one learning-rate step's shift {signal['loss']:.2e}, "
          f"tolerance {tol['loss']:.2e}")
    print(f"  test accuracy: spread {noise['accuracy']:.2e}, shift {signal['accuracy']:.2e}, "
          f"tolerance {tol['accuracy']:.2e}")
    print(f"one whole epoch of {epoch['record']} on {epoch['cpu']} (compared only on the record's own machine):")
    for k, v in epoch["spread_between_instruction_sets"].items():
        kind = "relative" if k in reproduce.LOSS_KEYS else "absolute"
        print(f"  {k}: spread between instruction sets {v:.2e} ({kind})")
    for cpu, other in epoch.get("other_cpu_models", {}).items():
        worst = max(other["spread_to_committed"][k] for k in reproduce.LOSS_KEYS)
        print(f"  a record of {cpu} rerun here: losses {worst:.2e} from its committed first epoch (relative)")
    return 0


def main(argv=None) -> int:
    from .data import DatasetMissing

    parser = argparse.ArgumentParser(prog="python -m polyattn", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    t = _train_parser(sub)
    t.set_defaults(func=cmd_train)
    g = sub.add_parser("grid", help="load or run every configuration of an experiment grid")
    g.add_argument("name")
    g.add_argument("--preset", default="book", choices=("smoke", "book", "paper"))
    g.add_argument("--seeds", default=None, help="comma-separated seeds (default: the preset's)")
    g.add_argument("--activation", default=None, help="only these activation specs (';'-separated)")
    g.add_argument("--dataset", default=None, help="only these datasets, e.g. LRA tasks (';'-separated)")
    g.add_argument("--n-mode", default=None, help="only these readings of N, e.g. row or fixed (';'-separated)")
    g.add_argument("--context", default=None, help="only these training lengths T of a causal grid (';'-separated)")
    g.add_argument("--data-root", default=None, help="dataset location (paper preset: ImageNet, Tiny-ImageNet)")
    g.add_argument("--device", default=None, help="cpu, cuda (paper preset default: cuda)")
    g.add_argument("--recompute", action="store_true")
    g.set_defaults(func=cmd_grid)
    r = sub.add_parser("records", help="per grid: the book runs, how many are stored from a clean tree, who reads them")
    r.add_argument("--measure", action="store_true",
                   help="first time training steps of each missing kind of run with no stored run to price it, "
                        "side by side with the nearest stored kind (kept in data/step_ratios.json)")
    r.add_argument("--steps", type=int, default=3, help="--measure: steps timed per round (default 3)")
    r.add_argument("--rounds", type=int, default=5, help="--measure: alternating rounds (default 5)")
    r.set_defaults(func=cmd_records)
    tol = sub.add_parser("tolerance", help="how far the first steps and the first epoch move between instruction "
                                           "sets, and the tolerance a short rerun on any machine is held to")
    tol.add_argument("--measure", action="store_true",
                     help="measure both on this machine (each instruction set, and a one-step shift of the "
                          "learning-rate schedule) and store them")
    tol.set_defaults(func=cmd_tolerance)
    for name, module in (("bench", "polyattn.bench"), ("book", "polyattn.book"), ("verdicts", "polyattn.book.verdicts"),
                         ("section", "polyattn.book.sections"), ("floors", "polyattn.task_floors")):
        s = sub.add_parser(name, help=f"see python -m {module} --help", add_help=False)
        s.add_argument("rest", nargs=argparse.REMAINDER)
        s.set_defaults(func=lambda a, m=module: _delegate(m, a.rest))
    argv = sys.argv[1:] if argv is None else list(argv)
    delegated = {"bench": "polyattn.bench", "book": "polyattn.book", "verdicts": "polyattn.book.verdicts",
                 "section": "polyattn.book.sections", "floors": "polyattn.task_floors"}
    if argv and argv[0] in delegated:
        # delegated whole, options first included (argparse's REMAINDER would refuse a leading --help)
        run = lambda: _delegate(delegated[argv[0]], argv[1:])
    else:
        args = parser.parse_args(argv)
        run = lambda: args.func(args)
    try:
        return run()
    except (ValueError, DatasetMissing) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


def _delegate(module, rest) -> int:
    import importlib

    mod = importlib.import_module(module)
    return mod.main(rest) or 0


if __name__ == "__main__":
    sys.exit(main())
