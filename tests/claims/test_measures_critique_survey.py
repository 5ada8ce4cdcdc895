"""The random-score survey that chapter 09's gradient claims read: a stale record is computed again
and then read, and the crossing spreads follow the Gaussian prediction."""
import pandas as pd
import pytest

from polyattn.measures import critique_survey as measure
from polyattn.measures import measurement_records


def test_a_stale_survey_is_computed_again_and_then_read(tmp_path, monkeypatch):
    import polyattn.theory

    calls = []

    def fake_survey(specs, sigmas, n, reps, seed, D=64, saturation=0.99):
        calls.append(n)
        return pd.DataFrame([{"activation": a, "sigma": s, "mean": 1.0} for a in specs for s in sigmas])

    monkeypatch.setattr(polyattn.theory, "jacobian_scale_survey", fake_survey)
    directory = tmp_path / "measurements"
    stale = {**measure.survey_settings(), "reps": 1}
    measurement_records.write_planted(directory, measure.SURVEY_NAME, measure.SURVEY_FUNCTION, stale,
                                      pd.DataFrame([{"activation": "softmax", "sigma": 1.0, "mean": 9.0}]))
    first = measure.jacobian_survey(tmp_path / "results")
    assert first.computed and calls == [measure.survey_settings()["n"]]
    again = measure.jacobian_survey(tmp_path / "results")
    assert not again.computed and len(calls) == 1
    assert set(again.table["activation"]) == set(measure.survey_settings()["specs"])


def test_the_crossing_spread_of_the_quadratic_is_one_half():
    # 2 sigma sqrt(1!!) = 1 at sigma = 1/2
    assert measure.crossing_sigmas()[2] == pytest.approx(0.5)
