"""Chapter 10's "The readings of N, paired": planted runs come back out as each reading's
difference, and the measured claim's two comparisons as its marked rows."""
from types import SimpleNamespace

import matplotlib

matplotlib.use("Agg")

from support.arch_runs import VERDICT_WORDS, planted_runs, table_cells  # noqa: E402
from support.ci import require_module  # noqa: E402

from polyattn.analysis import architectures as arch  # noqa: E402
from polyattn.claims.spec import Finding  # noqa: E402
from polyattn.studies.architectures import readings as page

require_module("timm", "pip install timm==1.0.29, as in requirements.txt")


def test_the_readings_table_recovers_a_planted_reading_without_a_verdict():
    runs = planted_runs({("swin", arch.FIXED): 0.02, ("xcit", arch.TOKENS): -0.01})
    table = page.readings_table(runs)
    frame = table.data.set_index(["Architecture", "Reading"])
    column = "Minus x³/√N, own N (points) [95% CI]"
    assert frame.loc[("Swin", "x³/14"), column].startswith("+2.0 [")
    assert frame.loc[("XCiT", "x³/√N, N = tokens"), column].startswith("−1.0 [")
    assert len(frame) == 5 and set(frame["Seed pairs"]) == {3}
    assert not any(w in c.lower() for c in table_cells(table) for w in VERDICT_WORDS)
    # at the book preset the measure's two rows carry its difference, p-values and result
    delivered = SimpleNamespace(verdict=Finding("inconclusive at this power", "The readings.", _measure_numbers()))
    assert "Result" not in page.readings_table(runs, delivered).data.columns   # not at the smoke preset
    runs.preset = "book"
    merged = page.readings_table(runs, delivered).data.set_index(["Architecture", "Reading"])
    assert merged.loc[("Swin", "x³/14"), column] == "+1.7 [−0.3, +3.7]" + page.MARK
    assert merged.loc[("Swin", "x³/14"), "Result"] == "inconclusive" and merged.loc[("ViT", "x³/14"), "Result"] == ""
    assert merged.loc[("XCiT", "x³/√N, N = tokens"), "TOST p"] == "< 0.001"


def _measure_numbers() -> dict:
    numbers = {"margin (points)": 1.0, "seeds": 3}
    for prefix, diff in (("Swin x^3/14", 1.7), ("XCiT N = tokens", -0.25)):
        numbers.update({f"{prefix}: difference (points)": diff, f"{prefix}: CI low": diff - 2,
                        f"{prefix}: CI high": diff + 2, f"{prefix}: pairs": 3, f"{prefix}: Holm p": 1.0,
                        f"{prefix}: TOST p": 0.0004, f"{prefix}: detectable effect (points)": 15.08,
                        f"{prefix}: result": "inconclusive"})
    return numbers


def test_the_readings_claim_shows_the_measures_two_comparisons():
    delivered = SimpleNamespace(verdict=Finding("inconclusive at this power", "The two readings.", _measure_numbers()))
    rows = page.readings_claim_rows(delivered)
    assert [r["Comparison"].split(":")[0] for r in rows] == ["Swin", "XCiT"]
    assert rows[0]["Difference (points) [95% CI]"] == "+1.7 [−0.3, +3.7]" and rows[0]["TOST p"] == "< 0.001"
    assert rows[1]["Detectable effect (points)"] == "15.1"
    assert page.readings_values(delivered) == {"swin_diff": "+1.7", "swin_ci": "−0.3 to +3.7",
                                               "xcit_diff": "−0.2", "xcit_ci": "−2.2 to +1.8"}
    empty = SimpleNamespace(verdict=Finding("inconclusive at this scale", "No pair.", {"margin (points)": 1.0, "seeds": 3}))
    assert page.readings_claim_rows(empty) == [] and page.readings_values(empty)["swin_diff"] == "no pair stored"
