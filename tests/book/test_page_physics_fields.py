"""Chapter 06's "Predicted fields of the median seed": the error fields of planted runs on one
logarithmic scale, and the grid the records keep."""
import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from support.physics_runs import GRID, planted_runs  # noqa: E402

from polyattn.studies.physics import fields as page
from polyattn.studies.physics.page import FONT  # noqa: E402
from polyattn.studies.physics.problems import reference  # noqa: E402


def test_the_error_fields_share_a_log_scale_that_keeps_a_small_error_visible():
    from matplotlib.colors import LogNorm

    runs = planted_runs()
    for r in runs.records:           # a prediction off the reference by its rMAE-sized constant
        spec = r["config"]["dataset"]
        ref, _ = reference(spec, GRID)
        r["final"]["prediction"] = list((ref + r["metrics"][-1]["rMAE"]).ravel())
    fig = page.field_figure(runs)
    images = [im for ax in fig.axes for im in ax.get_images() if isinstance(im.norm, LogNorm)]
    assert len(images) == 2 * 3
    top = max(float(np.max(im.get_array())) for im in images)
    assert images[0].norm.vmax == pytest.approx(top) and images[0].norm.vmin == pytest.approx(top * 1e-4)
    # softmax's convection error (0.025, the first panel) sits well inside the scale, where a linear
    # scale up to the largest error (the cubic's 6.5 on the wave) would leave it at the black end
    small = float(np.max(images[0].get_array()))
    assert images[0].norm(small) > 0.3 and small / top < 0.005
    assert all(ax.title.get_fontsize() >= FONT for ax in fig.axes if ax.get_title())
    matplotlib.pyplot.close(fig)


def test_the_field_values_name_the_kept_grid():
    assert page.field_values(planted_runs()) == {"field_grid": f"{GRID} × {GRID}"}
