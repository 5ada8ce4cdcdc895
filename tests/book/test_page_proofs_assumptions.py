"""Chapter 02's section on where the assumptions fail: planted correlation surveys, the factors
at ViT sizes, and the norms of a micro ViT at initialisation and after training."""
import json
import math

import pandas as pd
import pytest
from support.pages import table_rows
from support.proofs_pages import plant_findings

from polyattn import theory
from polyattn.measures import proofs_measurements
from polyattn.studies.proofs import assumptions as asm


@pytest.fixture
def findings(monkeypatch):
    return plant_findings(monkeypatch)


# --- queries and keys that share X ------------------------------------------------------------


def test_the_quoted_correlation_is_one_half_when_the_grid_has_it():
    assert asm.middle_rho((0.0, 0.25, 0.5, 1.0)) == 0.5
    assert asm.middle_rho((0.0, 0.25, 1.0)) == 0.25 and asm.middle_rho((0.0, 1.0)) == 1.0


def _corr_planted(rhos) -> pd.DataFrame:
    rows = [{"setup": "independent A, B", "rho": float("nan"), "p": p, "ratio": 1.0, "ratio_ci_lo": 0.99,
             "ratio_ci_hi": 1.01} for p in (1, 2, 3)]
    rows += [{"setup": "shared X", "rho": r, "p": p, "ratio": 1 + r * p ** 2, "ratio_ci_lo": 1 + r * p ** 2 - 0.1,
              "ratio_ci_hi": 1 + r * p ** 2 + 0.1} for r in rhos for p in (1, 2, 3)]
    return pd.DataFrame(rows)


def test_the_correlation_table_and_numbers_read_rho_zero_the_middle_and_k_equal_q():
    corr = _corr_planted(theory.preset("book").corr_rhos)
    rows = {r["p"]: r for r in table_rows(asm.correlated_table(corr, "book", 0))}
    assert rows[3]["K = Q (ρ = 1)"] == "10.0 ± 0.1" and rows[3]["ρ = 0.5"] == "5.50 ± 0.10"
    assert rows[1]["independent A, B"] == "1.00 ± 0.01"
    out = asm.correlated_numbers(corr, "book")
    assert out["corr_mid_p3"] == "5.50" and out["corr_k_eq_q_p3"] == "10.0" and out["corr_rho0_p3"] == "1.000"
    assert out["corr_model_p3"] == f"{theory.qk_equal_prediction(196, 64, 3):.1f}"
    assert out["corr_sizes"] == "(196, 768, 64)"
    smoke = table_rows(asm.correlated_table(_corr_planted((0.0, 1.0)), "smoke", 0))[0]
    assert not any(k.startswith("ρ = ") for k in smoke)


# --- which factor dominates at ViT sizes; the undefined d -------------------------------------


def test_the_factors_at_vit_sizes_and_the_readings_of_d():
    rows = table_rows(asm.factors_table())
    vit_b = next(r for r in rows if r["model"] == "ViT-B/16")
    assert len(rows) == len(asm.FACTOR_MODELS) and vit_b["√N"] == "14" and vit_b["D factor, ÷ √d"] == "3.87"
    assert vit_b["N, D, d"] == "196, 768, 64" and vit_b["√N reaches it at N ="] == "6.8 × 10⁹ | 3.9 × 10⁶"
    assert len(table_rows(asm.factors_table(models=tuple(theory.MODEL_SIZES)))) == len(theory.MODEL_SIZES)
    assert asm.head_dim_numbers() == {"head_factor_p1": f"{math.sqrt(12):.2f}", "head_factor_p3": f"{12 ** 1.5:.1f}"}


def test_the_factor_numbers_come_from_the_finding_on_theorem_4_2(findings):
    findings({"thm42_43": proofs_measurements.vit_b_factors(3)})
    out = asm.factor_numbers()
    assert out["vit_b_n_factor"] == "14" and out["vit_b_crossover_n_scaled"] == "15"
    assert out["vit_b_crossover_n_unscaled"] == "6.8e+09" and out["vit_b_d_factor_scaled"] == "3.87"


# --- at initialisation and after training -----------------------------------------------------


def _init_planted() -> pd.DataFrame:
    rows = []
    for a, fro in (("softmax", 0.14), ("poly:p=3", 7.5e-5), ("poly:p=3,c=1", 5.1e-4)):
        for head in range(2):
            rows.append({"activation": a, "N": 50, "head": head, "fro_over_sqrt_n": fro, "jac_over_sqrt_n": 0.1,
                         "score_std": 0.025, "gaussian_over_sqrt_n": float("nan") if a == "softmax" else fro / 1.1})
    return pd.DataFrame(rows)


def test_the_model_norms_table_adds_trained_columns_only_when_records_are_stored():
    init = _init_planted()
    alone = table_rows(asm.model_norms_table(init, pd.DataFrame(), "smoke"))
    assert [r["activation"] for r in alone] == ["softmax", "x³/√N", "x³ (unscaled)"]
    assert not any("trained" in k for k in alone[0]) and alone[0]["Gaussian prediction"] == "n/a"
    trained = pd.DataFrame([{"record": r, "activation": "softmax", "metric": m, "value": v}
                            for r, m, v in (("a.json", "attn_fro_over_sqrt_n", 0.25), ("b.json", "attn_fro_over_sqrt_n", 0.35),
                                            ("a.json", "act_jac_fro_over_sqrt_n", 0.2))])
    rows = {r["activation"]: r for r in table_rows(asm.model_norms_table(init, trained, "smoke"))}
    assert rows["softmax"]["trained, mean (largest)"] == "0.3 (0.35)"
    assert rows["x³/√N"]["trained, mean (largest)"] == "no stored run"
    numbers = asm.model_norms_numbers(init, trained)
    assert numbers["init_poly3_over_prediction"] == "1.10" and numbers["trained_records"] == "2"
    assert numbers["init_poly3"] == "7.5 × 10⁻⁵" and asm.model_norms_numbers(init, pd.DataFrame())["trained_records"] == "0"


def test_trained_norms_are_read_from_the_records_of_a_folder(tmp_path):
    record = {"schema": 1, "status": "ok", "seed": 0, "config": {"activation": "softmax"},
              "probes": [{"step": s, "layer": 0, "head": 0, "metric": "attn_fro_over_sqrt_n", "value": v}
                         for s, v in ((0, 0.1), (10, 0.3))]}
    (tmp_path / "r.json").write_text(json.dumps(record))
    (tmp_path / "broken.json").write_text("{")
    frame = asm.trained_norms("smoke", results=str(tmp_path))
    assert list(frame.value) == [0.3] and set(frame.activation) == {"softmax"}
    assert asm.trained_norms("smoke", results=str(tmp_path / "absent")).empty
