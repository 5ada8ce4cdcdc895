"""Chapter 05's accuracy per task and variant on planted runs: each variant minus softmax, in full and
in brief, with the register's rows in place of the page's own at the book preset."""
from support.lra_runs import TASKS, planted_runs
from support.patching import patch_everywhere

from polyattn.studies.lra import accuracy as page
from polyattn.studies.lra.page import LABELS, MARK, differences, registered_rows


def test_the_comparison_table_recovers_a_planted_difference():
    runs = planted_runs({("listops", "x^3/14"): -0.10})
    diffs = differences(runs)
    assert page.family_size(diffs) == len(diffs) == len(TASKS) * (len(LABELS) - 1)
    table = page.comparison_table(runs, fixed_claim=None, diffs=diffs).data   # smoke: no registered rows
    row = table[(table["Task"] == "ListOps") & (table["Variant"] == "x³/14")].iloc[0]
    assert row["Minus softmax, points [95% CI]"].startswith("−10.0 [") and row["Verdict"] == "worse"
    assert not table["Variant"].str.contains("sqrt|\\^").any()


def test_the_summary_puts_each_variant_on_one_row_and_marks_tasks_not_learned():
    runs = planted_runs({("listops", "x^3/14"): -0.10}, chance={"listops": 0.3, "image": 0.65})
    table = page.comparison_summary(runs, fixed_claim=None).data
    assert list(table.columns) == ["Variant", "ListOps", "Image"] and len(table) == len(LABELS) - 1
    fixed = table.set_index("Variant").loc["x³/14"]
    assert fixed["ListOps"].startswith("−10.0 [") and fixed["ListOps"].endswith("<br>worse")
    assert fixed["Image"].endswith("°") and "MDE" not in "".join(table["Image"])


def test_registered_rows_replace_the_pages_own_at_the_book_preset(monkeypatch):
    from types import SimpleNamespace

    from polyattn.claims import report

    claim = SimpleNamespace(verdict=SimpleNamespace(comparisons=[SimpleNamespace(comparison=SimpleNamespace(id="listops"))]))
    patch_everywhere(monkeypatch, report, "comparison_rows", lambda v: [{"Difference [95% CI]": "−9.99 [−11.00, −8.98] points",
                                                                  "Holm p": "0.01", "TOST p": "1.00", "Result": "worse"}])
    assert registered_rows(claim, "smoke") == {}
    runs = planted_runs({("listops", "x^3/14"): -0.10})
    runs.preset = "book"
    table = page.comparison_table(runs, claim).data
    row = table[(table["Task"] == "ListOps") & (table["Variant"] == "x³/14")].iloc[0]
    assert row["Minus softmax, points [95% CI]"] == "−9.99 [−11.00, −8.98]" + MARK and row["Holm p"] == "0.01"
