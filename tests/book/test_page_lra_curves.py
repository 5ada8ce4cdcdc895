"""Chapter 05's learning curves on planted runs."""
import matplotlib

matplotlib.use("Agg")

from support.lra_runs import planted_runs  # noqa: E402

from polyattn.studies.lra import curves as page
from polyattn.studies.lra.page import FONT  # noqa: E402


def test_curves_leave_out_flat_tasks_and_name_the_variants():
    runs = planted_runs({("listops", "x^3/14"): -0.10}, flat=("image",))
    fig, left = page.curve_figure(runs)
    assert left == "Image (flat)" and len(fig.axes) == 1 and fig.axes[0].get_title() == "ListOps"
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "x³/√N, N padded" in labels and "chance" in labels and not any("sqrt" in lbl for lbl in labels)
    assert all(t.get_fontsize() >= FONT for t in fig.legends[0].get_texts())
    matplotlib.pyplot.close(fig)
