"""What each claim rests on: experiments, data, N, training length, paired seeds and CPU-hours,
from planted records and from the committed ones."""
import pytest
from support.planted_records import plant

from polyattn.claims import scope
from polyattn.claims.evaluate import evaluate
from polyattn.claims.spec import Arm, Comparison, RegisteredClaim
from polyattn.config import TrainConfig


def _plant(root, activation, seed, *, acc=0.8, patch=4, epochs=2, steps_per_epoch=100, wall=360.0, status="ok"):
    cfg = TrainConfig(experiment="unit_scope", activation=activation, seed=seed, preset="smoke", patch_size=patch,
                      epochs=epochs)
    metrics = [{"epoch": e, "step": e * steps_per_epoch, "test_acc": acc} for e in range(1, epochs + 1)]
    if status != "ok":
        metrics = metrics[:1]
    return plant(root, cfg, metrics, status=status, wall=wall, seq_lens={"seq_len": (28 // patch) ** 2 + 1})


@pytest.fixture
def planted(tmp_path, monkeypatch, planted_grid):
    """Softmax and x^3/sqrt(N) at 5 seeds (patch 4: N = 50, 2 epochs of 100 steps, 6 minutes each);
    the unscaled cube at 4 seeds, the last diverged (patch 7: N = 17, 3 epochs, 12 minutes each)."""
    configs = [_plant(tmp_path, act, s, acc=0.80 + 0.002 * s) for act in ("softmax", "poly:p=3") for s in range(5)]
    configs += [_plant(tmp_path, "poly:p=3,c=1", s, acc=0.70, patch=7, epochs=3, wall=720.0,
                       status="ok" if s < 3 else "diverged") for s in range(4)]
    planted_grid("unit_scope", configs)
    monkeypatch.setitem(scope.GRID_TITLES, "unit_scope", "planted grid")
    return tmp_path


def _cmp(cid, cand, base, expect):
    return Comparison(cid, cid, Arm("unit_scope", {"activation": cand}), Arm("unit_scope", {"activation": base}),
                      expect)


def _claim(*comparisons):
    return RegisteredClaim("unit_scope", "a planted claim", "test", "04_vit", comparisons=tuple(comparisons),
                           margin=1.0, registered_after="planted late")


def test_the_scope_row_reads_n_steps_seeds_and_hours_from_the_records_it_pairs(planted):
    claim = _claim(_cmp("eq", "poly:p=3", "softmax", "equivalent"), _cmp("worse", "poly:p=3,c=1", "softmax", "worse"))
    verdict = evaluate(claim, root=planted, preset="smoke")
    row = scope.scope_row(verdict, root=planted, preset="smoke")
    # 5 softmax (read by both comparisons, counted once) + 5 x^3/sqrt(N) + 4 cubes, the diverged one included
    assert row["runs"] == 14
    assert row["hours"] == pytest.approx((10 * 360 + 4 * 720) / 3600)
    assert row["CPU-hours"] == "1.8"
    assert row["N"] == "17–50"
    # steps and epochs of the runs that finished (the diverged cube stopped at step 100)
    assert row["training"] == "200–300 steps (2–3 epochs)"
    # 5 pairs in the first comparison, 3 finished pairs in the second
    assert row["seeds"] == "3–5"
    assert row["experiment"] == "planted grid" and row["data"] == "Fashion-MNIST"
    assert row["verdict"] == verdict.form and row["late"]


def test_a_claim_without_stored_pairs_gets_no_row(planted):
    claim = _claim(_cmp("missing", "sigmoid", "softmax", "equivalent"))
    assert scope.scope_row(evaluate(claim, root=planted, preset="smoke"), root=planted, preset="smoke") is None


def test_the_scope_table_has_one_row_per_claim_with_runs_and_links_its_section(planted):
    with_runs = _claim(_cmp("eq", "poly:p=3", "softmax", "equivalent"))
    without = RegisteredClaim("unit_none", "no runs", "test", "05_lra",
                              comparisons=(_cmp("missing", "sigmoid", "softmax", "equivalent"),), margin=1.0)
    verdicts = {c.id: evaluate(c, root=planted, preset="smoke") for c in (with_runs, without)}
    md = scope.scope_markdown(verdicts, root=planted, preset="smoke")
    lines = md.splitlines()
    assert len(lines) == 3, md
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    assert header == ["claim", "experiment (data)", "N", "training", "CPU-hours", "verdict"]
    cells = [c.strip() for c in lines[2].strip("|").split("|")]
    # ten runs of six minutes
    assert cells[:5] == ["a planted claim", "planted grid (Fashion-MNIST)", "50", "200 steps (2 epochs); 5 seeds",
                         "1.0"]
    assert cells[5].endswith("† ({ref}`04 <claim-unit-scope>`)")
    assert "chapter 04" in scope.scope_markdown(verdicts, links=False, root=planted, preset="smoke")


def test_a_physics_style_run_whose_epoch_is_one_step_says_so():
    recs = [{"status": "ok", "config": {"epochs": 160, "optimizer": "lbfgs"},
             "metrics": [{"epoch": e, "step": e} for e in (80, 160)]}]
    assert scope._training(recs) == "160 L-BFGS steps"
    assert scope._training([{"status": "ok", "config": {"epochs": 4}, "metrics": [{"epoch": 4}]}]) == "4 epochs"


def test_every_grid_and_dataset_a_claim_reads_has_a_readers_name():
    from polyattn.claims.register import REGISTER
    from polyattn.experiments import GRIDS

    grids = {g for c in REGISTER.values() for g in c.grids}
    assert grids <= set(scope.GRID_TITLES), sorted(grids - set(scope.GRID_TITLES))
    datasets = {c.dataset for g in grids for c in GRIDS[g]("book", None)}
    assert datasets <= set(scope.DATA_NAMES), sorted(datasets - set(scope.DATA_NAMES))


@pytest.fixture(scope="module")
def committed():
    from polyattn.claims.evaluate import evaluate_all

    verdicts = evaluate_all()
    return verdicts, scope.scope_rows(verdicts)


def test_every_claim_with_stored_runs_in_the_committed_data_gets_a_row(committed):
    verdicts, rows = committed
    have = {cid for cid, v in verdicts.items() if any(r.n >= 1 for r in v.comparisons)}
    ids = [r["claim id"] for r in rows]
    assert have and have <= set(ids), sorted(have - set(ids))
    assert len(ids) == len(set(ids))
    for r in rows:
        assert r["hours"] > 0 and r["runs"] >= 2, r
        assert r["N"] != "n/a" and r["seeds"] != "n/a" and ("steps" in r["training"] or "epochs" in r["training"])


def test_the_committed_table_wraps_into_a_narrow_column(committed):
    """Each column is as narrow as its longest unbreakable word; together they fit a content column
    of about 600 pixels (roughly 8 pixels a character, plus each cell's padding)."""
    import re

    table = scope.scope_table(committed[1], links=False)
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in table.splitlines()
            if not line.startswith("| ---")]
    assert all(len(r) == 6 for r in rows)

    def words(cell):
        return re.split(r"[\s\-–/]+", re.sub(r"\$[^$]*\$", "x", cell).replace("**", ""))

    longest = [max(len(w) for r in rows for w in words(r[i])) for i in range(6)]
    assert max(longest) <= 16 and sum(longest) <= 60, longest
