"""Chapter 10's "The readings of N, paired": every other reading of N against each
architecture's own, paired by seed, with the measured claim ``n_windows_channels``'s two
comparisons marked:

    readings_table(runs, deliver("n_windows_channels")); readings_values(delivered)
"""
from __future__ import annotations

from ...analysis import architectures as arch
from ...analysis.tables import interval_cell
from ...book.deliver import styled
from ...display import typographic
from ...numbers import p_value
from .page import DESCRIPTION, FIXED, TOKENS, Runs, architecture_name, not_run, nowrap, readable

#: The measure's two comparisons (its numbers' prefixes), the architecture and reading each is,
#: and how the page names them.
READINGS = (("Swin x^3/14", "swin", FIXED, "Swin: x³/14 minus x³/√N, N its window"),
            ("XCiT N = tokens", "xcit", TOKENS, "XCiT: N = tokens minus N = channels"))
#: Marks the measured claim's rows in the readings table.
MARK = " ‡"
MEASURE_COLUMNS = ("Holm p", "TOST p", "Result")


def readings_claim_rows(delivered) -> list[dict]:
    """The measured claim ``n_windows_channels``'s two comparisons, with the result its measure
    gives (and ``architecture``, ``variant``: the reading's row in :func:`readings_table`)."""
    numbers = delivered.verdict.numbers
    rows = []
    for prefix, architecture, variant, shown in READINGS:
        if f"{prefix}: pairs" not in numbers:
            continue
        g = {k.split(": ", 1)[1]: v for k, v in numbers.items() if k.startswith(prefix + ": ")}
        rows.append({"architecture": architecture, "variant": variant, "Comparison": shown, "Seed pairs": int(g["pairs"]),
                     "Difference (points) [95% CI]": typographic(f"{g['difference (points)']:+.1f} "
                                                                 f"[{g['CI low']:+.1f}, {g['CI high']:+.1f}]"),
                     "Holm p": p_value(g["Holm p"]), "TOST p": p_value(g["TOST p"]),
                     "Detectable effect (points)": f"{g['detectable effect (points)']:.1f}", "Result": g["result"]})
    return rows


def readings_table(runs: Runs, delivered=None):
    """Every other reading of N against each architecture's own, paired by seed
    (:func:`polyattn.analysis.architectures.n_readings`): difference, 95% interval, pairs; at the
    book preset with ``delivered`` (the measured claim ``n_windows_channels``), its two rows carry
    the measure's difference, p-values and result, marked ‡."""
    if not runs.trains:
        return not_run(runs)
    measured = ({(r["architecture"], r["variant"]): r for r in readings_claim_rows(delivered)}
                if delivered is not None and runs.preset == "book" else {})
    column = "Minus x³/√N, own N (points) [95% CI]"
    rows = []
    for _, r in arch.n_readings(runs.final).iterrows():
        row = {"Architecture": architecture_name(r["architecture"]), "Reading": readable(r["variant"]),
               "Seed pairs": int(r["n_pairs"]),
               column: interval_cell(r["mean_diff"], r["ci_low"], r["ci_high"], fmt="+.1f", missing="not comparable"),
               **(dict.fromkeys(MEASURE_COLUMNS, "") if measured else {})}
        m = measured.get((r["architecture"], r["variant"]))
        if m is not None:
            row.update({"Seed pairs": m["Seed pairs"], column: m["Difference (points) [95% CI]"] + MARK,
                        **{c: m[c] for c in MEASURE_COLUMNS}})
        rows.append(row)
    what = DESCRIPTION
    if measured:
        what = ("description, not a test, except the rows marked ‡: the measured claim's two comparisons (Holm over "
                f"these two, margin ±{delivered.verdict.numbers['margin (points)']:g}, book preset), with the result "
                "its measure gives")
    return nowrap(styled(rows, runs.caption(f"Each other reading of N against the architecture's own ({what})")), column)


def readings_values(delivered) -> dict[str, str]:
    """The difference and 95% interval of each of the measure's comparisons (``swin_*``, ``xcit_*``)."""
    numbers = delivered.verdict.numbers
    out = {}
    for prefix, key, _, _ in READINGS:
        if f"{prefix}: pairs" not in numbers:
            out[f"{key}_diff"] = out[f"{key}_ci"] = "no pair stored"
            continue
        out[f"{key}_diff"] = typographic(f"{numbers[prefix + ': difference (points)']:+.1f}")
        out[f"{key}_ci"] = typographic(f"{numbers[prefix + ': CI low']:+.1f} to {numbers[prefix + ': CI high']:+.1f}")
    return out

