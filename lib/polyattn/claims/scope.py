"""What each claim rests on: the experiments its comparisons read, their data, the attention's
sequence length N, how long each run trained, how many seeds were paired, and the CPU-hours of
the runs, all read from the stored records the comparisons pair.

A comparison reads the runs of its two arms that share a seed (and a cell, when it pools); a run
read by several comparisons of one claim counts once.  CPU-hours are the records' wall time
(every book run is timed on one thread), summed over every run read, diverged ones included.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterable, Optional

from ..analysis.frames import record_seq_len
from ..numbers import significant
from .evaluate import ClaimVerdict, arm_runs
from .register import REGISTER, answer_ids
from .report import section_link
from .spec import RegisteredClaim

#: Each grid a claim reads, as the chapters call it.
GRID_TITLES = {
    "vit_table1": "Table 1 analogue",
    "vit_table1_unclipped": "Table 1 analogue, unclipped",
    "vit_table1_quadratic": "Table 1 analogue, learned-scale x²",
    "vit_converged": "converged tier",
    "vit_unclipped": "converged tier, unclipped",
    "vit_unclipped_ablated": "converged tier, unclipped, attention ablated",
    "vit_table1_ablated": "Table 1 analogue, attention ablated",
    "vit_marked": "marked garment",
    "vit_marked_probe": "marked garment, probes",
    "vit_norm_intervention": "norm intervention",
    "vit_intervention_unclipped": "norm intervention, unclipped, output compensated",
    "vit_table2": "Table 2 analogue",
    "vit_table2_converged": "Table 2 analogue, converged tier",
    "critique_qk_controls": "Q/K decay and init, clipped",
    "critique_qk_controls_unclipped": "Q/K decay and init, unclipped",
    "critique_powers": "powers p = 1 to 7",
    "critique_weight_decay": "weight-decay sweep, clipped",
    "critique_weight_decay_unclipped": "weight-decay sweep, unclipped",
    "critique_qk_norm": "QK-norm, unclipped",
    "architectures_table2": "Table 2 across architectures",
    "architectures_linear": "x/14 on ViT and DeiT",
    "causal_charlm": "character LM",
    "causal_charlm_nope": "character LM without positions",
    "causal_length_sweep": "character LM across training lengths",
    "causal_mqar": "MQAR",
    "causal_mqar_long": "MQAR, ten times the epochs",
    "causal_mqar_recall": "MQAR where softmax learns recall",
    "causal_mqar_probe": "MQAR, softmax probes of the vocabulary",
    "causal_mqar_probe2": "MQAR, softmax probes of the setting",
    "causal_mqar_decide": "MQAR at the probed setting",
    "causal_length_probe": "character LM with rotary positions, softmax probes of the budget",
    "causal_length_rope": "character LM with rotary positions across training lengths",
    "causal_dose_response": "character LM with rotary positions, the norm dose–response",
    "lra": "shortened LRA",
    "lra_long": "shortened LRA, longer training",
    "physics": "PINNsFormer",
    "physics_long": "PINNsFormer, 500 L-BFGS steps",
    "physics_ablated": "PINNsFormer with attention ablated",
    "detection_proxy": "Mask R-CNN proxy",
    "detection_ablated": "Mask R-CNN proxy with attention ablated",
}

#: Each dataset a claim's runs train on, as a reader knows it.
DATA_NAMES = {
    "fashion_mnist": "Fashion-MNIST",
    "fashion_marked": "marked-garment scenes",
    "bible_kjv": "KJV text",
    "mqar": "synthetic key–value sequences",
    "scenes": "Fashion-MNIST scenes",
    "listops": "ListOps",
    "text": "Text",
    "retrieval": "Retrieval",
    "image": "Image",
    "pathfinder": "Pathfinder",
    "convection:beta=30": "convection at β = 30",
    "convection": "convection at β = 50",
    "reaction": "reaction",
    "wave": "wave",
}


def wall_seconds(record: dict) -> float:
    """The seconds a stored run took: its provenance's wall time (0 when it recorded none)."""
    return float((record.get("provenance") or {}).get("wall_s") or 0.0)


def training_steps(record: dict) -> Optional[int]:
    """The optimiser steps a run took (the last step its metrics name; None when they name none)."""
    steps = [row["step"] for row in record.get("metrics") or [] if row.get("step") is not None]
    return int(max(steps)) if steps else None


def claim_records(claim: RegisteredClaim, root: Optional[Path] = None, preset: str = "book") -> list[dict]:
    """Every stored record the claim's comparisons pair, once each, in the order they are read."""
    out: dict[tuple, dict] = {}
    for comp in claim.comparisons:
        cand = arm_runs(comp.candidate, root, preset, comp.pool_over)
        base = arm_runs(comp.baseline, root, preset, comp.pool_over)
        for key in sorted(set(cand.records) & set(base.records)):
            for rec in (cand.records[key], base.records[key]):
                out.setdefault((rec["experiment"], rec["config_hash"], rec["seed"]), rec)
    return list(out.values())


def _span(values: Iterable[int]) -> str:
    """"50" or "17–50": one value, or the smallest and the largest."""
    vals = sorted(set(values))
    if not vals:
        return "n/a"
    lo, hi = vals[0], vals[-1]
    return f"{lo:,}" if lo == hi else f"{lo:,}–{hi:,}"


def _data_name(dataset: str) -> str:
    return DATA_NAMES.get(dataset, dataset.replace("_", " "))


def _training(records: list[dict]) -> str:
    """"936 steps (6 epochs)", or "160 L-BFGS steps" where an epoch is one step."""
    done = [r for r in records if r.get("status") == "ok"] or records
    steps = [s for s in map(training_steps, done) if s is not None]
    epochs = [int(r["config"]["epochs"]) for r in done]
    if not steps:
        return f"{_span(epochs)} epochs"
    kind = "L-BFGS steps" if all(r["config"].get("optimizer") == "lbfgs" for r in done) else "steps"
    text = f"{_span(steps)} {kind}"
    return text if sorted(set(steps)) == sorted(set(epochs)) else f"{text} ({_span(epochs)} epochs)"


def scope_row(verdict: ClaimVerdict, root: Optional[Path] = None, preset: str = "book") -> Optional[dict]:
    """What one claim rests on, as plain cells (None when none of its comparisons has a stored pair)."""

    claim = verdict.claim
    records = claim_records(claim, root, preset)
    if not records:
        return None
    grids = list(dict.fromkeys(r["experiment"] for r in records))
    data = list(dict.fromkeys(_data_name(str(r["config"]["dataset"])) for r in records))
    seeds = [len(set(r.seeds)) for r in verdict.comparisons if r.n >= 1]
    hours = sum(map(wall_seconds, records)) / 3600
    return {"claim": claim.statement, "claim id": claim.id, "chapter": claim.chapter,
            "experiment": "; ".join(GRID_TITLES.get(g, g.replace("_", " ")) for g in grids),
            "data": ", ".join(data), "N": _span(record_seq_len(r) for r in records), "training": _training(records),
            "seeds": _span(seeds), "runs": len(records), "hours": hours, "CPU-hours": significant(hours, 2),
            "verdict": verdict.form, "late": bool(claim.registered_after)}


def scope_rows(verdicts: dict[str, ClaimVerdict], root: Optional[Path] = None, preset: str = "book") -> list[dict]:
    """One row per registered claim with stored runs: the answer table's claims first, in its order,
    then the rest of the register's."""
    answer = answer_ids()
    order = [c for c in answer if c in verdicts] + [c for c in REGISTER if c in verdicts and c not in answer]
    order += [c for c in verdicts if c not in order]
    rows = [scope_row(verdicts[c], root, preset) for c in order]
    return [r for r in rows if r is not None]


def scope_markdown(verdicts: dict[str, ClaimVerdict], links: bool = True, root: Optional[Path] = None,
                   preset: str = "book") -> str:
    """What each claim with stored runs rests on, as a Markdown table (see :func:`scope_table`)."""
    return scope_table(scope_rows(verdicts, root, preset), links)


def scope_table(rows: list[dict], links: bool = True) -> str:
    """Rows of :func:`scope_rows` as a Markdown table narrow enough for a page's column: an
    experiment shares its cell with its data, the training length with the seeds, and the verdict
    with the chapter that argues it (a MyST link when ``links``)."""
    lines = ["| claim | experiment (data) | N | training | CPU-hours | verdict |",
             "| --- | --- | --- | --- | --- | --- |"]
    for row in rows:
        chapter = row["chapter"].split("_", 1)[0]
        where = section_link(row["claim id"], chapter) if links else f"chapter {chapter}"
        mark = "†" if row["late"] else ""
        seeds = f"{row['seeds']} seed{'' if row['seeds'] == '1' else 's'}"
        cells = [row["claim"], f"{row['experiment']} ({row['data']})", row["N"], f"{row['training']}; {seeds}",
                 row["CPU-hours"], f"**{row['verdict']}**{mark} ({where})"]
        lines.append("| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines)
