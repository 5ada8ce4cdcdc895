"""Chapter 08's figure of how the costs grow with N: few lines, readable names and sizes."""
from support.costs_frames import attention

from polyattn.studies.costs import growth as costs_growth


def test_the_figure_has_few_lines_and_readable_names():
    fig = costs_growth.scaling_figure(attention(), "book")
    for ax in fig.axes:
        assert 0 < len(ax.lines) <= 6
        assert all("poly:" not in line.get_label() for line in ax.lines)
    labels = [t.get_text() for t in fig.axes[1].get_legend().get_texts()]
    assert labels[0] == "softmax, SDPA" and "x³/√N, compiled" in labels
    sizes = [t.get_fontsize() for ax in fig.axes for t in ax.texts + [ax.xaxis.label, ax.yaxis.label]]
    assert min(sizes) >= 9
    assert costs_growth.scaling_figure(attention(compiled=None), "book").axes[0].lines.__len__() == 5
