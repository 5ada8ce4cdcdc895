"""The short retrainings' end-of-run measurements: what a run asks for, what its record stores,
and that chapter 09's readers give back what the model itself shows."""
import json

import numpy as np
import pytest
import torch

from polyattn import attention_maps as am
from polyattn import model_checks
from polyattn.analysis import critiques as cr
from polyattn.analysis.critiques import mean_attention_distance, negative_mass_share
from polyattn.config import TrainConfig
from polyattn.data import load_dataset
from polyattn.experiments import GRIDS, short_retrain, vit
from polyattn.tasks import get_task
from polyattn.train import fit

torch.set_num_threads(1)

SPEC = {"gradients": 8, "outliers": [1, 10], "maps": 2, "layers": [0, -1]}


def _cfg(**measure):
    return vit.attention_map_config("poly:p=3", "smoke").replace(
        experiment="unit_short_retrain", train_subset=64, test_subset=32, batch_size=32, threads=1,
        options={"measure": {**SPEC, **measure}})


# --- what a config may ask for ---------------------------------------------------------------

def test_check_measure_accepts_the_grid_and_refuses_what_cannot_run():
    assert am.check_measure(TrainConfig()) == {}
    assert am.check_measure(_cfg()) == SPEC
    for cfg in short_retrain.short_retrain("book") + short_retrain.short_retrain("smoke"):
        assert am.check_measure(cfg)
    bad = [({"gradient": 8}, "unknown measurement"), ({"gradients": 0}, "positive number"),
           ({"maps": 1.5}, "positive number"), ({"outliers": [10, 30]}, "including 1"),
           ({"outliers": []}, "including 1"), ({"layers": "last"}, "layer indices")]
    for extra, message in bad:
        with pytest.raises(ValueError, match=message):
            am.check_measure(_cfg(**extra))
    with pytest.raises(ValueError, match="book ViT pooled by CLS"):
        am.check_measure(_cfg().replace(pool="mean"))
    with pytest.raises(ValueError, match="book ViT pooled by CLS"):
        am.check_measure(_cfg().replace(model="timm:vit_tiny_patch16_224"))


def test_a_bad_measurement_is_refused_before_training():
    with pytest.raises(ValueError, match="unknown measurement"):
        fit(_cfg(saliency=3), progress=False, resume=False)


def test_centre_token_is_the_middle_patch_after_cls():
    assert am.centre_token(7) == 1 + 3 * 7 + 3 == 25
    assert am.centre_token(4) == 1 + 2 * 4 + 2
    assert am.centre_token(3, n_prefix=0) == 4


# --- the grid ---------------------------------------------------------------------------------

def test_grid_is_the_attention_map_recipe_with_measurements_one_seed_per_activation():
    assert GRIDS["critique_short_retrain"] is short_retrain.short_retrain
    for preset in ("smoke", "book"):
        grid = short_retrain.short_retrain(preset)
        assert [c.activation for c in grid] == list(short_retrain.SHORT_RETRAIN_ACTIVATIONS)
        assert {c.seed for c in grid} == {0} and len({c.hash for c in grid}) == len(grid)
        for c in grid:
            base = vit.attention_map_config(c.activation, preset)
            assert c.replace(experiment=base.experiment, options={}) == base
            assert c.experiment == "critique_short_retrain"
            assert c.options == {"measure": short_retrain.SHORT_RETRAIN_MEASURE[preset]}
    book = short_retrain.short_retrain("book")[0]
    assert (book.train_subset, book.test_subset, book.epochs, book.batch_size) == (2000, 500, 2, 32)
    assert book.options["measure"]["gradients"] == 128
    assert set(short_retrain.MAP_ACTIVATIONS) <= set(short_retrain.SHORT_RETRAIN_ACTIVATIONS)
    assert set(vit.NORM_ACTIVATIONS) <= set(short_retrain.SHORT_RETRAIN_ACTIVATIONS)
    assert short_retrain.short_retrain("paper") == vit.paper_configs()


# --- what a run stores, read back -------------------------------------------------------------

@pytest.fixture(scope="module")
def trained():
    cfg = _cfg()
    rec = fit(cfg, progress=False, resume=False, return_model=True)
    model = rec.pop("model")
    return cfg, json.loads(json.dumps(rec, default=str)), model


@pytest.mark.slow
def test_record_stores_the_measurements_of_the_trained_and_the_initial_model(trained):
    cfg, rec, model = trained
    final = rec["final"]
    assert set(final) == {"gradients", "outliers", "maps"}
    data = load_dataset(cfg.dataset, cfg.train_subset, cfg.test_subset)
    x, y = data.normalise(data.test_x), data.test_y
    # gradients: the trained model's and the initial model's, on the first 8 test images
    g = cr.short_gradients([rec])
    assert set(g["state"]) == {"initialisation", "trained"} and g["layer"].nunique() == len(model.blocks)
    assert final["gradients"]["n_images"] == 8
    direct = model_checks.activation_gradients(model, x[:8], y[:8])
    stored = g[g["state"] == "trained"].sort_values("layer")
    np.testing.assert_allclose(stored["grad_scores_fro"], direct["grad_scores_fro"], rtol=1e-5)
    init = model_checks.activation_gradients(model_checks.initial_model(cfg, data, get_task(cfg.task)), x[:8], y[:8])
    np.testing.assert_allclose(g[g["state"] == "initialisation"].sort_values("layer")["act_jac_fro"],
                               init["act_jac_fro"], rtol=1e-5)
    # outliers: the centre patch, every place, the factors asked for, per-image correctness
    table, correct = cr.short_outliers([rec])
    assert final["outliers"]["token"] == 25 and final["outliers"]["layers"] == [0, 3]
    assert set(table["where"]) == set(model_checks.WHERE) and set(table["factor"]) == {1.0, 10.0}
    assert len(table) == len(model_checks.WHERE) * 2 * 2
    res = model_checks.outlier_sweep(model, x, y, 25, [1, 10], "scores", layers=[0, -1])
    ok = correct[("poly:p=3", "scores")]
    assert set(ok) == {1.0, 10.0} and ok[10.0].dtype == bool and len(ok[10.0]) == cfg.test_subset
    np.testing.assert_array_equal(ok[10.0], res.correct[10.0])
    clean = table[(table["where"] == "scores") & (table["factor"] == 1.0) & (table["layer"] == 0)]
    assert float(clean["accuracy"].iloc[0]) == pytest.approx(100 * ok[1.0].mean())
    assert float(clean["accuracy"].iloc[0]) == pytest.approx(100 * rec["metrics"][-1]["test_acc"])
    # maps: CLS weights of the first two images, first and last layer; statistics over all images
    maps = cr.short_maps([rec])["poly:p=3"]
    assert maps["cls"].shape == (2, 2, 4, 7, 7) and maps["layers"] == [0, 3] and maps["n_test"] == cfg.test_subset
    last = am.cls_attention(model, x[:2], layer=3).numpy()
    np.testing.assert_allclose(maps["cls"][1], last, rtol=1e-6, atol=1e-9)
    w = model_checks.attention_weights(model, x, [0, -1])
    np.testing.assert_allclose(maps["negative_mass_share"], negative_mass_share(w, dims=[1, 2, 3, 4]), rtol=1e-9)
    np.testing.assert_allclose(maps["attention_distance"], mean_attention_distance(w, 7).mean(1), rtol=1e-9)
    assert cr.short_accuracy([rec]) == {"poly:p=3": pytest.approx(100 * rec["metrics"][-1]["test_acc"])}


@pytest.mark.slow
def test_book_sized_record_stays_small(trained):
    # the book grid's measurements on 500 test images; the record (no weights) stays well under 200 KB
    cfg = vit.attention_map_config("softmax", "smoke").replace(
        experiment="unit_short_retrain", train_subset=64, test_subset=500, batch_size=32, threads=1,
        options={"measure": short_retrain.SHORT_RETRAIN_MEASURE["book"]})
    rec = fit(cfg, progress=False, resume=False)
    assert len(rec["final"]["outliers"]["correct"]["scores"][0]) == 500
    assert len(json.dumps(rec, indent=1, sort_keys=True, default=str)) < 200_000
    assert not any(isinstance(v, torch.Tensor) for v in rec.values())


def test_readers_skip_diverged_runs_and_an_images_run_without_measurements_stores_none():
    diverged = {"status": "diverged", "config": {"activation": "poly:p=7"}, "metrics": [], "final": None}
    assert cr.short_gradients([diverged]).empty
    table, correct = cr.short_outliers([diverged])
    assert table.empty and correct == {}
    assert cr.short_maps([diverged]) == {}
    assert np.isnan(cr.short_accuracy([diverged])["poly:p=7"])
    assert get_task("images").summarise(None, TrainConfig(), None, "cpu") == {}
