"""Chapter 09's norm paradox on planted records: each cubic's norms against x/sqrt(N), cell by
cell, and the correlation numbers the prose glues."""
import matplotlib
import pandas as pd
from support.pages import probe_rows, table_rows
from support.records import make_record

from polyattn.studies.critiques import paradox as page

matplotlib.use("Agg")


def _paradox_records(seeds=(0, 1)):
    """The linear map at norm 1 throughout; every cubic at 0.01 at the first probe and 10 later."""
    cube = {m: (lambda s: 0.01 if s == 0 else 10.0) for m in page.NORM_LABELS}
    recs = []
    for seed in seeds:
        recs.append(make_record("poly:p=1", seed, probes=probe_rows({m: 1.0 for m in page.NORM_LABELS})))
        for act in ("poly:p=3,c=1", "poly:p=3", "poly:p=3,c=1/14"):
            recs.append(make_record(act, seed, probes=probe_rows(cube)))
    return recs


def test_the_paradox_table_gives_each_cubics_share_below_the_linear_map_at_the_first_and_later_probes():
    rows = table_rows(page.paradox_order_table(_paradox_records()))
    assert [r["activation"] for r in rows] == ["x³ (unscaled)", "x³/√N", "x³/14"]
    assert all(r["‖A‖_F"] == "100% / 0%" and r["‖∂L/∂A‖_F"] == "100% / 0%" for r in rows)
    assert rows[0]["cells"] == 8  # two seeds by two layers by two probed steps
    detailed = table_rows(page.paradox_order_table(_paradox_records(), detailed=True))
    assert len(detailed) == 3 * len(page.NORM_LABELS)
    assert detailed[0]["ratio, median (min to max)"] == "5 (0.01 to 10)"  # half the cells at 0.01, half at 10
    assert "No record" in page.paradox_order_table([]).data and page.norm_figure([], "book") is None


def test_correlation_numbers_say_which_accuracy_goes_with_a_larger_attention_norm():
    row = {"rho": -0.5, "ci_low": -0.8, "ci_high": -0.2, "cluster_ci_low": -0.9, "cluster_ci_high": 0.1,
           "within_rho": -0.3, "n": 25}
    corr = pd.DataFrame([{**row, "norm": "attn_fro_over_sqrt_n_mean", "subset": page.FAMILY_LABEL, "activations": 5},
                         {**row, "norm": "grad_attn_fro_mean", "subset": page.ALL_LABEL, "activations": 13}])
    n = page.correlation_numbers(corr)
    assert n["family_attention_rho"] == -0.5 and n["all_gradient_activations_ci_high"] == 0.1
    assert n["family_activations"] == 5 and n["family_attention_runs"] == 25
    assert n["family_attention_direction"] == "lower"
    corr.loc[0, "rho"] = 0.4
    assert page.correlation_numbers(corr)["family_attention_direction"] == "higher"
    assert page.correlation_numbers(pd.DataFrame()) == {}
