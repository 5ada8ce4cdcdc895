"""Chapter 09's extreme entries on planted pairs: one row per activation, one column per place."""
import pandas as pd
from support.pages import table_rows
from support.patching import patch_everywhere

from polyattn.experiments import vit
from polyattn.studies.critiques import outliers as page
from polyattn.studies.critiques.page import Runs


def _outlier_pairs():
    rows = []
    for where, base in (("embedding", 0.4), ("attention_input", 32.2), ("scores", 16.6)):
        for i, act in enumerate(("poly:p=3", "poly:p=3,c=1/14", "poly:p=1")):
            drop = base + i - 1
            rows.append({"where": where, "activation": act, "factor": 100.0, "n_images": 500, "drop_a": drop,
                         "drop_b": base, "diff": drop - base, "ci_low": drop - base - 2, "ci_high": drop - base + 2})
    return pd.DataFrame(rows)


def test_the_outlier_table_has_one_row_per_activation_and_one_column_per_place(monkeypatch):
    from polyattn.measures import critique_outliers as measured

    patch_everywhere(monkeypatch, measured, "outlier_pairs", lambda records, n_boot=0: _outlier_pairs())
    grid = vit.table1("smoke", seeds=[0])[:2]
    runs = Runs(grid, [{"status": "ok", "final": {"x": 1}}] * 2)
    table = page.outlier_pairs_table(runs, 100, "smoke")
    rows = table_rows(table)
    assert [r["activation"] for r in rows] == ["softmax", "x³/√N", "x³/14", "x/√N"]
    assert list(rows[0]) == ["activation", "embedding", "attention input", "scores"]
    assert rows[0]["attention input"] == "32.2"
    assert rows[1]["scores"] == "15.6 (−1.0 [−3.0, +1.0])" and rows[3]["embedding"] == "1.4 (+1.0 [−1.0, +3.0])"
    assert "multiplied by 100" in table.caption and "500 test images" in table.caption
    assert "short retrainings" in page.outlier_pairs_table(Runs(grid, runs.records[:1]), 100, "smoke").data
