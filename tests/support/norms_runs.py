"""Table 1's smoke grid with planted records, and a page that trains or not, as chapter 03's page
modules read them."""
from types import SimpleNamespace

from polyattn import analysis
from polyattn.experiments import vit
from polyattn.studies.norms.page import Table1

N_TOKENS = 50          # Table 1's smoke config: 28-pixel images, patch 4, plus the CLS token


def table1(records) -> Table1:
    return Table1(vit.table1("smoke"), records, "smoke", "planted runs", analysis.probe_frame(records))


def page(trains=True):
    return SimpleNamespace(preset="smoke", device="cpu", trains=trains, not_run="not run", prefix="",
                           on_device=lambda configs: list(configs))
