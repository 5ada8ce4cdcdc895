"""Chapter 06's "Loss curves" on planted runs."""
import matplotlib

matplotlib.use("Agg")

from support.physics_runs import planted_runs  # noqa: E402

from polyattn.labels import PINN_LABEL  # noqa: E402
from polyattn.studies.physics import curves as page
from polyattn.studies.physics.page import FONT  # noqa: E402


def test_the_curves_draw_only_the_chosen_variants():
    fig = page.curve_figure(planted_runs())
    labels = [t.get_text() for t in fig.axes[2].get_legend().get_texts()]
    assert labels == ["softmax", "x³/√N", "x³/14", PINN_LABEL]
    assert all(t.get_fontsize() >= FONT for t in fig.axes[2].get_legend().get_texts())
    matplotlib.pyplot.close(fig)
