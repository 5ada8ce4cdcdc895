"""Chapter 10's measured claim: what N is where attention runs over windows (Swin) or channels
(XCiT), and whether the reading of N changes accuracy.

N is read from the grid's configurations (each run's activation uses its config's ``seq_len``):
a window's tokens in Swin, a head's channels in XCiT, with XCiT's patch tokens as the other
reading; the paper preset's grid gives the same for the paper's ImageNet models.  In XCiT the two
readings differ only by a factor on the learned temperature, ``(N_channels / N_tokens)^(1/6)``,
since ``c (tS)^3 = (c^(1/3) t S)^3``.

Whether the reading matters is asked of two paired comparisons of the grid
``architectures_table2`` (same seed, final test accuracy in points): Swin with the paper's
``x^3/14`` minus ``x^3/sqrt(N)`` with N its window, and XCiT with N its tokens minus N its
channels.  Each gets its result by the book's one rule (:func:`polyattn.claims.rule.comparison_result`):
equivalent by two one-sided tests within the margin, a difference only when the Holm-corrected
test (over these two comparisons) rejects and the 95% interval lies beyond the margin.  The
margin, alpha and the chance level are those of the chapter's registered claim
``table2_architectures``.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import numpy as np

from .. import grids
from ..analysis import paired_difference
from ..analysis.architectures import FIXED, OWN, TOKENS, architecture_final
from ..claims import claim
from ..claims.rule import arm_learned, claim_form, comparison_result, outcome
from ..claims.spec import Finding
from ..display import typographic
from ..labels import architecture as architecture_of
from ..labels import architecture_label
from ..numbers import square_root
from .stored import grid_records

GRID = "architectures_table2"
#: The registered claim whose margin, alpha and chance level the comparisons share.
MARGIN_CLAIM = "table2_architectures"
#: The two readings of N compared: (architecture, other reading, its name, the baseline's name).
READINGS = (("swin", FIXED, "Swin $x^3/14$", "$x^3/\\sqrt{{{own}}}$"),
            ("xcit", TOKENS, "XCiT $N$ = {tokens} tokens", "$N$ = {own} channels"))


def n_of(configs, architecture: str, variant: str) -> int:
    """N as the activation of ``architecture``'s ``variant`` uses it, from the grid's configs."""
    ns = {c.seq_len for c in configs if architecture_of(c) == architecture and architecture_label(c) == variant}
    if len(ns) != 1:
        raise ValueError(f"the grid gives {architecture} {variant!r} the N values {sorted(ns)}; expected one")
    return int(ns.pop())


def n_values(book_configs, paper_configs) -> dict:
    """N of Swin's window and XCiT's channels and tokens, in the book's and the paper's models,
    and XCiT's temperature factor between its two readings."""
    out = {"Swin window N": n_of(book_configs, "swin", OWN), "Swin window N, paper": n_of(paper_configs, "swin", OWN),
           "XCiT channels N": n_of(book_configs, "xcit", OWN), "XCiT tokens N": n_of(book_configs, "xcit", TOKENS),
           "XCiT channels N, paper": n_of(paper_configs, "xcit", OWN),
           "XCiT tokens N, paper": n_of(paper_configs, "xcit", TOKENS)}
    out["XCiT temperature factor"] = (out["XCiT channels N"] / out["XCiT tokens N"]) ** (1 / 6)
    return out


def reading_comparisons(final, margin: float, alpha: float):
    """The two readings against each architecture's own N, paired by seed, Holm over the two
    (:func:`polyattn.analysis.paired_difference`)."""
    keep = np.zeros(len(final), dtype=bool)
    for architecture, variant, *_ in READINGS:
        keep |= (final["architecture"] == architecture).to_numpy() & final["variant"].isin([OWN, variant]).to_numpy()
    return paired_difference(final[keep], baseline=OWN, by=["architecture"], key="variant",
                             compare=[v for _, v, *_ in READINGS], margin=margin, alpha=alpha)


def reading_result(row, final, chance: Optional[float], band: float, alpha: float, margin: float) -> str:
    """A comparison's result by the book's one rule, with whether each arm learned the task."""
    def arm(variant):
        g = final[(final["architecture"] == row["architecture"]) & (final["variant"] == variant)]
        return arm_learned(g["test_acc"].to_numpy(dtype=float) * 100.0, chance, band)

    tost = float(row["tost_p"])
    return comparison_result(n=int(row["n_pairs"]), mean=float(row["mean_diff"]), ci_low=float(row["ci_low"]),
                             ci_high=float(row["ci_high"]), holm_p=float(row["p_holm"]),
                             equivalent=bool(tost == tost and tost < alpha), alpha=alpha, margin=margin,
                             candidate_learned=arm(row["variant"]), baseline_learned=arm(OWN))


def n_windows_channels(root: Optional[Path] = None) -> Finding:
    """N in the book's and the paper's Swin and XCiT, and the two paired comparisons of readings of
    N with the form they decide (all must show equivalence for "the reading does not matter")."""
    registered = claim(MARGIN_CLAIM)
    margin, alpha = registered.margin, registered.alpha
    grid = grid_records(GRID, root)
    numbers = n_values(grid.configs, grids.configs(GRID, "paper"))
    numbers.update({"margin (points)": margin, "alpha": alpha, "runs stored": grid.stored, "runs planned": grid.planned,
                    "seeds": len({c.seed for c in grid.configs})})
    results = {}
    if grid.records:
        final = architecture_final(grid.records)
        table = reading_comparisons(final, margin, alpha)
        for _, row in table.iterrows():
            name = {"swin": "Swin x^3/14", "xcit": "XCiT N = tokens"}[row["architecture"]]
            result = reading_result(row, final, registered.chance, registered.chance_band, alpha, margin)
            results[row["architecture"]] = (row, result)
            numbers.update({f"{name}: difference (points)": float(row["mean_diff"]),
                            f"{name}: CI low": float(row["ci_low"]), f"{name}: CI high": float(row["ci_high"]),
                            f"{name}: pairs": int(row["n_pairs"]), f"{name}: Holm p": float(row["p_holm"]),
                            f"{name}: TOST p": float(row["tost_p"]), f"{name}: detectable effect (points)": float(row["mde"]),
                            f"{name}: result": result})
    outcomes = [outcome(results[a][1], "equivalent") for a, *_ in READINGS if a in results]
    form = claim_form(outcomes, ["equivalent"] * len(outcomes)) if outcomes else "inconclusive at this scale"
    return Finding(form, typographic(_summary(numbers, results)), numbers)


def _summary(numbers: dict, results: dict) -> str:
    text = (f"$N$ is a window's {numbers['Swin window N']} tokens in the book's Swin ({numbers['Swin window N, paper']} "
            f"in Swin-T's windows, so $1/\\sqrt{{N}} = 1/{square_root(numbers['Swin window N, paper'])}$, not $1/14$) "
            f"and $d_h = {numbers['XCiT channels N']}$ channels in its XCiT ({numbers['XCiT channels N, paper']} in "
            f"XCiT-S12, against {numbers['XCiT tokens N, paper']} patch tokens)")
    fmt = {"own": numbers["Swin window N"], "tokens": numbers["XCiT tokens N"]}
    for architecture, _, name, baseline in READINGS:
        if architecture not in results:
            text += f"; {name.format(**fmt)}: no pair of runs stored"
            continue
        row, result = results[architecture]
        own = fmt["own"] if architecture == "swin" else numbers["XCiT channels N"]
        lo, hi = float(row["ci_low"]), float(row["ci_high"])
        ci = f" (95% CI {lo:+.1f} to {hi:+.1f})" if lo == lo else ""
        text += (f"; {name.format(**fmt)} minus {baseline.format(own=own)}: {float(row['mean_diff']):+.1f} points{ci}, "
                 f"{_result_words(result)}")
    return (text + f"; in XCiT the two readings differ only by a temperature factor of "
            f"{numbers['XCiT temperature factor']:.3f} ({numbers['seeds']} seeds, margin $\\pm${numbers['margin (points)']:g}).")


def _result_words(result: str) -> str:
    """A comparison's result as the verdict table reads it."""
    return {"inconclusive": "inconclusive at this power", "equivalent": "equivalent within the margin"}.get(result, result)
