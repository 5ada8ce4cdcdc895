"""Chapter 04's Table 2 analogue on planted ViT records: each cell's accuracy and difference, the
pooled row (the register's where it makes the comparison), the F-test and the figure's legend."""
import matplotlib
from support.records import make_record
from support.vit_claims import registered_row

from polyattn.studies.vit import table2 as t2

matplotlib.use("Agg")


def _table2_records(diff=-0.03):
    recs = []
    for model in ("micro", "mini"):
        for augment in ("none", "deit"):
            for s, eps in zip((0, 1, 2), (0.0, 0.004, -0.004)):
                recs.append(make_record("softmax", s, accs=(0.7 + eps,), model=model, augment=augment,
                                        experiment="vit_table2"))
                recs.append(make_record("poly:p=3", s, accs=(0.7 + eps + diff + 0.001 * s,), model=model,
                                        augment=augment, experiment="vit_table2"))
    return recs


def test_table2_shows_each_cells_accuracy_and_difference_and_the_pooled_row_from_the_register():
    records = _table2_records()
    delta = "Δ, points [95% CI]"
    table = t2.table2_table(records, caption_text="planted grid")
    rows = table.data.to_dict("records")
    assert list(table.data.columns) == ["Model, recipe", "softmax (%)", "x³/√N (%)", delta, "Seed pairs"]
    assert len(rows) == 5 and rows[-1]["Model, recipe"] == "pooled over 4 cells" and rows[-1]["softmax (%)"] == ""
    assert all(r[delta].startswith("−2.9") for r in rows[:4]) and rows[0]["softmax (%)"].startswith("70.00 ± ")
    assert table.caption.startswith("planted grid; ") and "description" in table.caption
    registered = t2.table2_table(records, {"poly:p=3": registered_row("12 of 12")}).data.to_dict("records")
    assert registered[-1]["Register's result"] == "worse" and registered[-1]["Seed pairs"] == "12 of 12"
    assert registered[-1][delta].endswith("‡") and all(r["Register's result"] == "" for r in registered[:4])
    assert float(t2.table2_numbers(records)["ch04_t2_f_p"]) > 0.5                       # the planted cells agree


def test_the_table2_figure_has_one_legend_entry_per_activation():
    fig = t2.table2_figure(_table2_records(), "smoke")
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == ["softmax", "x³/√N"]


def test_a_page_without_runs_shows_no_table2():
    assert t2.table2_table([]) is None
