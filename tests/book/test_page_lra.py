"""Chapter 05's page module: planted LRA records, curves and comparisons come back out as the page's
tables, figures and glued values."""
import math

import matplotlib

matplotlib.use("Agg")

import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from polyattn.analysis.lra import above_chance, lra_final  # noqa: E402
from polyattn.claims.budget import BudgetPair  # noqa: E402
from polyattn.claims.evaluate import ComparisonResult  # noqa: E402
from polyattn.claims.spec import Arm, Comparison  # noqa: E402
from polyattn.experiments.lra import lra, variant_label  # noqa: E402
from polyattn.pages import lra as page  # noqa: E402
from polyattn.results import config_dict  # noqa: E402
from polyattn.tasks.base import ACCURACY, TEST_LOSS  # noqa: E402
from polyattn.tasks.lra import VAL_ACCURACY  # noqa: E402

TASKS = ("listops", "image")


def _record(cfg, accs, wall_s=10.0):
    metrics = [{"epoch": i + 1, "step": 10 * (i + 1), "train_loss": 1.0, "train_acc": a, "test_loss": 1.0,
                "test_acc": a, "val_acc": a, "lr": 1e-3, "wall_s": wall_s * (i + 1) / len(accs)}
               for i, a in enumerate(accs)]
    return {"schema": 1, "experiment": "lra", "config": config_dict(cfg), "config_hash": cfg.hash, "seed": cfg.seed,
            "preset": "smoke", "status": "ok", "diverged_step": None, "task": "lra", "seq_lens": {"seq_len": 64},
            "metrics_spec": [m.as_dict() for m in (ACCURACY, VAL_ACCURACY, TEST_LOSS)], "metrics": metrics,
            "probes": [], "n_params": 1000, "provenance": {"git_commit": "abc", "git_dirty": False, "wall_s": wall_s}}


def _runs(diff_of: dict, base=0.6, chance=None, flat=(), seeds=(0, 1, 2)) -> page.Runs:
    """Runs of ``TASKS`` at the smoke preset: softmax at ``base`` (+ noise per seed), each variant at
    softmax + its planted difference; tasks in ``flat`` keep every curve at one level."""
    noise = {0: 0.0, 1: 0.01, 2: -0.01}
    configs, records = [], []
    for s in seeds:
        for cfg in lra("smoke", seeds=[s], tasks=TASKS):
            label, task = variant_label(cfg), cfg.dataset
            acc = base + noise[s] + diff_of.get((task, label), 0.0) + (0.001 * (s - 1) if label != "softmax" else 0.0)
            configs.append(cfg)
            records.append(_record(cfg, (acc, acc) if task in flat else (0.3, acc)))
    chance = chance or {t: 0.1 for t in TASKS}
    final = lra_final(records)
    learned = above_chance(final, chance).set_index("lra_task").reindex(list(TASKS))
    return page.Runs("smoke", True, "", configs, list(TASKS), [], {}, records, final, chance, learned)


def test_names_a_reader_reads():
    assert page.variant_name("x^3/sqrt(N), N padded") == "x³/√N, N padded"
    assert page.variant_name("x^3/14") == "x³/14" and page.variant_name("softmax") == "softmax"
    assert page.names(["listops", "text", "retrieval"]) == "ListOps, Text and Retrieval"
    assert page.names(["image"]) == "Image" and page.names([]) == "none"
    assert page.plural(1, "seed") == "1 seed" and page.plural(3, "seed") == "3 seeds"


def test_learned_tasks_and_the_caption_of_a_table():
    runs = _runs({}, base=0.6, chance={"listops": 0.3, "image": 0.65})
    assert runs.informative == ["listops"] and runs.uninformative == ["image"]
    table = page.learned_table(runs).data
    assert list(table["Task"]) == ["ListOps", "Image"] and list(table["Learned"]) == ["yes", "no"]
    assert table["Chance (%)"].iloc[1] == "65.0"
    caption = runs.caption("X")
    assert caption.startswith("X; preset smoke, 3 seeds,") and "10 times the published learning rate" in caption


def test_the_comparison_table_recovers_a_planted_difference():
    runs = _runs({("listops", "x^3/14"): -0.10})
    diffs = page.differences(runs)
    assert page.family_size(diffs) == len(diffs) == len(TASKS) * (len(page.LABELS) - 1)
    table = page.comparison_table(runs, fixed_claim=None, diffs=diffs).data   # smoke: no registered rows
    row = table[(table["Task"] == "ListOps") & (table["Variant"] == "x³/14")].iloc[0]
    assert row["Minus softmax, points [95% CI]"].startswith("−10.0 [") and row["Verdict"] == "worse"
    assert not table["Variant"].str.contains("sqrt|\\^").any()


def test_the_summary_puts_each_variant_on_one_row_and_marks_tasks_not_learned():
    runs = _runs({("listops", "x^3/14"): -0.10}, chance={"listops": 0.3, "image": 0.65})
    table = page.comparison_summary(runs, fixed_claim=None).data
    assert list(table.columns) == ["Variant", "ListOps", "Image"] and len(table) == len(page.LABELS) - 1
    fixed = table.set_index("Variant").loc["x³/14"]
    assert fixed["ListOps"].startswith("−10.0 [") and fixed["ListOps"].endswith("<br>worse")
    assert fixed["Image"].endswith("°") and "MDE" not in "".join(table["Image"])


def test_registered_rows_replace_the_pages_own_at_the_book_preset(monkeypatch):
    from types import SimpleNamespace

    from polyattn.claims import report

    claim = SimpleNamespace(verdict=SimpleNamespace(comparisons=[SimpleNamespace(comparison=SimpleNamespace(id="listops"))]))
    monkeypatch.setattr(report, "comparison_rows", lambda v: [{"Difference [95% CI]": "−9.99 [−11.00, −8.98] points",
                                                                  "Holm p": "0.01", "TOST p": "1.00", "Result": "worse"}])
    assert page.registered_rows(claim, "smoke") == {}
    runs = _runs({("listops", "x^3/14"): -0.10})
    runs.preset = "book"
    table = page.comparison_table(runs, claim).data
    row = table[(table["Task"] == "ListOps") & (table["Variant"] == "x³/14")].iloc[0]
    assert row["Minus softmax, points [95% CI]"] == "−9.99 [−11.00, −8.98]" + page.MARK and row["Holm p"] == "0.01"


def test_the_readings_of_n_agree_where_every_token_is_real():
    runs = _runs({("image", "x^3/sqrt(N), N padded"): 0.001})
    assert page.readings_gap(runs) == {"tasks": "Image", "gap": "0.10"}


def test_curves_leave_out_flat_tasks_and_name_the_variants():
    runs = _runs({("listops", "x^3/14"): -0.10}, flat=("image",))
    fig, left = page.curve_figure(runs)
    assert left == "Image (flat)" and len(fig.axes) == 1 and fig.axes[0].get_title() == "ListOps"
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "x³/√N, N padded" in labels and "chance" in labels and not any("sqrt" in lbl for lbl in labels)
    assert all(t.get_fontsize() >= page.FONT for t in fig.legends[0].get_texts())
    matplotlib.pyplot.close(fig)


def test_a_table_where_the_preset_runs_nothing_says_so():
    runs = page.Runs("paper", False, "not run under preset paper", [], list(TASKS), [])
    assert page.accuracy_table(runs).data == "not run under preset paper"
    assert page.differences(runs).empty and page.curve_figure(runs) == (None, "not run under preset paper")
    assert page.length_tables(runs) == [] and page.length_figure(runs) is None


def _curve(cube, fixed_last=(0.15, 0.31, 0.32), softmax=0.32, steps=(800, 1600, 2400, 3200)):
    rows = []
    for i, step in enumerate(steps):
        for variant, mean, values in (("softmax", softmax, (softmax,) * 3), ("x^3/sqrt(N), N valid", cube[i], (cube[i],) * 3),
                                      ("x^3/14", sum(fixed_last) / 3, fixed_last)):
            rows.append({"variant": variant, "step": step, "mean": mean, "min": min(values), "max": max(values),
                         "seeds": 3, "values": values})
    return pd.DataFrame(rows)


def test_the_catch_up_of_the_cube(monkeypatch):
    monkeypatch.setattr(page, "book_chance", lambda tasks=("listops",): {t: 0.15 for t in tasks})
    v = page.catch_up_values(_curve([0.15, 0.25, 0.31, 0.315]))
    assert v["caught_up"] == "step 2,400" and v["first_step"] == "800" and v["long_steps"] == "3,200"
    assert v["first_softmax"] == "32.0%" and v["first_cube"] == "15.0%" and v["chance"] == "15.0%"
    assert v["fixed_at_chance"] == "1" and v["fixed_seeds"] == "3" and v["book_steps"] == "800"
    # a cube that comes close once and falls back has not caught up
    assert page.catch_up_values(_curve([0.15, 0.31, 0.25, 0.26]))["caught_up"] == "no step of the longer runs"
    assert page.catch_up_values(pd.DataFrame())["caught_up"] == "not stored"
    table = page.long_curve_table(_curve([0.15, 0.25, 0.31, 0.315])).data
    assert list(table.columns) == ["Variant", "step 800", "step 1,600", "step 2,400", "step 3,200"]
    assert table.iloc[2]["step 800"] == "26.0 (15.0 to 32.0)"


def _result(candidate, task, n, mean, result, cand_mean, base_mean, grid="lra_long"):
    comparison = Comparison(f"{candidate}_{task}", f"{candidate} − softmax, {task} (longer)",
                            Arm(grid, {"activation": candidate, "dataset": task}),
                            Arm(grid, {"activation": "softmax", "dataset": task}), "equivalent")
    return ComparisonResult(comparison, n, 3, 0, "points", True, cand_mean, base_mean, mean, mean - 1.0, mean + 1.0,
                            mean - 0.8, mean + 0.8, 0.5, 0.5, False, 3.0, result=result, margin=2.0)


def test_pair_values_and_the_counts_of_what_more_steps_did(monkeypatch):
    monkeypatch.setattr(page, "book_chance", lambda tasks=("listops",): {t: 0.15 for t in tasks})
    pairs = [BudgetPair(_result("poly:p=3", "listops", 3, -15.0, "worse", 16.0, 31.0, "lra"),
                        _result("poly:p=3", "listops", 3, -0.5, "equivalent", 31.5, 32.0)),
             BudgetPair(_result("poly:p=3,c=1/14", "listops", 3, -15.0, "worse", 16.0, 31.0, "lra"),
                        _result("poly:p=3,c=1/14", "listops", 3, -14.0, "worse", 17.0, 31.0)),
             BudgetPair(_result("poly:p=3", "retrieval", 3, -6.0, "worse", 51.0, 57.0, "lra"),
                        _result("poly:p=3", "retrieval", 1, math.nan, "inconclusive", 50.0, 58.0))]
    v = page.pair_values(pairs, "poly:p=3", "listops")
    assert v["short_diff"] == "−15.00 [−16.00, −14.00] points" and v["long_diff"] == "−0.50 [−1.50, +0.50] points"
    assert (v["short_candidate"], v["long_candidate"], v["long_softmax"]) == ("16.0%", "31.5%", "32.0%")
    assert v["result"] == "equivalent" and v["change"] == "closes" and v["factor"] == "5" and v["chance"] == "15.0%"
    assert page.pair_values(pairs, "poly:p=3", "retrieval")["long_diff"] == "not stored"
    assert page.budget_counts(pairs) == {"holds": "1", "closes": "1", "narrows": "0", "reverses": "0", "open": "0",
                                         "uninformative": "0", "total": "3"}


def test_pathfinder_values_name_who_left_chance():
    from polyattn.experiments.lra import pathfinder_budget

    configs = pathfinder_budget("smoke", [0])
    table = pd.DataFrame([{"model": m, "seeds": 1, "images seen": 128, "mean": acc, "ci_low": acc - 0.1,
                           "ci_high": acc + 0.1, "chance": 0.5, "learned": acc - 0.1 > 0.5, "wall_s": 1.0}
                          for m, acc in ((page.TRANSFORMER, 0.5), (page.EASY, 0.5), (page.CNN, 0.8))]).set_index("model")
    check = page.PathfinderCheck(configs, [{}] * len(configs), 0.5, table, 64)
    v = page.pathfinder_values(check)
    assert v["learned_by"] == "the CNN" and v["not_learned_by"] == "the transformer and the transformer without distractors"
    assert v["cnn"] == "80.0% (95% CI 70.0 to 90.0)" and v["cnn_learned"] == "learns"
    assert v["times_grid"] == f"{configs[0].train_subset * configs[0].epochs / 64:.1f}" and v["seeds"] == "1 seed"
    waiting = page.PathfinderCheck(configs, [], 0.5, pd.DataFrame(), 64)
    assert page.pathfinder_values(waiting)["cnn"] == "not stored" and page.pathfinder_table(waiting, "book").data == ""


@pytest.mark.parametrize("task", ["listops", "pathfinder"])
def test_the_examples_follow_the_presets_generator(task):
    runs = page.Runs("smoke", True, "", lra("smoke", seeds=[0]), list(page.TASKS), [])
    if task == "listops":
        ex = page.listops_example(runs)
        assert ex["expression"].startswith("`[") and int(ex["length"]) <= 40 and 0 <= int(ex["value"]) <= 9
    else:
        fig = page.pathfinder_figure(runs)
        assert len(fig.axes) == 4 and all(ax.title.get_fontsize() >= page.FONT for ax in fig.axes)
        matplotlib.pyplot.close(fig)
