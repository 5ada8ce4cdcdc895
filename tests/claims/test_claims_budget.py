"""A claim on a longer grid read beside the same comparisons on a shorter grid."""
import pytest
from support.planted_records import plant

from polyattn.claims.budget import budget_pairs, budget_rows, budget_summary, change, on_grid
from polyattn.claims.evaluate import evaluate
from polyattn.claims.spec import Arm, Comparison, RegisteredClaim
from polyattn.config import TrainConfig

SHORT = {"softmax": [0.80, 0.81, 0.79], "poly:p=3": [0.60, 0.62, 0.61], "poly:p=3,c=1": [0.70, 0.71, 0.69]}
LONG = {"softmax": [0.85, 0.86, 0.84], "poly:p=3": [0.851, 0.858, 0.842], "poly:p=3,c=1": [0.75, 0.76, 0.74]}
# a decoy under another reading of N in the shorter grid: narrowing by n_mode must leave it out
DECOY = {"poly:p=3": [0.10, 0.10, 0.10], "softmax": [0.10, 0.10, 0.10]}


@pytest.fixture
def grids(tmp_path, monkeypatch):
    from polyattn import experiments

    made = {"unit_short": [], "unit_long": []}
    for grid, accs, mode in (("unit_short", SHORT, "row"), ("unit_short", DECOY, "fixed"), ("unit_long", LONG, "row")):
        for act, vals in accs.items():
            for s, a in enumerate(vals):
                cfg = TrainConfig(experiment=grid, activation=act, seed=s, preset="book", n_mode=mode)
                made[grid].append(plant(tmp_path, cfg, [{"epoch": 1, "test_acc": a}]))
    for grid, configs in made.items():
        monkeypatch.setitem(experiments.GRIDS, grid, lambda preset, seeds, c=configs: list(c))
    return tmp_path


def _cmp(cid, cand):
    return Comparison(cid, f"{cand} − softmax (longer)", Arm("unit_long", {"activation": cand}),
                      Arm("unit_long", {"activation": "softmax"}), "equivalent")


def _claim():
    return RegisteredClaim("unit_long", "u", "t", "05_lra", margin=2.0,
                           comparisons=(_cmp("cube", "poly:p=3"), _cmp("plain", "poly:p=3,c=1"),
                                        _cmp("absent", "sigmoid")))


def test_on_grid_moves_both_arms_and_narrows_them():
    c = on_grid(_cmp("cube", "poly:p=3"), "unit_short", n_mode="row")
    assert c.candidate == Arm("unit_short", {"activation": "poly:p=3", "n_mode": "row"})
    assert c.baseline == Arm("unit_short", {"activation": "softmax", "n_mode": "row"})
    assert c.id == "cube" and c.expect == "equivalent"


def test_a_gap_that_closes_one_that_holds_and_one_not_run(grids):
    v = evaluate(_claim(), root=grids, preset="book")
    pairs = budget_pairs(v, "unit_short", root=grids, n_mode="row")
    by = {p.longer.comparison.id: p for p in pairs}
    assert by["cube"].shorter.mean == pytest.approx(-19.0, abs=0.01)      # the decoy at 10% is left out
    assert by["cube"].shorter.n == 3 and by["cube"].longer.result == "equivalent"
    assert [change(by[k]) for k in ("cube", "plain", "absent")] == ["closes", "holds", "not run yet"]
    # the longer run's verdict is the register's own: the shorter grid adds numbers, not a verdict
    assert by["plain"].longer is v.comparisons[1]


def test_the_table_names_both_budgets_and_the_summary_counts_the_changes(grids):
    v = evaluate(_claim(), root=grids, preset="book")
    pairs = budget_pairs(v, "unit_short", root=grids, n_mode="row")
    rows = {r["Comparison"]: r for r in budget_rows(pairs, "100 steps", "500 steps")}
    cube = rows["poly:p=3 − softmax"]                   # the longer grid's tag is dropped
    assert cube["100 steps"].startswith("−19.00 [") and cube["100 steps"].endswith("] points (3 pairs)")
    assert cube["100 steps: means"] == "61.0% / 80.0%"
    assert cube["Result (longer)"] == "equivalent" and cube["The gap"] == "closes"
    assert rows["poly:p=3,c=1 − softmax"]["The gap"] == "holds"
    assert rows["sigmoid − softmax"]["500 steps"] == "0 of 0 pairs stored"
    assert budget_summary(pairs) == ("With more training, in 1 of 3 the gap holds; in 1 of 3 it closes to within "
                                     "the margin; in 1 of 3 the longer runs are not stored yet.")
    assert "chance" not in rows["poly:p=3 − softmax"]


def test_the_table_gives_the_chance_level_of_each_comparisons_task(tmp_path, monkeypatch):
    from polyattn import experiments

    made = []
    for task, vals in (("retrieval", (0.50, 0.51, 0.50)), ("listops", (0.31, 0.32, 0.30))):
        for act in ("softmax", "poly:p=3"):
            for s, a in enumerate(vals):
                cfg = TrainConfig(experiment="unit_long", activation=act, seed=s, preset="book", dataset=task)
                made.append(plant(tmp_path, cfg, [{"epoch": 1, "test_acc": a}]))
    monkeypatch.setitem(experiments.GRIDS, "unit_long", lambda preset, seeds: list(made))
    claim = RegisteredClaim("unit_long", "u", "t", "05_lra", margin=2.0, comparisons=tuple(
        Comparison(t, f"x³ − softmax, {t} (longer)", Arm("unit_long", {"activation": "poly:p=3", "dataset": t}),
                   Arm("unit_long", {"activation": "softmax", "dataset": t}), "equivalent")
        for t in ("retrieval", "listops", "image")))
    pairs = budget_pairs(evaluate(claim, root=tmp_path, preset="book"), "unit_long", root=tmp_path)
    rows = budget_rows(pairs, "short", "long", chance={"retrieval": 50.0, "listops": 15.8})
    assert [r["chance"] for r in rows] == ["50.0%", "15.8%", ""]     # a task without a level stays blank
    assert list(rows[0]).index("chance") == list(rows[0]).index("long: means") + 1


def test_the_readme_finding_sets_each_longer_lra_comparison_beside_the_book_steps(tmp_path, monkeypatch):
    from polyattn import experiments
    from polyattn.book.answer import _lra_longer

    made = {"lra": [], "lra_long": []}
    for grid, accs in (("lra", SHORT), ("lra_long", LONG)):
        for act, vals in accs.items():
            for s, a in enumerate(vals):
                cfg = TrainConfig(experiment=grid, activation=act, seed=s, preset="book", n_mode="row",
                                  dataset="listops", epochs=5 if grid == "lra_long" else 1)
                made[grid].append(plant(tmp_path, cfg, [{"epoch": 1, "test_acc": a}]))
    for grid, configs in made.items():
        monkeypatch.setitem(experiments.GRIDS, grid, lambda preset, seeds, c=configs: list(c))
    claim = RegisteredClaim("lra_long", "u", "t", "05_lra", margin=2.0, scale="unit scale", comparisons=(
        Comparison("cube", "x³/√N − softmax, listops (longer)", Arm("lra_long", {"activation": "poly:p=3"}),
                   Arm("lra_long", {"activation": "softmax"}), "equivalent"),
        Comparison("none", "sigmoid − softmax (longer)", Arm("lra_long", {"activation": "sigmoid"}),
                   Arm("lra_long", {"activation": "softmax"}), "equivalent")))
    monkeypatch.setenv("POLYATTN_RESULTS", str(tmp_path))
    text = _lra_longer(evaluate(claim, root=tmp_path, preset="book"))
    assert text.startswith("- **Long Range Arena with more training steps")
    assert "x³/√N − softmax, listops: −19.00 [" in text and "at the book's steps, +0.03 [" in text
    assert "(3 pairs, equivalent)" in text and "sigmoid" not in text          # no pair: not listed
    assert text.endswith("(unit scale). With more training, in 1 of 1 it closes to within the margin.")
    assert _lra_longer(None) == ""
