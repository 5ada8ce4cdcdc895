"""Chapter 09, "Extreme entries": the short retrainings' accuracy, and the token's share of the
last layer's attention, when one token is multiplied by a large factor at each place.
"""
from __future__ import annotations

from ...analysis import critiques as crit
from ...analysis.tables import interval_cell, number_cell
from ...book.deliver import styled
from ...display import name
from ...measures import critique_outliers as measured
from ...measures.critique_common import MAP_SPECS
from .page import SHORT_DEVIATION, Runs, compact, first_only, short_pending

#: What "the place" of the outlier test is called on the page.
PLACES = {"embedding": "embedding", "attention_input": "attention input", "scores": "scores"}


def outlier_pairs_table(runs: Runs, n_boot: int, preset: str):
    """Accuracy lost when one token is multiplied by the largest factor: one row per activation
    (softmax first), one column per place; each polynomial's cell adds its difference from
    softmax's loss, paired on the same test images (:func:`polyattn.measures.critique_outliers.outlier_pairs`)."""
    if not runs.all_measured:
        return short_pending(runs)
    pairs = measured.outlier_pairs(runs.records, n_boot=n_boot)
    places = [w for w in PLACES if w in set(pairs["where"])]
    by = {(r["where"], r["activation"]): r for _, r in pairs.iterrows()}
    rows = [{"activation": "softmax", **{PLACES[w]: number_cell(pairs.loc[pairs["where"] == w, "drop_b"].iloc[0], ".1f")
                                          for w in places}}]
    for act in dict.fromkeys(pairs["activation"]):
        rows.append({"activation": name(act), **{
            PLACES[w]: f"{number_cell(by[(w, act)]['drop_a'], '.1f')} "
                       f"({interval_cell(by[(w, act)]['diff'], by[(w, act)]['ci_low'], by[(w, act)]['ci_high'], '+.1f')})"
            for w in places if (w, act) in by}})
    images = ", ".join(str(int(n)) for n in sorted(pairs["n_images"].unique()))
    return compact(styled(rows, f"Accuracy lost (points) when one token is multiplied by {pairs['factor'].iloc[0]:g} at each "
                        f"place; in brackets the difference from softmax's loss [95% CI], paired on {images} test "
                        f"images, by bootstrap over images ({n_boot} resamples), not over training seeds (short "
                        f"retraining, seed {runs.config.seed}, preset {preset})" + SHORT_DEVIATION))


def outlier_factor_tables(runs: Runs, preset: str) -> list:
    """The accuracy, and the token's share of the last layer's attention, at every factor, place and
    activation: two tables."""
    if not runs.all_measured:
        return [short_pending(runs)] * 2
    outl, _ = crit.short_outliers(runs.records)
    outl = outl[outl["activation"].isin(MAP_SPECS)]
    last = int(outl["layer"].max())
    acc = outl[outl["layer"] == 0].pivot_table(index=["where", "activation"], columns="factor", values="accuracy")
    share = measured.outlier_shares(runs.records)
    out = []
    for tab, what, fmt in ((acc, "Test accuracy (%)", ".1f"),
                           (share, f"The token's share of the last layer's (layer {last + 1}) absolute attention", ".3f")):
        keys = [(w, a) for w in PLACES for a in MAP_SPECS if (w, a) in tab.index]
        out.append(styled([{"where": shown, "activation": name(a),
                            **{f"×{f:g}": format(tab.loc[(w, a), f], fmt) for f in tab.columns}}
                           for shown, (w, a) in zip(first_only(PLACES[k[0]] for k in keys), keys)],
                          f"{what} with one token multiplied by each factor (short retraining, seed "
                          f"{runs.config.seed}, preset {preset})" + SHORT_DEVIATION))
    return out


def outlier_figure(runs: Runs, preset: str, where: str = measured.OUTLIER_PLACE):
    """Accuracy and the token's share of the last layer's attention against the factor on one
    token, at one place (by default the scores, where the verdict is read)."""
    if not runs.all_measured:
        return None
    import matplotlib.pyplot as plt

    from ... import plotting
    outl, _ = crit.short_outliers(runs.records)
    outl = outl[outl["activation"].isin(MAP_SPECS) & (outl["where"] == where)]
    last = int(outl["layer"].max())
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(7, 3.0))
    for act in MAP_SPECS:
        g = outl[outl["activation"] == act]
        col = plotting.activation_color(act)
        g0, gl = g[g["layer"] == 0], g[g["layer"] == last]
        ax.plot(g0["factor"], g0["accuracy"], marker="o", color=col, label=name(act))
        ax2.plot(gl["factor"], gl["token_share"], marker="o", color=col)
    ax2.axhline(1 / runs.config.seq_len, color="black", linestyle=":", linewidth=1, label="1/N (uniform)")
    for a in (ax, ax2):
        a.set_xscale("log")
        a.set_xlabel(f"factor on one token's {PLACES[where]}")
    ax.set_ylabel("test accuracy (%)")
    ax2.set_ylabel(f"share of |weights|, layer {last + 1}")
    handles, labels = [], []
    for a in (ax, ax2):
        h, lab = a.get_legend_handles_labels()
        handles, labels = handles + h, labels + lab
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), frameon=False)
    fig.tight_layout(rect=(0, 0.09, 1, 0.93))
    plotting.stamp(fig, preset, f"short retraining, seed {runs.config.seed}", loc="upper right")
    return fig
