"""Chapter 06's tables and verdicts on synthetic records whose answers are known."""
import math

import numpy as np
import pytest

from polyattn.analysis import physics as ph
from polyattn.config import TrainConfig
from polyattn.experiments.physics import PINN_LABEL, config_for
from polyattn.results import config_dict

SOFTMAX = {"convection": [0.02, 0.03, 0.5, 0.025, 0.04],   # one failed seed of five
           "reaction": [0.9, 0.95, 0.8, 0.99, 0.85],       # softmax fails every seed
           "wave": [0.05, 0.06, 0.04, 0.07, 0.055]}
#: x^3/sqrt(N) as a multiple of softmax's error, seed by seed.
RATIO = {"convection": [2.0, 2.2, 1.8, 2.1, 1.9], "reaction": [1.0, 1.1, 0.9, 1.0, 1.0],
         "wave": [1.01, 0.99, 1.0, 1.02, 0.98]}


def _record(cfg: TrainConfig, rmae: float, status: str = "ok", attention=None) -> dict:
    metrics = [] if status != "ok" else [{"epoch": 1, "step": 1, "train_loss": 1.0, "rMAE": 2 * rmae, "rRMSE": 2.0},
                                          {"epoch": 2, "step": 2, "train_loss": 0.1, "rMAE": rmae,
                                           "rRMSE": 1.1 * rmae}]
    final = {"grid": [3, 2], "prediction": [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]}
    if attention is not None:
        final["attention"] = attention
    return {"schema": 1, "experiment": "physics", "config": config_dict(cfg), "config_hash": cfg.hash, "seed": cfg.seed,
            "preset": cfg.preset, "status": status, "diverged_step": None if status == "ok" else 3, "task": "pde",
            "seq_lens": {"seq_len": 1 if cfg.model.startswith("pinn_") else 5},
            "metrics_spec": [{"name": "rMAE", "unit": "", "higher_is_better": False, "scale": 1.0},
                             {"name": "rRMSE", "unit": "", "higher_is_better": False, "scale": 1.0}],
            "metrics": metrics, "probes": [], "provenance": {"wall_s": 10.0}, "final": final if status == "ok" else None}


def _records(diverge_poly_seed=None):
    recs = []
    for pde in SOFTMAX:
        for seed in range(5):
            s = SOFTMAX[pde][seed]
            recs.append(_record(config_for("book", pde, "softmax", seed), s))
            status = "diverged" if (pde, seed) == diverge_poly_seed else "ok"
            recs.append(_record(config_for("book", pde, "x^3/sqrt(N)", seed), s * RATIO[pde][seed], status))
            recs.append(_record(config_for("book", pde, PINN_LABEL, seed), 0.9))
    return recs


@pytest.fixture(scope="module")
def final():
    return ph.physics_final(_records())


def test_final_frame_labels_runs_and_marks_failures(final):
    assert len(final) == 45
    assert list(dict.fromkeys(final["pde"])) == ["convection", "reaction", "wave"]
    assert list(dict.fromkeys(final["variant"])) == ["softmax", "x^3/sqrt(N)", PINN_LABEL]
    pinn = final[final["variant"] == PINN_LABEL]
    assert set(pinn["spec"]) == {"softmax"} and set(pinn["activation"]) == {PINN_LABEL}
    conv = final[(final["pde"] == "convection") & (final["variant"] == "softmax")].set_index("seed")
    assert conv["failed"].tolist() == [False, False, True, False, False]
    assert conv.loc[0, "log10_rMAE"] == pytest.approx(math.log10(0.02))
    assert conv.loc[0, "rMAE"] == pytest.approx(0.02)          # the last evaluation, not the first


def test_error_table_medians_spread_and_failure_share(final):
    t = ph.error_table(final).set_index(["pde", "variant"])
    row = t.loc[("convection", "softmax")]
    assert row["n_seeds"] == 5 and row["median"] == pytest.approx(0.03)
    assert row["q25"] == pytest.approx(0.025) and row["q75"] == pytest.approx(0.04)
    assert row["best"] == pytest.approx(0.02) and row["worst"] == pytest.approx(0.5)
    assert row["spread"] == pytest.approx(25.0)
    assert row["n_failed"] == 1 and row["fail_share"] == pytest.approx(0.2)
    # the exact interval of 1 of 5: 1 - 0.975^(1/5) and the 97.5% quantile of Beta(2, 4)
    assert row["fail_ci_low"] == pytest.approx(1 - 0.975 ** 0.2, rel=1e-6)
    assert row["fail_ci_high"] == pytest.approx(0.7164, abs=1e-4)
    assert bool(row["seed_sensitive"])
    wave = t.loc[("wave", "softmax")]
    assert wave["n_failed"] == 0 and not bool(wave["seed_sensitive"]) and wave["fail_ci_low"] == 0.0
    reac = t.loc[("reaction", "softmax")]
    assert reac["n_failed"] == 5 and reac["fail_ci_high"] == 1.0 and not bool(reac["seed_sensitive"])


def test_a_diverged_run_fails_and_stays_out_of_the_medians():
    final = ph.physics_final(_records(diverge_poly_seed=("wave", 2)))
    row = ph.error_table(final).set_index(["pde", "variant"]).loc[("wave", "x^3/sqrt(N)")]
    assert row["n_diverged"] == 1 and row["n_failed"] == 1 and bool(row["seed_sensitive"])
    ok = [SOFTMAX["wave"][s] * RATIO["wave"][s] for s in (0, 1, 3, 4)]
    assert row["median"] == pytest.approx(np.median(ok))
    pick = ph.median_runs(final).set_index(["pde", "variant"]).loc[("wave", "x^3/sqrt(N)")]
    # 0.0505 (seed 0), 0.0539 (4), [0.0594 (1)], 0.0714 (3), diverged (2, counted as the worst)
    assert pick["seed"] == 1


def test_median_runs_pick_the_median_seed(final):
    picks = ph.median_runs(final).set_index(["pde", "variant"])
    assert picks.loc[("convection", "softmax"), "seed"] == 1       # 0.02, 0.025, [0.03], 0.04, 0.5
    assert picks.loc[("wave", "softmax"), "seed"] == 4             # 0.04, 0.05, [0.055], 0.06, 0.07


def test_paired_comparison_on_the_log_scale(final):
    d = ph.compare_to_softmax(final).set_index(["pde", "variant"])
    conv = d.loc[("convection", "x^3/sqrt(N)")]
    logs = np.log10(RATIO["convection"])
    assert conv["n_pairs"] == 5 and conv["mean_diff"] == pytest.approx(logs.mean())
    assert conv["sd_diff"] == pytest.approx(logs.std(ddof=1))
    assert conv["ratio"] == pytest.approx(10 ** logs.mean()) and conv["margin"] == pytest.approx(math.log10(2))
    assert conv["family_size"] == 6 and bool(conv["softmax_solved"])
    assert not bool(d.loc[("reaction", "x^3/sqrt(N)"), "softmax_solved"])
    assert d.loc[("wave", "x^3/sqrt(N)"), "mean_diff"] == pytest.approx(np.log10(RATIO["wave"]).mean())


def test_seed_claim_forms(final):
    table = ph.error_table(final)
    claim = ph.seed_claim(table)
    assert claim["form"] == "holds" and list(claim["sensitive"]["pde"]) == ["convection"]
    steady = ph.seed_claim(table[table["pde"] != "convection"])
    # seeds that all agree cannot show the absence of seed sensitivity: the rates stay open
    assert steady["form"] == "inconclusive at this power" and len(steady["checked"]) == 2
    assert all(r["high"] > 0.4 or r["low"] < 0.6 for r in steady["rates"])
    text = ph.rate_text({"pde": "convection", "failed": 0, "seeds": 5, "low": 0.0, "high": 0.5218})
    assert text == "convection: 0 of 5 seeds fail (failure rates up to 52% not excluded)"
    few = ph.seed_claim(table[table["pde"] == "wave"].assign(n_seeds=2))
    assert few["form"] == "inconclusive at this scale"


def test_clopper_pearson_known_values():
    assert ph.clopper_pearson(0, 3) == (0.0, pytest.approx(1 - 0.025 ** (1 / 3)))
    assert ph.clopper_pearson(3, 3) == (pytest.approx(0.025 ** (1 / 3)), 1.0)
    lo, hi = ph.clopper_pearson(0, 0)
    assert math.isnan(lo) and math.isnan(hi)


def test_attention_maps_and_prediction_images():
    att = [[[[0.2] * 5 for _ in range(5)] for _ in range(2)] for _ in range(2)]     # [layer, head, 5, 5]
    rec = _record(config_for("book", "convection", "softmax", 0), 0.02, attention=att)
    frame = ph.attention_maps([rec, _record(config_for("book", "convection", PINN_LABEL, 0), 0.9)])
    assert len(frame) == 2 * 2 * 5 * 5 and set(frame["layer"]) == {"encoder", "decoder"}
    assert frame["weight"].sum() == pytest.approx(0.2 * 100)
    img = ph.prediction_image(rec)
    assert img.shape == (2, 3) and img[1, 0] == 3.0          # rows are times
    with pytest.raises(ValueError, match="stores no prediction"):
        ph.prediction_image(_record(config_for("book", "convection", "softmax", 1), 0.1, status="diverged"))


def test_records_without_rmae_are_refused():
    rec = _record(config_for("book", "convection", "softmax", 0), 0.02)
    rec["metrics_spec"] = [{"name": "test_acc", "unit": "%", "higher_is_better": True, "scale": 100.0}]
    with pytest.raises(ValueError, match="no rMAE"):
        ph.physics_final([rec])
    with pytest.raises(ValueError, match="not result records"):
        ph.physics_final([{"x": 1}])
