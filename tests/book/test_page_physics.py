"""Chapter 06's page module: planted PINNsFormer records come back out as the page's tables,
figures and glued values."""
import math
from types import SimpleNamespace

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from support.planted_records import plant  # noqa: E402

from polyattn.analysis import physics as pa  # noqa: E402
from polyattn.experiments import physics as grids  # noqa: E402
from polyattn.labels import PINN_LABEL  # noqa: E402
from polyattn.pages import physics as page  # noqa: E402
from polyattn.results import config_dict  # noqa: E402

RMAE_SPEC = [{"name": "rMAE", "higher_is_better": False, "scale": 1.0, "unit": "", "label": "relative mean absolute error"},
             {"name": "rRMSE", "higher_is_better": False, "scale": 1.0, "unit": "",
              "label": "relative root-mean-square error"}]
#: Softmax's final rMAE per problem and seed, and each variant's as a multiple of it.
SOFTMAX = {"convection": [0.02, 0.03, 0.025], "reaction": [0.01, 0.012, 0.011], "wave": [0.6, 0.7, 0.65]}
RATIO = {"x^3/sqrt(N)": 10.0, "x^3/14": 1.0, "x/sqrt(N)": 1.0, "relu/N": 1.0, "sigmoid": 1.0, PINN_LABEL: 30.0}
GRID = 5   # points per side of the stored field


def _record(cfg, rmae, attention=None, field=None):
    field = np.zeros(GRID * GRID) if field is None else field
    final = {"grid": [GRID, GRID], "prediction": list(map(float, field))}
    if attention is not None:
        final["attention"] = attention
    return {"schema": 1, "experiment": cfg.experiment, "config": config_dict(cfg), "config_hash": cfg.hash,
            "seed": cfg.seed, "preset": cfg.preset, "status": "ok", "diverged_step": None, "task": "pde",
            "seq_lens": {"seq_len": 1 if cfg.model.startswith("pinn_") else 5}, "metrics_spec": RMAE_SPEC,
            "metrics": [{"epoch": 1, "step": 1, "train_loss": 1.0, "rMAE": 1.0, "rRMSE": 1.0},
                        {"epoch": 2, "step": 2, "train_loss": 0.1, "rMAE": rmae, "rRMSE": rmae}],
            "probes": [], "provenance": {"wall_s": 10.0}, "final": final}


def _uniform(weight):
    """Stored maps [layer, head, query, key] whose rows weight every token alike."""
    return [[[[weight] * 5 for _ in range(5)] for _ in range(2)] for _ in range(2)]


def _runs(ratio=None, attention=True):
    ratio = {**RATIO, **(ratio or {})}
    configs, records = [], []
    for cfg in grids.physics("smoke", seeds=[0, 1, 2]):
        pde, label = grids.pde_of(cfg), grids.variant_label(cfg)
        err = SOFTMAX[pde][cfg.seed] * (1.0 if label == "softmax" else ratio[label])
        att = None if label == PINN_LABEL or not attention else _uniform(0.2 if label == "softmax" else 0.5)
        configs.append(cfg)
        records.append(_record(cfg, err, att))
    return page.Runs("smoke", True, "", configs, records, pa.physics_final(records))


def test_names_a_reader_reads():
    assert page.variant_name("x^3/sqrt(N)") == "x³/√N" and page.variant_name("x^3/14") == "x³/14"
    assert page.variant_name(PINN_LABEL) == PINN_LABEL
    assert page.parameters_text("convection:beta=30") == "β = 30" and page.parameters_text("reaction") == "ρ = 5"
    assert page.intro_values()["scale_ratio"] == f"{14 / math.sqrt(5):.2f}"


def test_the_error_values_count_the_failed_seeds():
    runs = _runs()
    v = page.error_values(runs)
    # the cubic at 10 times softmax's error: 0.2, 0.3, 0.25 on convection fail, 0.1 to 0.12 on reaction
    assert v["failed_convection_softmax"] == "0 of 3" and v["failed_convection_poly"] == "3 of 3"
    assert v["failed_reaction_poly"] == "2 of 3" and v["failed_wave_softmax"] == "3 of 3"
    assert v["failed_convection_pinn"] == "3 of 3" and v["budget"].startswith("63 runs")
    styled = page.error_table(runs)
    table = styled.data
    assert table["PDE"].tolist()[:2] == ["convection", ""] and not table["Variant"].str.contains("sqrt").any()
    # the caption states the setting and its departures from the published one
    assert "convection at β = 30 instead of the published parameters, preset smoke" in styled.caption


def test_the_comparison_table_recovers_a_planted_ratio_and_decides_nothing():
    runs = _runs()
    table = page.comparison_table(runs).data
    row = table[table["Variant"] == "x³/√N"].iloc[0]
    assert row["Δ log10 rMAE [95% CI]"].startswith("+1.00") and row["Error ratio"] == "10" and row["Seed pairs"] == 3
    assert "Registered result" not in table.columns and "Verdict" not in table.columns
    assert any(p.startswith("wave (softmax failed)") for p in table["PDE"])
    assert page.comparison_values(runs)["ratio_convection"] == "10"


def test_registered_rows_replace_the_pages_own_at_the_book_preset(monkeypatch):
    from polyattn.claims import report

    ids = ("convection", "ablated_convection", "ablated_reaction")
    claim = SimpleNamespace(verdict=SimpleNamespace(comparisons=[
        SimpleNamespace(comparison=SimpleNamespace(id=i), mean=m) for i, m in zip(ids, (1.11, 0.01, math.nan))]))
    monkeypatch.setattr(report, "comparison_rows", lambda v: [
        {"Difference [95% CI]": "+1.11 [+0.90, +1.30] (log10)", "Result": "did not learn", "Pairs": "3 of 3",
         "Holm p": "< 0.001", "TOST p": "1.0"},
        {"Difference [95% CI]": "+0.01 [−0.05, +0.07] (log10)", "Result": "equivalent", "Pairs": "3 of 3",
         "Holm p": "0.80", "TOST p": "0.002"},
        {"Difference [95% CI]": "no runs yet", "Result": "inconclusive", "Pairs": "0 of 3", "Holm p": "n/a",
         "TOST p": "n/a"}])
    runs = _runs()
    assert page.registered_rows(claim, "smoke") == {}
    runs.preset = "book"
    table = page.comparison_table(runs, claim).data
    row = table[table["Variant"] == "x³/√N"].iloc[0]
    assert row["Δ log10 rMAE [95% CI]"] == "+1.11 [+0.90, +1.30]" + page.MARK and row["Result"] == "did not learn"
    assert row["Holm p"] == "< 0.001" and (table["Result"] == "did not learn").sum() == 1
    # the positive control follows its problem's variants, with the register's result, or none without runs
    ablated = table[table["Variant"] == page.ABLATED]
    assert len(ablated) == 2 and ablated.index[0] == table.index[table["Variant"] == "PINN (tanh MLP)"][0] + 1
    assert ablated.iloc[0]["Result"] == "equivalent" and ablated.iloc[0]["Error ratio"] == "1.02"
    assert ablated.iloc[1]["Δ log10 rMAE [95% CI]"] == "no runs yet" and ablated.iloc[1]["Result"] == "–"
    # description rows carry no register column
    assert (table.loc[table["Variant"] == "x³/14", ["Holm p", "TOST p", "Result"]] == "").all().all()


def test_the_setting_values_name_each_reduction_from_the_published_setting():
    v = page.setting_values()
    assert (v["ff_book"], v["mlp_book"], v["ff_paper"], v["mlp_paper"]) == ("64", "128", "256", "512")
    assert v["grid_book"] == "31 × 31" and v["grid_paper"] == "51 × 51" and v["pinn_grid_paper"] == "101 × 101"
    assert v["steps_book"] == "160, 80 and 20" and v["steps_paper"] == "500, 500 and 1,000"
    assert v["eval_book"] == "2" and v["pinn_book"] == "128"


def test_the_folded_setting_is_glued_under_its_names(monkeypatch):
    from polyattn.pages import shown

    glued = {}
    monkeypatch.setattr("polyattn.book.deliver.glue", lambda name, value, display=True: glued.update({name: value}))
    names = page.fold_setting(_runs(), prefix="t")
    assert names == [f"t_{n}" for n in page.SETTING_FOLDS] and set(glued) == set(names)
    assert "x³/√N" in glued["t_variants"].data and "β = 50" in glued["t_problems"].to_html()
    fig = page.curve_figure(_runs())
    shown.fold("t_fig", fig)
    assert glued["t_fig"] is fig and not matplotlib.pyplot.fignum_exists(fig.number)
    shown.fold("t_none", None)
    assert glued["t_none"].data == shown.NOTHING


def test_claim_comparison_reads_one_comparison_of_a_claim(monkeypatch):
    from polyattn.claims import report

    result = SimpleNamespace(comparison=SimpleNamespace(id="convection"), mean=math.log10(2.0))
    delivered = SimpleNamespace(verdict=SimpleNamespace(comparisons=[result], claim=SimpleNamespace(id="x")))
    monkeypatch.setattr(report, "comparison_rows", lambda v: [{"Difference [95% CI]": "+0.30 [−0.5, +1.1] (log10)",
                                                                  "Result": "inconclusive", "Pairs": "3 of 3"}])
    v = page.claim_comparison(delivered, "convection")
    assert v == {"difference": "+0.30 [−0.5, +1.1]", "pairs": "3 of 3", "ratio": "2", "result": "inconclusive"}
    with pytest.raises(ValueError, match="no comparison"):
        page.claim_comparison(delivered, "wave")


def test_uniform_attention_shows_as_its_row_sums():
    runs = _runs()
    rows = page.attention_rows(runs).set_index("variant")
    assert rows.loc["softmax", "row_spread"] == pytest.approx(0.0)
    assert rows.loc["softmax", "sum_min"] == pytest.approx(1.0) and rows.loc["x^3/sqrt(N)", "sum_max"] == pytest.approx(2.5)
    assert PINN_LABEL not in rows.index and rows.loc["softmax", "maps"] == 3 * 3 * 2 * 2
    v = page.attention_values(runs)
    assert v["sums_poly"] == "2.5 to 2.5" and v["row_spread"] == "0"
    # a row that weights one key more shows its spread
    runs.records[0]["final"]["attention"][0][0][0][1] = 0.7
    assert page.attention_rows(runs)["row_spread"].max() == pytest.approx(0.5)


def test_the_error_fields_share_a_log_scale_that_keeps_a_small_error_visible():
    from matplotlib.colors import LogNorm

    runs = _runs()
    for r in runs.records:           # a prediction off the reference by its rMAE-sized constant
        spec = r["config"]["dataset"]
        ref, _ = page.reference(spec, GRID)
        r["final"]["prediction"] = list((ref + r["metrics"][-1]["rMAE"]).ravel())
    fig = page.field_figure(runs)
    images = [im for ax in fig.axes for im in ax.get_images() if isinstance(im.norm, LogNorm)]
    assert len(images) == 2 * 3
    top = max(float(np.max(im.get_array())) for im in images)
    assert images[0].norm.vmax == pytest.approx(top) and images[0].norm.vmin == pytest.approx(top * 1e-4)
    # softmax's convection error (0.025, the first panel) sits well inside the scale, where a linear
    # scale up to the largest error (the cubic's 6.5 on the wave) would leave it at the black end
    small = float(np.max(images[0].get_array()))
    assert images[0].norm(small) > 0.3 and small / top < 0.005
    assert all(ax.title.get_fontsize() >= page.FONT for ax in fig.axes if ax.get_title())
    matplotlib.pyplot.close(fig)


def test_the_curves_draw_only_the_chosen_variants():
    fig = page.curve_figure(_runs())
    labels = [t.get_text() for t in fig.axes[2].get_legend().get_texts()]
    assert labels == ["softmax", "x³/√N", "x³/14", PINN_LABEL]
    assert all(t.get_fontsize() >= page.FONT for t in fig.axes[2].get_legend().get_texts())
    matplotlib.pyplot.close(fig)


def _plant_budget(root, planted_grid, short, long, short_steps=8, long_steps=20):
    """Convection runs of the two grids: per variant, one rMAE curve per seed (one value per step)."""
    configs = {"physics": [], "physics_long": []}
    for grid, curves, steps in (("physics", short, short_steps), ("physics_long", long, long_steps)):
        for label, per_seed in curves.items():
            for seed, curve in enumerate(per_seed):
                cfg = grids.config_for("smoke", "convection", label, seed, steps=steps).replace(experiment=grid)
                metrics = [{"epoch": i + 1, "step": i + 1, "train_loss": 1.0, "rMAE": e, "rRMSE": e}
                           for i, e in enumerate(curve)]
                plant(root, cfg, metrics, metrics_spec=RMAE_SPEC, task="pde", seq_lens={"seq_len": 5},
                      provenance={"git_commit": "x", "git_dirty": False, "wall_s": 1.0,
                                  "started": "2026-01-01T00:00:00+00:00",
                                  "hardware": {"cpu": "CPU " + grid}})
                configs[grid].append(cfg)
    for grid, cfgs in configs.items():
        planted_grid(grid, cfgs)


def test_the_budget_table_shows_a_failure_that_more_steps_remove(tmp_path, planted_grid):
    fast, slow, never = [1.0, 0.5, 0.05, 0.02], [1.0, 0.9, 0.8, 0.6], [1.0, 0.9, 0.9, 0.9]
    _plant_budget(tmp_path, planted_grid,
                  short={"softmax": [fast, fast], "x^3/sqrt(N)": [slow, never]},
                  long={"softmax": [fast + [0.02] * 16, fast + [0.02] * 16],           # below 0.1 from step 3
                        "x^3/sqrt(N)": [slow + [0.5] * 5 + [0.05] * 11,               # from step 10
                                        slow + [0.5] * 7 + [0.04] * 9]})              # from step 12
    budget = page.budget_runs(tmp_path)
    summary = page.budget_summary(budget).set_index(["grid", "variant"])
    assert summary.loc[("physics", "x^3/sqrt(N)"), "failed"] == 2
    assert summary.loc[("physics", "x^3/sqrt(N)"), "first_below"] == "never"
    assert summary.loc[("physics_long", "x^3/sqrt(N)"), "failed"] == 0
    assert summary.loc[("physics_long", "x^3/sqrt(N)"), "first_below"] == "11 [10, 12]"
    assert summary.loc[("physics_long", "softmax"), "by_short"] == 2
    v = page.budget_values(budget)
    assert (v["short_steps"], v["long_seeds"]) == ("8", "2")
    assert (v["failed_short_poly"], v["failed_long_poly"], v["failed_short_softmax"]) == ("2 of 2", "0 of 2", "0 of 2")
    assert v["first_long_softmax"] == "3 [3, 3]" and v["by_short_long_poly"] == "0 of 2"
    assert (v["cpu_short"], v["cpu_long"]) == ("CPU physics", "CPU physics_long")
    table = page.budget_table(budget).data
    assert list(table["L-BFGS steps"]) == [8, 8, 20, 20] and "x³/√N" in set(table["Variant"])
    fig = page.budget_figure(budget)
    assert [ax.get_title() for ax in fig.axes] == ["book grid, 8 steps", "longer grid, 20 steps"]
    assert all(t.get_fontsize() >= page.FONT for ax in fig.axes for t in ax.get_legend().get_texts())
    matplotlib.pyplot.close(fig)


def test_no_stored_budget_says_so(tmp_path, planted_grid):
    planted_grid("physics", [])
    planted_grid("physics_long", [])
    budget = page.budget_runs(tmp_path)
    assert budget.empty and page.budget_figure(budget) is None
    assert page.budget_table(budget).data.startswith("No run")
    assert page.budget_values(budget)["failed_long_poly"] == "not stored"


def test_the_scope_is_the_measures_own():
    runs = _runs()
    assert "convection at β = 30 instead of the published parameters" in page.scope(runs)
    assert page.scope(runs).endswith("preset smoke")


def test_a_page_without_runs_says_so():
    runs = page.Runs("paper", False, "not run under preset paper", grids.physics("book"))
    assert page.error_table(runs).data == "not run under preset paper"
    assert page.comparison_table(runs).data == "not run under preset paper"
    assert page.field_figure(runs) is None and page.curve_figure(runs) is None
    assert page.error_values(runs)["failed_wave_poly"] == "not run under preset paper"
    assert page.grid_values(runs)["seeds_main"] == "5" and page.problem_specs(runs)["convection"] == "convection:beta=30"


def test_the_measured_claims_numbers_are_glued_by_name():
    numbers = {"problems where softmax is seed-sensitive": 1, "problems checked": 3,
               "other activation cases seed-sensitive": 4, "other activation cases": 15}
    assert page.seed_values(numbers) == {"sensitive": "1", "checked": "3", "others": "4", "other_cases": "15"}
    assert page.seed_values({})["checked"] == "not stored"


def test_the_problems_and_the_setting_as_a_reader_reads_them():
    runs = _runs()
    v = page.problem_values(runs)
    assert (v["beta"], v["beta_published"]) == ("30", "50") and v["crossings"] == f"{30 / (2 * math.pi):.1f}"
    assert v["beta_note"].startswith("not the published speed")
    first, _ = page.problem_tables(runs)
    assert first.data["parameters"].tolist() == ["β = 30", "ρ = 5", "c = 2"]
    fig = page.solution_figure(runs)
    titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
    assert titles == ["convection (β = 30)", "reaction (ρ = 5)", "wave (c = 2)"]
    matplotlib.pyplot.close(fig)
    variants = page.variants_table(runs).data
    assert "| x³/√N |" in variants and "x^3/sqrt" not in variants and f"| {PINN_LABEL} | no attention | 3 |" in variants
    models, problems = (t.data for t in page.setting_tables())
    assert set(models["preset"]) == {"book", "paper"}
    params = dict(zip(zip(problems["PDE"], problems["preset"]), problems["parameters"]))
    assert params[("convection", "book")] == "β = 30" and params[("convection", "paper")] == "β = 50"
    assert not problems["L-BFGS steps × iterations"].str.contains(" x ").any()
    probes = page.probes_table().data
    assert not probes["Model"].str.contains(r"\^|sqrt").any() and probes["PDE"].str.contains("β").any()
    assert page.field_values(runs) == {"field_grid": f"{GRID} × {GRID}"}
    judging = page.judging_values()
    assert (judging["margin"], judging["margin_factor"], judging["fail"]) == ("0.301", "2", "0.1")
    # the published errors the threshold is set against, in the judging rules' text
    assert (judging["pub_former"], judging["pub_pinn"], judging["pub_wave"]) == ("0.023 and 0.015", "0.78 and 0.98",
                                                                                 "0.27")


def test_the_first_runs_at_the_published_speed(tmp_path):
    for cfg, err in zip(grids.published_speed_runs(), (0.9, 0.05)):
        plant(tmp_path, cfg, [{"epoch": 1, "step": 1, "train_loss": 0.5, "rMAE": err, "rRMSE": err}],
              metrics_spec=RMAE_SPEC, task="pde", seq_lens={"seq_len": 5})
    v = page.published_speed_values(tmp_path)
    assert (v["softmax"], v["pinn"], v["failed"], v["steps"]) == ("0.900", "0.050", "1 of 2", "80")
    table = page.published_speed_table(tmp_path).data
    assert table["Above the failure threshold"].tolist() == ["yes", "no"]
    empty = tmp_path / "empty"
    assert page.published_speed_values(empty)["softmax"] == "not stored"
    assert page.published_speed_table(empty).data.startswith("Their records")
