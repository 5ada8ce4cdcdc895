"""Chapter 10's tables: the paper's Table 2 across architectures.

The grid :func:`polyattn.experiments.architectures.table2` trains ViT, DeiT, Swin and XCiT
(timm models with a polyattn activation) with softmax, x^3/sqrt(N) (N the architecture's own)
and x^3/14, and XCiT once more with N its patch tokens.  Every row here is keyed by
``architecture`` and ``variant`` (:func:`variant_label`), and the statistics are those of
:mod:`polyattn.analysis.stats`:

    final = architecture_final(records)       # one row per run: architecture, variant, n_rule, seq_len, tokens
    accuracy_summary(final)                   # mean, sd, seeds per architecture and variant
    vs_softmax(final, margin=1)               # paired by seed within each architecture; Holm over the table
    pooled_vs_softmax(final, margin=1)        # the variants every architecture runs, architecture fixed effects
    n_readings(final, margin=1)               # x^3/14 and N = tokens against each architecture's own N
    paper_recipe_table(paper_configs)         # the paper preset's recipe per architecture
    architecture_rows(table, fields)          # a table with one column per architecture, for people
    attention_n(n_table, "swin")              # N of one architecture in the N table, and its row

What N is in each architecture is read from the built models (:mod:`polyattn.models.timm_facts`),
and the setup against the paper preset from the grids
(:func:`polyattn.experiments.architectures.setup_table`).
"""
from __future__ import annotations

from typing import Iterable, Optional

import numpy as np
import pandas as pd

from ..display import breakable
from ..labels import ARCHITECTURE_VARIANTS as VARIANTS
from ..labels import architecture as architecture_of
from ..labels import architecture_label as variant_label
from ._common import _check_records
from .frames import final_metrics
from .stats import ALPHA, POWER, paired_difference, pooled_difference
from .tables import _diff_cells, number_cell, summary_table, value_cell

SOFTMAX, OWN, FIXED, TOKENS = VARIANTS
#: Each architecture as a reader knows it.
ARCHITECTURE_NAMES = {"vit": "ViT", "deit": "DeiT", "swin": "Swin", "xcit": "XCiT"}
#: The rows of the N table for people (:func:`polyattn.models.timm_facts.attention_n_table`'s
#: columns) and the names they are shown under.
N_FIELDS = ("input", "patch", "tokens", "module", "runs over", "N", "N per layer", "other layers", "1/sqrt(N)",
            "fixed / own")
N_NAMES = {"input": "input (px)", "1/sqrt(N)": "1/√N", "fixed / own": "fixed / own (√N/14)"}


def architecture_final(records: Iterable[dict]) -> pd.DataFrame:
    """:func:`~polyattn.analysis.final_metrics` with ``architecture``, ``variant``, ``n_rule`` and
    ``tokens`` (the first attention layer's tokens, from the record's ``seq_lens``); ``seq_len``
    is N as the activation saw it."""
    records = _check_records(records)
    frame = final_metrics(records)
    by_run = {f"{r['config_hash']}-seed{r['seed']}": r for r in records}
    rec = [by_run[k] for k in frame["run"]]
    frame.insert(0, "variant", [variant_label(r["config"]) for r in rec])
    frame.insert(0, "architecture", [architecture_of(r["config"]) for r in rec])
    frame["n_rule"] = [(r["config"].get("options") or {}).get("n_rule") for r in rec]
    frame["tokens"] = [(r.get("seq_lens") or {}).get("tokens", np.nan) for r in rec]
    return frame


def accuracy_summary(final: pd.DataFrame, metric=None) -> pd.DataFrame:
    """Mean, sd, min, max, runs and diverged runs per architecture and variant (ranked within each
    architecture), in the metric's display unit."""
    return summary_table(final, by=["architecture", "variant"], metric=metric, rank_within=["architecture"])


def vs_softmax(final: pd.DataFrame, margin: Optional[float] = None, metric=None, alpha: float = ALPHA,
               power: float = POWER) -> pd.DataFrame:
    """Every variant minus softmax, paired by seed within each architecture: the columns of
    :func:`~polyattn.analysis.paired_difference` keyed by ``variant`` (``p_holm`` over every row)."""
    return paired_difference(final, baseline=SOFTMAX, by=["architecture"], key="variant", metric=metric,
                             margin=margin, alpha=alpha, power=power)


def common_variants(final: pd.DataFrame) -> list[str]:
    """The variants other than softmax that every architecture of ``final`` ran, in grid order."""
    archs = list(dict.fromkeys(final["architecture"]))
    return [v for v in VARIANTS if v != SOFTMAX
            and all(((final["architecture"] == a) & (final["variant"] == v)).any() for a in archs)]


def pooled_vs_softmax(final: pd.DataFrame, margin: Optional[float] = None, metric=None, alpha: float = ALPHA,
                      power: float = POWER) -> pd.DataFrame:
    """Each variant that every architecture ran, minus softmax, pooled over the architectures with
    architecture fixed effects (:func:`~polyattn.analysis.pooled_difference` with one cell per
    architecture); ``variant`` names the row, ``p_holm`` corrects over the rows."""
    keep = common_variants(final)
    frame = final[final["variant"].isin([SOFTMAX] + keep)].assign(activation=lambda f: f["variant"])
    out = pooled_difference(frame, baseline=SOFTMAX, cells=("architecture",), metric=metric, margin=margin,
                            alpha=alpha, power=power)
    out.insert(0, "variant", out["activation"])
    return out


def n_readings(final: pd.DataFrame, margin: Optional[float] = None, metric=None, alpha: float = ALPHA,
               power: float = POWER) -> pd.DataFrame:
    """The other readings of N against each architecture's own: x^3/14 minus x^3/sqrt(N) per
    architecture, and XCiT's N = tokens minus N = channels, paired by seed (Holm over the rows)."""
    return paired_difference(final, baseline=OWN, by=["architecture"], key="variant", compare=[FIXED, TOKENS],
                             metric=metric, margin=margin, alpha=alpha, power=power)


def accuracy_table(summary: pd.DataFrame, diffs: pd.DataFrame, final: Optional[pd.DataFrame] = None) -> pd.DataFrame:
    """The display table of :func:`accuracy_summary` and :func:`vs_softmax`: per architecture and
    variant, N (when ``final`` is given), 'mean ± sd' in per cent, seeds, status, and against
    softmax the paired difference, its CI, p, Holm p, TOST p, MDE and the verdict's form."""
    d = diffs.set_index(["architecture", "variant"]) if len(diffs) else None
    n = (final.groupby(["architecture", "variant"], sort=False)["seq_len"].first() if final is not None else None)
    rows = []
    for _, r in summary.iterrows():
        k = (r["architecture"], r["variant"])
        row = {"architecture": k[0], "variant": k[1]}
        if n is not None:
            row["N"] = int(n.get(k, np.nan))
        row.update({"test acc. (%)": value_cell(r["mean"], r["std"], r["n_ok"], r["n_diverged"]), "seeds": int(r["n_runs"]),
                    "status": r["status"]})
        cells = _diff_cells(d.loc[k]) if d is not None and k in d.index else {"diff": "baseline" if k[1] == SOFTMAX else ""}
        for field, title in (("diff", "minus softmax (points)"), ("ci", "95% CI"), ("p", "paired t p"),
                             ("p_holm", "Holm p"), ("tost_p", "TOST p"), ("mde", "MDE"), ("verdict", "verdict")):
            row[title] = cells.get(field, "")
        rows.append(row)
    return pd.DataFrame(rows)


def paper_recipe_table(paper_configs) -> pd.DataFrame:
    """One row per architecture of the paper preset: timm model, input, patch, N and the recipe."""
    rows, seen = [], set()
    for c in paper_configs:
        if c.model in seen:
            continue
        seen.add(c.model)
        rows.append({"architecture": architecture_of(c), "timm model": c.model.removeprefix("timm:"),
                     "input (px)": c.image_size, "patch": c.patch_size, "N": c.seq_len, "epochs": c.epochs,
                     "batch": c.batch_size, "lr": c.lr, "weight decay": c.weight_decay, "warm-up": c.warmup_epochs,
                     "label smoothing": c.label_smoothing, "drop path": c.drop_path, "augmentation": c.augment,
                     "dataset": c.dataset})
    return pd.DataFrame(rows)



def architecture_rows(table: pd.DataFrame, fields, names: Optional[dict] = None) -> list[dict]:
    """A table with one row per architecture (and XCiT's reading of N, column ``n_rule``) turned
    for people: one column per architecture, headed by its name (and "N = <rule>"), one row per
    field of ``fields``, named by ``names``.  Numbers are cells of about three significant
    figures; model names may break after their underscores."""
    names = names or {}
    rules = table["n_rule"] if "n_rule" in table else [""] * len(table)
    heads = [ARCHITECTURE_NAMES.get(a, a) + (f" (N = {rule})" if rule else "")
             for a, rule in zip(table["architecture"], rules)]
    rows = []
    for field in fields:
        cells = [breakable(v) if "model" in field else number_cell(v) if isinstance(v, (float, np.floating)) else str(v)
                 for v in table[field]]
        rows.append({"": names.get(field, field), **dict(zip(heads, cells))})
    return rows


def attention_n(n_table: pd.DataFrame, architecture: str, n_rule: str = "") -> tuple[int, pd.Series]:
    """N of ``architecture`` (with XCiT's ``n_rule``, "channels" or "tokens") in a table of
    :func:`polyattn.models.timm_facts.attention_n_table`, and its row."""
    rows = n_table[(n_table["architecture"] == architecture) & (n_table["n_rule"] == n_rule)]
    if rows.empty:
        have = ", ".join(f"{a}" + (f" ({r})" if r else "") for a, r in zip(n_table["architecture"], n_table["n_rule"]))
        raise ValueError(f"the N table has no row for {architecture!r} with n_rule {n_rule!r} (it has {have}); "
                         "build it from a grid that runs that architecture")
    row = rows.iloc[0]
    return int(row["N"]), row
