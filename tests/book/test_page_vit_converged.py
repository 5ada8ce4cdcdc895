"""Chapter 04's converged tier on planted ViT records: how flat the last epochs are."""
import math

import pytest
from support.records import make_record

from polyattn.studies.vit import converged as cv


def test_the_plateau_is_the_largest_move_over_the_last_two_epochs():
    records = [make_record("softmax", 0, accs=(0.5, 0.80, 0.81, 0.812)), make_record("poly:p=3", 0, accs=(0.70, 0.702, 0.705))]
    assert cv.plateau(records) == pytest.approx(1.2)
    assert math.isnan(cv.plateau([make_record("softmax", 0, accs=(0.5, 0.6))]))


def test_the_settings_table_names_the_converged_tiers_that_decide():
    """The table of the paper's settings beside the book's lists the converged tiers too: all the
    training images, 20 epochs, and the runs without clipping, as the paper ran."""
    from polyattn.studies.vit import setup as vit_setup

    rows = vit_setup.deviations_table().data.set_index("")["this book"]
    assert "all" in rows["dataset"] and "20" in rows["epochs"].split(", ")
    assert set(rows["gradient clipping (max norm; 0 = off)"].split(", ")) == {"1.0", "0.0"}
