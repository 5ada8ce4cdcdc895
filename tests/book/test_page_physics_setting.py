"""Chapter 06's "What runs, and what the published setting was": each reduction from the published
setting, the folded detail under its names, and the first runs at the published speed."""
import matplotlib

matplotlib.use("Agg")

from support.patching import patch_everywhere
from support.physics_runs import RMAE_SPEC, planted_runs  # noqa: E402
from support.planted_records import plant  # noqa: E402

from polyattn.experiments import physics as grids  # noqa: E402
from polyattn.labels import PINN_LABEL  # noqa: E402
from polyattn.studies.physics import curves as physics_curves
from polyattn.studies.physics import setting as page


def test_the_setting_values_name_each_reduction_from_the_published_setting():
    v = page.setting_values()
    assert (v["ff_book"], v["mlp_book"], v["ff_paper"], v["mlp_paper"]) == ("64", "128", "256", "512")
    assert v["grid_book"] == "31 × 31" and v["grid_paper"] == "51 × 51" and v["pinn_grid_paper"] == "101 × 101"
    assert v["steps_book"] == "160, 80 and 20" and v["steps_paper"] == "500, 500 and 1,000"
    assert v["eval_book"] == "2" and v["pinn_book"] == "128"


def test_the_folded_setting_is_glued_under_its_names(monkeypatch):
    from polyattn.pages import shown

    glued = {}
    from polyattn.book import deliver

    patch_everywhere(monkeypatch, deliver, "glue", lambda name, value, display=True: glued.update({name: value}))
    names = page.fold_setting(planted_runs(), prefix="t")
    assert names == [f"t_{n}" for n in page.SETTING_FOLDS] and set(glued) == set(names)
    assert "x³/√N" in glued["t_variants"].data and "β = 50" in glued["t_problems"].to_html()
    fig = physics_curves.curve_figure(planted_runs())
    shown.fold("t_fig", fig)
    assert glued["t_fig"] is fig and not matplotlib.pyplot.fignum_exists(fig.number)
    shown.fold("t_none", None)
    assert glued["t_none"].data == shown.NOTHING


def test_the_setting_as_a_reader_reads_it():
    runs = planted_runs()
    variants = page.variants_table(runs).data
    assert "| x³/√N |" in variants and "x^3/sqrt" not in variants and f"| {PINN_LABEL} | no attention | 3 |" in variants
    models, problems = (t.data for t in page.setting_tables())
    assert set(models["preset"]) == {"book", "paper"}
    params = dict(zip(zip(problems["PDE"], problems["preset"]), problems["parameters"]))
    assert params[("convection", "book")] == "β = 30" and params[("convection", "paper")] == "β = 50"
    assert not problems["L-BFGS steps × iterations"].str.contains(" x ").any()
    probes = page.probes_table().data
    assert not probes["Model"].str.contains(r"\^|sqrt").any() and probes["PDE"].str.contains("β").any()


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
