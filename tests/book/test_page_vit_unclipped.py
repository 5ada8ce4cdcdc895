"""Chapter 04's runs without gradient clipping, on planted ViT records and planted claims: the
unclipped runs beside the clipped ones, each unclipped converged run, and the register's
comparisons with and without clipping side by side."""
import math

import pytest
from support.patching import patch_everywhere
from support.records import make_record
from support.vit_claims import delivered_claim, plant_claims

from polyattn.studies.vit import unclipped as uc


@pytest.fixture
def planted(tmp_path, planted_grid):
    """The planted claims of :func:`support.vit_claims.plant_claims`: (evaluate, claims, root)."""
    return plant_claims(tmp_path, planted_grid)


def test_the_unclipped_tables_show_divergence_and_the_clipped_accuracy_beside():
    unclipped = [make_record("softmax", 0, accs=(0.5, 0.78)), make_record("softmax", 1, accs=(0.5, 0.80)),
                 make_record("poly:p=3,c=1", 0, accs=(0.5, math.nan), status="diverged", diverged_step=7)]
    clipped = [make_record("softmax", s, accs=(0.5, a)) for s, a in ((0, 0.79), (1, 0.81))]
    rows = uc.unclipped_table(unclipped, clipped, "smoke").data.to_dict("records")
    assert rows[0] == {"Activation": "softmax", "Runs": 2, "Diverged": 0, "Without clipping (%)": "79.00 ± 1.41",
                       "With clipping (%)": "80.00 ± 1.41"}
    assert rows[1]["Diverged"] == 1 and rows[1]["Without clipping (%)"] == "–"
    runs = uc.unclipped_runs_table(unclipped).data.to_dict("records")
    assert runs[2]["Final test accuracy (%)"] == "diverged at step 7" and runs[0]["Final test accuracy (%)"] == "78.00"
    assert uc.unclipped_converged_numbers(unclipped, 15) == {"ch04_uconv_stored": "3 of 15", "ch04_uconv_diverged": "1"}


def test_the_clipping_table_sets_each_question_with_and_without_clipping_side_by_side(planted, monkeypatch):
    from polyattn.claims import register

    evaluate, claims, _ = planted
    patch_everywhere(monkeypatch, register, "claim", lambda cid: claims[cid])
    d = {"unit_parity": delivered_claim(evaluate("unit_parity"))}
    layout = (("cube", ("unit_parity", "cube"), ("unit_parity", "relu")),)
    rows = uc.clipping_table(d, layout).data.to_dict("records")
    cell = rows[0]["With clipping at norm 1"]
    assert cell.startswith("−0.20 [") and ", equivalent" in cell and cell.endswith(" (5 of 5 pairs)")
    assert rows[0]["Without clipping"] == "1 of 2 pairs stored"
    assert "planted records" in uc.clipping_table(d, layout).caption
