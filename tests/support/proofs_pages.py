"""Chapter 02's page modules under test: a figure's texts checked for people, and planted findings
in place of the delivered claims."""
from types import SimpleNamespace

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

from polyattn.studies.proofs import page as proofs_page
from support.patching import patch_everywhere


def figure_texts(fig) -> list:
    """Every text artist of a figure: titles, labels, tick labels, legend entries, annotations."""
    return [t for t in fig.findobj(matplotlib.text.Text) if t.get_text()]


def check_figure(fig, max_entries: int = 6):
    """No raw activation spec in any text, at most ``max_entries`` legend entries per legend, and
    legend and stamp text of at least 9 points."""
    for t in figure_texts(fig):
        assert "poly:" not in t.get_text() and "softmax:" not in t.get_text(), t.get_text()
    legends = [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None] + list(fig.legends)
    for legend in legends:
        assert len(legend.get_texts()) <= max_entries
        assert all(t.get_fontsize() >= 9 for t in legend.get_texts())
    plt.close(fig)


def plant_findings(monkeypatch):
    """Plant the findings the page reads: ``plant({"thm41_2": {...}})``; forms default to "holds"."""
    def plant(numbers: dict, forms: dict | None = None):
        forms = forms or {}
        patch_everywhere(monkeypatch, proofs_page, "finding", lambda cid: SimpleNamespace(
            form=forms.get(cid, "holds"), numbers=numbers.get(cid, {})))
    return plant
