"""Chapter 10's tables on synthetic records of the architectures grid: planted differences come back out."""
from __future__ import annotations

import pytest
from support.ci import require_module

from polyattn.analysis import architectures as arch
from polyattn.analysis import comparison_verdict
from polyattn.experiments.architectures import table2
from polyattn.results import config_dict
from polyattn.tasks.base import ACCURACY, TEST_LOSS

require_module("timm", "pip install timm==1.0.29, as in requirements.txt")

NOISE = {0: 0.0, 1: 0.004, 2: -0.004}     # shared by every variant of a seed: cancels in the pairs


def make_record(cfg, acc, status="ok"):
    metrics = [{"epoch": 1, "step": 10, "train_loss": 1.0, "train_acc": acc, "test_loss": 1.0, "test_acc": acc,
                "lr": 1e-3, "wall_s": 5.0}]
    return {"schema": 1, "experiment": cfg.experiment, "config": config_dict(cfg), "config_hash": cfg.hash,
            "seed": cfg.seed, "preset": cfg.preset, "status": status, "diverged_step": None, "task": "images",
            "seq_lens": cfg.seq_lens, "metrics_spec": [m.as_dict() for m in (ACCURACY, TEST_LOSS)],
            "metrics": metrics, "probes": [], "n_params": 1000,
            "provenance": {"git_commit": "abc", "git_dirty": False, "wall_s": 5.0}}


def planted(diff, base=0.7):
    """Records of the smoke grid with 3 seeds; ``diff[(architecture, variant)]`` is the variant's
    accuracy minus softmax's (a fraction), plus a per-seed jitter of +-0.0005 so the pairs vary."""
    recs = []
    for cfg in table2("smoke", seeds=[0, 1, 2]):
        a, v = arch.architecture_of(cfg), arch.variant_label(cfg)
        jitter = 0.0 if v == arch.SOFTMAX else 0.0005 * (cfg.seed - 1)
        recs.append(make_record(cfg, base + NOISE[cfg.seed] + diff.get((a, v), 0.0) + jitter))
    return recs


def test_final_frame_names_architecture_variant_and_n():
    final = arch.architecture_final(planted({}))
    assert len(final) == 39
    assert list(dict.fromkeys(final["architecture"])) == ["vit", "deit", "swin", "xcit"]
    assert set(final.loc[final["architecture"] == "xcit", "variant"]) == set(arch.VARIANTS)
    assert arch.TOKENS not in set(final.loc[final["architecture"] != "xcit", "variant"])
    xcit = final[final["architecture"] == "xcit"].set_index("variant")
    assert xcit.loc[arch.TOKENS, "seq_len"].iloc[0] == 64 and xcit.loc[arch.OWN, "seq_len"].iloc[0] == 16
    assert set(xcit.loc[arch.TOKENS, "n_rule"]) == {"tokens"}
    assert set(final.loc[final["architecture"] == "swin", "seq_len"]) == {16}
    assert set(final.loc[final["architecture"] == "swin", "tokens"]) == {256}


def test_variant_label_refuses_what_the_grid_does_not_run():
    cfg = table2("smoke")[0]
    assert arch.variant_label(cfg.replace(activation="poly:p=3,c=2/28")) == arch.FIXED
    with pytest.raises(ValueError, match="not a variant of the architectures grid"):
        arch.variant_label(cfg.replace(activation="relu_n"))


def test_differences_from_softmax_come_back_with_holm_over_the_table():
    diff = {("swin", arch.FIXED): -0.05, ("vit", arch.OWN): 0.02, ("xcit", arch.TOKENS): 0.01}
    final = arch.architecture_final(planted(diff))
    summary = arch.accuracy_summary(final).set_index(["architecture", "variant"])
    assert summary.loc[("swin", arch.SOFTMAX), "mean"] == pytest.approx(70.0)
    assert summary.loc[("swin", arch.FIXED), "rank"] == 3 and summary.loc[("vit", arch.OWN), "rank"] == 1
    d = arch.vs_softmax(final, margin=1.0).set_index(["architecture", "variant"])
    assert len(d) == 9 and set(d["family_size"]) == {9}
    assert d.loc[("swin", arch.FIXED), "mean_diff"] == pytest.approx(-5.0)
    assert d.loc[("vit", arch.OWN), "mean_diff"] == pytest.approx(2.0)
    assert d.loc[("xcit", arch.TOKENS), "mean_diff"] == pytest.approx(1.0)
    assert (d["p_holm"] >= d["t_p"] - 1e-12).all()
    forms = {k: comparison_verdict(r).form for k, r in d.iterrows()}
    assert forms[("swin", arch.FIXED)] == "worse" and forms[("vit", arch.OWN)] == "better"
    assert forms[("deit", arch.OWN)] == "equivalent"


def test_pooling_over_architectures():
    # every architecture within the margin
    final = arch.architecture_final(planted({}))
    pooled = arch.pooled_vs_softmax(final, margin=1.0)
    assert list(pooled["variant"]) == [arch.OWN, arch.FIXED]        # N = tokens is XCiT's alone: not pooled
    assert set(pooled["n_cells"]) == {4} and set(pooled["n_pairs"]) == {12}
    # x^3/14 better on two architectures and worse on two: the pooled difference is 0, and the
    # cells' disagreement is detected
    diff = {("vit", arch.FIXED): 0.04, ("deit", arch.FIXED): 0.04, ("swin", arch.FIXED): -0.04,
            ("xcit", arch.FIXED): -0.04}
    final = arch.architecture_final(planted(diff))
    pooled = arch.pooled_vs_softmax(final, margin=1.0).set_index("variant")
    assert pooled.loc[arch.FIXED, "mean_diff"] == pytest.approx(0.0, abs=1e-9)
    assert pooled.loc[arch.FIXED, "heterogeneity_p"] < 0.05
    # one architecture without x^3/14: only x^3/sqrt(N) is pooled
    assert arch.common_variants(final[~((final["architecture"] == "vit") & (final["variant"] == arch.FIXED))]) == \
        [arch.OWN]


def test_readings_of_n_against_each_architectures_own():
    diff = {("swin", arch.FIXED): -0.03, ("xcit", arch.OWN): 0.01, ("xcit", arch.TOKENS): 0.03}
    r = arch.n_readings(arch.architecture_final(planted(diff)), margin=1.0).set_index(["architecture", "variant"])
    assert len(r) == 5 and set(r["baseline"]) == {arch.OWN}
    assert r.loc[("swin", arch.FIXED), "mean_diff"] == pytest.approx(-3.0)
    assert r.loc[("xcit", arch.TOKENS), "mean_diff"] == pytest.approx(2.0)
    assert r.loc[("xcit", arch.FIXED), "mean_diff"] == pytest.approx(-1.0)


def test_paper_recipe_table_reads_each_architecture_from_the_paper_grid():
    recipe = arch.paper_recipe_table(table2("paper")).set_index("architecture")
    assert list(recipe.index) == ["vit", "deit", "swin", "xcit"]
    assert recipe.loc["swin", "timm model"] == "swin_tiny_patch4_window7_224" and recipe.loc["swin", "N"] == 49


def test_accuracy_table_shows_each_variant_against_its_architectures_softmax():
    final = arch.architecture_final(planted({("swin", arch.FIXED): -0.05}))
    table = arch.accuracy_table(arch.accuracy_summary(final), analysis_verdicts(arch.vs_softmax(final, margin=1.0)),
                                final).set_index(["architecture", "variant"])
    assert len(table) == 13 and table.loc[("swin", arch.SOFTMAX), "minus softmax (points)"] == "baseline"
    assert table.loc[("swin", arch.FIXED), "minus softmax (points)"] == "−5.00"
    assert table.loc[("swin", arch.FIXED), "verdict"] == "worse" and table.loc[("swin", arch.FIXED), "N"] == 16
    assert table.loc[("xcit", arch.TOKENS), "N"] == 64 and table.loc[("vit", arch.SOFTMAX), "seeds"] == 3


def analysis_verdicts(diffs):
    from polyattn.analysis import verdict_frame

    return verdict_frame(diffs)
