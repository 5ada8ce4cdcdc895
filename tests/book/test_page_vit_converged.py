"""Chapter 04's converged tier on planted ViT records: how flat the last epochs are."""
import math

import pytest
from support.records import make_record

from polyattn.pages import vit_converged as cv


def test_the_plateau_is_the_largest_move_over_the_last_two_epochs():
    records = [make_record("softmax", 0, accs=(0.5, 0.80, 0.81, 0.812)), make_record("poly:p=3", 0, accs=(0.70, 0.702, 0.705))]
    assert cv.plateau(records) == pytest.approx(1.2)
    assert math.isnan(cv.plateau([make_record("softmax", 0, accs=(0.5, 0.6))]))
