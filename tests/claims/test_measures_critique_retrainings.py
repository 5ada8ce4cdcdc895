"""Chapter 09's claims read from the short retrainings of Table 1's model (powers and gradients,
softmax's saturation, extreme entries, attention maps): the committed retrainings, edited, drive
each form a rule can give, and the committed records give the committed verdicts."""
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from polyattn.measures import measurement_records
from polyattn.measures.critique_common import SHORT_GRID
from polyattn.measures.critique_gradients import powers_gradients, softmax_saturation
from polyattn.measures.critique_maps import attention_maps
from polyattn.measures.critique_outliers import outliers
from polyattn.measures.critique_survey import SURVEY_FUNCTION, SURVEY_NAME, survey_settings

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "data" / "results"

@pytest.fixture
def short_root(tmp_path):
    """A results folder holding copies of the committed short retrainings, and a planted random-score
    survey beside it (so no survey is computed)."""
    root = tmp_path / "results"
    shutil.copytree(COMMITTED / SHORT_GRID, root / SHORT_GRID)
    settings = survey_settings()
    rows = [{"activation": a, "sigma": s, "N": settings["n"], "mean": (0.3 if a == "softmax" else s ** (i - 1)),
             "saturated_share": (0.6 if a == "softmax" and s >= 10 else 0.0),
             "row_jac_saturated": (0.004 if a == "softmax" and s >= 10 else float("nan")),
             "gaussian_prediction": float("nan")}
            for i, a in enumerate(settings["specs"]) for s in settings["sigmas"]]
    measurement_records.write_planted(tmp_path / "measurements", SURVEY_NAME, SURVEY_FUNCTION, settings,
                                      pd.DataFrame(rows))
    return root


def _edit_short(root, edit):
    """Rewrite every stored short retraining with ``edit(record)``."""
    for path in (root / SHORT_GRID).glob("*.json"):
        record = json.loads(path.read_text())
        edit(record)
        path.write_text(json.dumps(record))


def _gradient_rows(record, state):
    return [r for r in record["final"]["gradients"]["rows"] if r["state"] == state]


def _power(record):
    act = record["config"]["activation"]
    return int(act.split("=")[1]) if act.startswith("poly:p=") and "," not in act else None


def test_the_committed_gradients_vanish_and_explode(short_root):
    f = powers_gradients(short_root)
    assert f.form == "holds"
    assert f.numbers["exploded"] > 0 and f.numbers["gradient_rank_correlation_initial"] <= -0.8
    # the planted survey is read, not recomputed
    assert f.numbers["random_p3_unit_sigma"] == pytest.approx(1.0)


def test_gradients_that_vanish_without_exploding_are_mixed(short_root):
    linear = {}

    def read(record):
        if record["config"]["activation"] == "poly:p=1":
            linear["jac"] = _gradient_rows(record, "trained")[0]["act_jac_fro"]

    _edit_short(short_root, read)

    def tame(record):
        if _power(record):
            for r in _gradient_rows(record, "trained"):
                r["act_jac_fro"] = linear["jac"]

    _edit_short(short_root, tame)
    f = powers_gradients(short_root)
    assert f.numbers["exploded"] == 0
    assert f.form == "mixed"


def test_gradients_that_neither_vanish_nor_explode_are_not_supported(short_root):
    def flat(record):
        p = _power(record) or (int(record["config"]["activation"].split("=")[1])
                               if record["config"]["activation"].startswith("poly_odd") else None)
        if p:
            for r in record["final"]["gradients"]["rows"]:
                r["act_jac_fro"] = 1.0
                if r["state"] == "initialisation":
                    r["grad_scores_fro"] = 0.01 * p

    _edit_short(short_root, flat)
    f = powers_gradients(short_root)
    assert f.numbers["gradient_rank_correlation_initial"] == pytest.approx(1.0)
    assert f.form == "not supported"


def test_softmax_rows_that_saturate_in_the_model_make_saturation_hold(short_root):
    assert softmax_saturation(short_root).form == "holds only under its assumptions"

    def saturate(record):
        if record["config"]["activation"] == "softmax":
            for r in record["final"]["gradients"]["rows"]:
                r["saturated_share"] = 0.2

    _edit_short(short_root, saturate)
    f = softmax_saturation(short_root)
    assert f.form == "holds"
    assert f.numbers["saturated_share_max"] == pytest.approx(0.2)
    assert f.numbers["random_half_saturated_sigma"] == 10.0


def _set_correct(record, where, factor, text):
    o = record["final"]["outliers"]
    o["correct"][where][o["factors"].index(factor)] = text


def test_outliers_that_every_polynomial_amplifies_and_loses_more_to_hold(short_root):
    assert outliers(short_root).form == "mixed"

    def polynomials_lose(record):
        o = record["final"]["outliers"]
        clean = o["correct"]["scores"][o["factors"].index(1.0)]
        lost = "0" * len(clean) if record["config"]["activation"] != "softmax" else clean
        _set_correct(record, "scores", 100.0, lost)

    _edit_short(short_root, polynomials_lose)
    f = outliers(short_root)
    assert f.numbers["loses_more"] == f.numbers["cases"] == 3
    assert f.form == "holds"


def test_outliers_that_no_polynomial_amplifies_nor_loses_more_to_are_not_supported(short_root):
    def tame(record):
        o = record["final"]["outliers"]
        clean = o["correct"]["scores"][o["factors"].index(1.0)]
        softmax = record["config"]["activation"] == "softmax"
        _set_correct(record, "scores", 100.0, "0" * len(clean) if softmax else clean)
        for r in o["table"]:
            if r["where"] == "scores":
                r["token_share"] = 0.02

    _edit_short(short_root, tame)
    f = outliers(short_root)
    assert f.numbers["amplified"] == 0 and f.numbers["loses_more"] == 0
    assert f.form == "not supported"


def test_the_maps_are_described(short_root):
    f = attention_maps(short_root)
    assert f.form == "measured"
    assert f.numbers["negative share, first layer softmax"] == 0.0
    assert f.numbers["distance_min"] <= f.numbers["uniform_distance"] <= f.numbers["distance_max"]


def test_a_missing_short_retraining_leaves_every_short_claim_inconclusive_at_this_scale(short_root):
    next((short_root / SHORT_GRID).glob("*.json")).unlink()
    for fn in (powers_gradients, softmax_saturation, outliers, attention_maps):
        f = fn(short_root)
        assert f.form == "inconclusive at this scale", fn.__name__
        assert f.numbers["short_runs_planned"] == f.numbers["short_runs_measured"] + 1


# --- the committed records -------------------------------------------------------------------------------


@pytest.mark.committed
@pytest.mark.parametrize("claim", [powers_gradients, softmax_saturation, outliers, attention_maps],
                         ids=lambda claim: claim.__name__)
def test_the_committed_records_give_the_committed_verdict(claim):
    committed = json.loads((ROOT / "data" / "verdicts.json").read_text())[claim.__name__]
    assert claim().form == committed["form"]
