"""Chapter 06's "Paired comparisons with softmax": a planted ratio comes back out as description,
and the registered claim's rows replace the page's own at the book preset."""
import math
from types import SimpleNamespace

from support.patching import patch_everywhere
from support.physics_runs import planted_runs

from polyattn.studies.physics import comparisons as page


def test_the_comparison_table_recovers_a_planted_ratio_and_decides_nothing():
    runs = planted_runs()
    table = page.comparison_table(runs).data
    row = table[table["Variant"] == "x³/√N"].iloc[0]
    assert row["Δ log10 rMAE [95% CI]"].startswith("+1.00") and row["Error ratio"] == "10" and row["Seed pairs"] == 3
    assert "Registered result" not in table.columns and "Verdict" not in table.columns
    assert any(p.startswith("wave (softmax failed)") for p in table["PDE"])
    assert page.comparison_values(runs)["ratio_convection"] == "10"


def test_registered_rows_replace_the_pages_own_at_the_book_preset(monkeypatch):
    from polyattn.claims import report

    ids = ("convection", "ablated_convection", "ablated_reaction")
    claim = SimpleNamespace(verdict=SimpleNamespace(comparisons=[
        SimpleNamespace(comparison=SimpleNamespace(id=i), mean=m) for i, m in zip(ids, (1.11, 0.01, math.nan))]))
    patch_everywhere(monkeypatch, report, "comparison_rows", lambda v: [
        {"Difference [95% CI]": "+1.11 [+0.90, +1.30] (log10)", "Result": "did not learn", "Pairs": "3 of 3",
         "Holm p": "< 0.001", "TOST p": "1.0"},
        {"Difference [95% CI]": "+0.01 [−0.05, +0.07] (log10)", "Result": "equivalent", "Pairs": "3 of 3",
         "Holm p": "0.80", "TOST p": "0.002"},
        {"Difference [95% CI]": "no runs yet", "Result": "inconclusive", "Pairs": "0 of 3", "Holm p": "n/a",
         "TOST p": "n/a"}])
    runs = planted_runs()
    assert page.registered_rows(claim, "smoke") == {}
    runs.preset = "book"
    table = page.comparison_table(runs, claim).data
    row = table[table["Variant"] == "x³/√N"].iloc[0]
    assert row["Δ log10 rMAE [95% CI]"] == "+1.11 [+0.90, +1.30]" + page.MARK and row["Result"] == "did not learn"
    assert row["Holm p"] == "< 0.001" and (table["Result"] == "did not learn").sum() == 1
    # the positive control follows its problem's variants, with the register's result, or none without runs
    ablated = table[table["Variant"] == page.ABLATED]
    assert len(ablated) == 2 and ablated.index[0] == table.index[table["Variant"] == "PINN (tanh MLP)"][0] + 1
    assert ablated.iloc[0]["Result"] == "equivalent" and ablated.iloc[0]["Error ratio"] == "1.02"
    assert ablated.iloc[1]["Δ log10 rMAE [95% CI]"] == "no runs yet" and ablated.iloc[1]["Result"] == "–"
    # description rows carry no register column
    assert (table.loc[table["Variant"] == "x³/14", ["Holm p", "TOST p", "Result"]] == "").all().all()
