"""Chapter 09's extreme entries (``outliers``): what the short retrainings of Table 1's model (grid
``critique_short_retrain``) stored when one token is multiplied by a large factor at each place:
the token's share of the last layer's attention and the accuracy each activation loses, against
softmax's loss.  The form is decided by the rules of :mod:`polyattn.analysis.critique_verdicts`.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import pandas as pd

from ..analysis import critique_verdicts as rules
from ..analysis import critiques as crit
from ..claims.spec import Finding
from .critique_common import MAP_SPECS, display_name, finding, short_pending, short_records

#: The place the outlier verdict is read from: the token's column of the score matrix.
OUTLIER_PLACE = "scores"
#: Bootstrap draws over test images, and their seed, for the paired accuracy drops.
N_BOOT, BOOT_SEED = 2000, 0


def outlier_pairs(records, n_boot: int = N_BOOT, seed: int = BOOT_SEED) -> pd.DataFrame:
    """Per place (embedding, attention input, scores) and polynomial of :data:`MAP_SPECS`: the
    accuracy it loses when one token is multiplied by the largest factor, against softmax's loss,
    paired on the same test images (:func:`polyattn.analysis.critiques.paired_drop_difference`)."""
    from .. import model_checks

    outl, correct = crit.short_outliers(records)
    top = float(outl["factor"].max())
    rows = []
    for where in model_checks.WHERE:
        for act in MAP_SPECS[1:]:
            a, s = correct[(act, where)], correct[("softmax", where)]
            rows.append({"where": where, "activation": act, "factor": top,
                         **crit.paired_drop_difference(a[1.0], a[top], s[1.0], s[top], n_boot=n_boot, seed=seed)})
    return pd.DataFrame(rows)


def outlier_shares(records) -> pd.DataFrame:
    """The token's share of the last layer's absolute attention, by place and activation (rows)
    and factor (columns)."""
    outl, _ = crit.short_outliers(records)
    outl = outl[outl["activation"].isin(MAP_SPECS)]
    last = outl[outl["layer"] == outl["layer"].max()]
    return last.pivot_table(index=["where", "activation"], columns="factor", values="token_share")


def _drops(pairs: pd.DataFrame, where: str) -> str:
    d = pairs[pairs["where"] == where]
    return (", ".join(f"{display_name(r['activation'])} {r['drop_a']:.1f}" for _, r in d.iterrows())
            + f", softmax {d['drop_b'].iloc[0]:.1f}")


def outlier_numbers(pairs: pd.DataFrame, shares: pd.DataFrame) -> dict:
    """The outlier sweep at its largest factor, from :func:`outlier_pairs` and
    :func:`outlier_shares`: each activation's share of the last layer's attention on the token
    (the scores place), the accuracy each loses at every place, how many polynomials amplify the
    token and in how many cases a polynomial loses more (less) than softmax, its interval over
    images above (below) 0."""
    top = float(pairs["factor"].iloc[0])
    sh = shares.loc[OUTLIER_PLACE]
    col = pairs[pairs["where"] == OUTLIER_PLACE]
    amplified = [rules.amplified(sh.loc[a, top], sh.loc["softmax", top]) for a in MAP_SPECS[1:]]
    out = {"factor": top, "images": int(col["n_images"].iloc[0]),
           "shares": ", ".join(f"{display_name(a)} {sh.loc[a, top]:.2f}" for a in MAP_SPECS),
           "drops_scores": _drops(pairs, "scores"), "drops_attention_input": _drops(pairs, "attention_input"),
           "drops_embedding": _drops(pairs, "embedding"),
           "embedding_drop_max": float(pairs.loc[pairs["where"] == "embedding", ["drop_a", "drop_b"]].abs().max().max()),
           "loses_more": int((col["ci_low"] > 0).sum()), "loses_less": int((col["ci_high"] < 0).sum()),
           "cases": len(col), "amplified": int(sum(amplified)), "amplified_factor": rules.AMPLIFIED_FACTOR}
    for a in MAP_SPECS:
        out[f"share {a}"] = float(sh.loc[a, top])
    for _, r in col.iterrows():
        out[f"drop {r['activation']}"] = float(r["drop_a"])
        out[f"drop minus softmax's {r['activation']}"] = float(r["diff"])
    out["drop softmax"] = float(col["drop_b"].iloc[0])
    return out


def outliers(root: Optional[Path] = None) -> Finding:
    """Do polynomials amplify an extreme entry, and lose more accuracy to it than softmax?  One
    token's column of the scores multiplied by the largest factor: a polynomial amplifies when the
    token's share of the last layer's attention is above AMPLIFIED_FACTOR times softmax's, and loses
    more when its paired drop minus softmax's has an interval over images above 0.  Both for every
    polynomial -> holds; neither for any -> not supported; else mixed."""
    grid, complete = short_records(root)
    if not complete:
        return short_pending(grid)
    records = list(grid.records)
    pairs, shares = outlier_pairs(records), outlier_shares(records)
    n = outlier_numbers(pairs, shares)
    top = n["factor"]
    sh = shares.loc[OUTLIER_PLACE]
    col = pairs[pairs["where"] == OUTLIER_PLACE]
    amplified = [rules.amplified(sh.loc[a, top], sh.loc["softmax", top]) for a in MAP_SPECS[1:]]
    form = rules.outlier_form(amplified, list(col["ci_low"] > 0))
    summary = (f"One token's column of the scores multiplied by {top:g} takes {n['shares']} of the last layer's "
               f"|attention|; accuracy drops "
               + ", ".join(f"{display_name(r['activation'])} {r['drop_a']:.1f}" for _, r in col.iterrows())
               + f" vs softmax {col['drop_b'].iloc[0]:.1f} points (short retraining, seed 0, {n['images']} test "
               f"images; intervals over images only).")
    return finding(form, summary, n)
