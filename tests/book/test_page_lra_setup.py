"""Chapter 05's examples of the data: a ListOps expression and Pathfinder images drawn with the
preset's generator settings."""
import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

from polyattn.experiments.lra import lra  # noqa: E402
from polyattn.studies.lra import setup as page
from polyattn.studies.lra.page import FONT, TASKS, Runs  # noqa: E402


@pytest.mark.parametrize("task", ["listops", "pathfinder"])
def test_the_examples_follow_the_presets_generator(task):
    runs = Runs("smoke", True, "", lra("smoke", seeds=[0]), list(TASKS), [])
    if task == "listops":
        ex = page.listops_example(runs)
        assert ex["expression"].startswith("`[") and int(ex["length"]) <= 40 and 0 <= int(ex["value"]) <= 9
    else:
        fig = page.pathfinder_figure(runs)
        assert len(fig.axes) == 4 and all(ax.title.get_fontsize() >= FONT for ax in fig.axes)
        matplotlib.pyplot.close(fig)
