"""Chapter 10's "Accuracy per architecture and variant": planted runs of the architectures grid
come back out as the accuracy table, softmax's gap between DeiT and ViT, and the figure."""
import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402
from support.arch_runs import VERDICT_WORDS, planted_runs, table_cells  # noqa: E402
from support.ci import require_module  # noqa: E402

from polyattn.analysis import architectures as arch  # noqa: E402
from polyattn.studies.architectures import accuracy as page
from polyattn.studies.architectures.page import FONT  # noqa: E402

require_module("timm", "pip install timm==1.0.29, as in requirements.txt")


def test_the_accuracy_table_has_a_row_per_architecture_and_a_column_per_variant():
    runs = planted_runs({("swin", arch.FIXED): -0.05, ("deit", arch.OWN): 0.03})
    rows = {r["Architecture"]: r for r in page.accuracy_rows(runs)}
    assert list(rows) == ["ViT", "DeiT", "Swin", "XCiT"]
    assert list(rows["ViT"]) == ["Architecture", "N", "softmax", "x³/√N", "x³/14", "x³/√N, N = tokens"]
    assert rows["ViT"]["softmax"] == "70.0 ± 0.4" and rows["Swin"]["x³/14"].startswith("65.0 ± ")
    assert rows["DeiT"]["x³/√N"].startswith("73.0 ± ")
    assert rows["Swin"]["N"] == 16 and rows["XCiT"]["x³/√N, N = tokens"].endswith("(N = 64)")
    assert rows["ViT"]["x³/√N, N = tokens"] == ""
    table = page.accuracy_table(runs)
    assert "preset smoke" in table.caption and "mean ± sd" in table.caption
    cells = table_cells(table)
    assert not any(w in c.lower() for c in cells for w in VERDICT_WORDS)
    assert not any("sqrt" in c or "^" in c for c in cells)


@pytest.mark.parametrize("deit, direction", [(0.3, "below"), (0.9, "above")])
def test_deits_gap_from_vit_carries_its_direction(deit, direction):
    v = page.deit_values(planted_runs(softmax={"vit": 0.6, "deit": deit}))
    assert v["direction"] == direction and v["gap"] == f"{abs(deit - 0.6) * 100:.1f}" and v["vit"] == "60.0%"


def test_the_accuracy_figure_has_two_labelled_panels():
    fig = page.accuracy_figure(planted_runs({("vit", arch.OWN): -0.02}))
    assert len(fig.axes) == 2
    labels = [t.get_text() for t in fig.axes[1].get_legend().get_texts()]
    assert labels == ["softmax", "x³/√N", "x³/14", "x³/√N, N = tokens"]
    assert all(t.get_fontsize() >= FONT for ax in fig.axes for t in ax.get_xticklabels())
    matplotlib.pyplot.close(fig)
