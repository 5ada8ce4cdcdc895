"""Chapter 03's "Do the norms predict accuracy?" on planted records: the correlation table's
rows and caption, and the measured claim's numbers in words."""
import matplotlib
import pandas as pd
from support.norms_runs import table1
from support.pages import probe_rows
from support.records import make_record

from polyattn.studies.norms import accuracy as ac

matplotlib.use("Agg")


def test_correlation_rows_name_the_norms_and_say_when_there_is_no_within_activation_value():
    corr = pd.DataFrame([{"norm": "act_jac_fro_mean", "rho": -0.26, "ci_low": -0.44, "ci_high": -0.04, "p": 0.037,
                          "cluster_ci_low": -0.56, "cluster_ci_high": 0.10, "within_rho": float("nan"),
                          "within_ci_low": float("nan"), "within_ci_high": float("nan"), "within_p": float("nan")}])
    (row,) = ac.correlation_rows(corr)
    assert row["norm"] == "‖∂φ(S)/∂S‖_F" and row["ρ over runs [95% CI]"] == "−0.26 [−0.44, −0.04]"
    assert row["95% CI, activations resampled"] == "[−0.56, +0.10]"
    assert row["ρ within activations [95% CI]"] == "none (one run per activation)" and row["p within (permutation)"] == "none"


def test_the_correlation_table_counts_the_runs_and_leaves_out_a_diverged_one():
    records = []
    for i, act in enumerate(("softmax", "poly:p=1", "poly:p=2", "poly:p=3")):
        for s in (0, 1):
            records.append(make_record(act, s, accs=(0.5, 0.6 + 0.05 * i + 0.01 * s),
                                       probes=probe_rows({"attn_fro_over_sqrt_n": 1.0 + i + 0.1 * s,
                                                          "act_jac_fro": 2.0 + i, "param_jac_fro": 3.0 - i})))
    records.append(make_record("poly:p=3,c=1", 0, accs=(0.5,), status="diverged", diverged_step=3,
                               probes=probe_rows({"attn_fro_over_sqrt_n": 9.0, "act_jac_fro": 9.0, "param_jac_fro": 9.0})))
    caption = ac.correlation_table(table1(records)).caption
    assert "over 8 runs of 4 activations (1 diverged runs left out)" in caption and "1 epoch" in caption


def test_the_claims_numbers_are_glued_per_norm_with_signs_and_a_missing_norm_says_none():
    numbers = {"runs": 65, "activations": 13, "diverged runs left out": 0, "norms": 3,
               "norms separating activations": 0}
    for norm, (rho, lo, hi) in {"attention norm": (-0.06, -0.32, 0.21),
                                "activation Jacobian": (-0.26, -0.44, -0.04)}.items():
        numbers.update({f"{norm}: rho": rho, f"{norm}: CI low": lo, f"{norm}: CI high": hi,
                        f"{norm}: CI over activations low": lo - 0.1, f"{norm}: CI over activations high": hi + 0.1,
                        f"{norm}: rho within activations": rho / 2, f"{norm}: within CI low": lo,
                        f"{norm}: within CI high": hi, f"{norm}: within p": 0.0657})
    v = ac.norms_values(numbers)
    assert v["ch03_rho_attn"] == "−0.06" and v["ch03_rho_attn_ci"] == "−0.32 to +0.21"
    assert v["ch03_rho_act_jac_cluster_ci"] == "−0.54 to +0.06" and v["ch03_rho_attn_within_p"] == "0.066"
    assert v["ch03_rho_param_jac"] == "none" and v["ch03_rho_param_jac_within_ci"] == "none"
    assert v["ch03_norms_runs"] == 65 and v["ch03_norms_separating"] == 0
