"""The physics grid of chapter 06: what each preset runs, and that a smoke run trains."""
from collections import Counter

import pytest

from polyattn.experiments import GRIDS
from polyattn.experiments import physics as grid
from polyattn.models.pinnsformer import SEQ_LEN


def test_book_grid_runs_every_pde_variant_and_seed_once():
    book = grid.physics("book")
    assert len(book) == 3 * (3 * 5 + 4 * 3) == 81
    assert len({(c.hash, c.seed) for c in book}) == 81
    per = Counter((grid.pde_of(c), grid.variant_label(c)) for c in book)
    for pde in grid.PDES:
        for label in grid.VARIANTS:
            assert per[(pde, label)] == (5 if label in grid.MAIN_VARIANTS else 3), (pde, label)
    assert all(c.preset == "book" and c.threads == 1 and c.device == "cpu" and c.task == "pde" for c in book)
    assert all(c.optimizer == "lbfgs" for c in book)
    # seed-major: the first 21 runs are seed 0 of every PDE and variant
    assert {c.seed for c in book[:21]} == {0} and len({(c.dataset, grid.variant_label(c)) for c in book[:21]}) == 21
    assert GRIDS["physics"] is grid.physics


def test_variants_are_the_chapter_activations_and_the_pinn():
    book = grid.physics("book", seeds=[0])
    assert len(book) == 21
    specs = {grid.variant_label(c): c.activation for c in book if grid.pde_of(c) == "convection"}
    assert specs == {"softmax": "softmax", "x^3/sqrt(N)": "poly:p=3", "x^3/14": "poly:p=3,c=1/14",
                     "x/sqrt(N)": "poly:p=1", "relu/N": "relu_n", "sigmoid": "sigmoid",
                     grid.PINN_LABEL: grid.PINN_ACTIVATION}
    pinn = [c for c in book if grid.variant_label(c) == grid.PINN_LABEL]
    assert all(c.model.startswith("pinn_") for c in pinn)
    assert all(c.seq_len == SEQ_LEN for c in book if c not in pinn)


def test_paper_preset_is_the_published_configuration():
    paper = grid.physics("paper", seeds=[0])
    by = {(c.dataset, grid.variant_label(c)): c for c in paper}
    former = by[("convection", "softmax")]
    assert former.model == "paper" and former.options["grid"] == [51, 51] and former.lbfgs_max_iter == 20
    assert former.epochs == 500 and by[("reaction", "softmax")].epochs == 500 and by[("wave", "softmax")].epochs == 1000
    pinn = by[("convection", grid.PINN_LABEL)]
    assert pinn.model == "pinn_paper" and pinn.options["grid"] == [101, 101]
    assert all(c.options["test_grid"] == [101, 101] and c.device == "cuda" for c in paper)


def test_book_convection_is_beta_30_and_the_paper_keeps_the_published_problems():
    from polyattn.data.pde import get_pde

    book = {(grid.pde_of(c), grid.variant_label(c)): c for c in grid.physics("book", seeds=[0])}
    conv = book[("convection", "softmax")]
    assert conv.dataset == "convection:beta=30" and get_pde(conv.dataset).params["beta"] == 30.0
    assert conv.epochs == 160 and book[("convection", grid.PINN_LABEL)].dataset == conv.dataset
    assert book[("reaction", "softmax")].dataset == "reaction" and book[("wave", "softmax")].dataset == "wave"
    paper = grid.physics("paper", seeds=[0])
    assert {c.dataset for c in paper} == set(grid.PDES)
    assert get_pde(grid.pde_spec("paper", "convection")).params["beta"] == 50.0


def test_book_preset_reductions_are_documented():
    book, paper = grid.SCALES["book"], grid.SCALES["paper"]
    assert book["test_grid"] == paper["test_grid"]        # scored exactly as published
    changed = {k for k in paper if book[k] != paper[k]}
    assert changed and changed <= set(grid.BOOK_NOTES), f"undocumented reductions: {changed - set(grid.BOOK_NOTES)}"
    assert all(len(note) > 40 and "TODO" not in note for note in grid.BOOK_NOTES.values())
    assert len(grid.SIZING) >= 3
    assert all({"PDE", "model", "grid", "steps x iterations", "CPU s", "rMAE"} <= set(s) for s in grid.SIZING)
    assert all(s["CPU s"] is not None or s.get("wall s") for s in grid.SIZING)
    rows = grid.setting_table()
    assert len(rows) == 6 and {r["preset"] for r in rows} == {"book", "paper"}


def test_bad_names_are_refused():
    with pytest.raises(ValueError, match="unknown PDE 'heat'"):
        grid.config_for("book", "heat", "softmax", 0)
    with pytest.raises(ValueError, match="unknown variant"):
        grid.config_for("book", "convection", "x^9", 0)
    with pytest.raises(ValueError, match="unknown preset"):
        grid.physics("huge")
    with pytest.raises(ValueError, match="unknown PDE"):
        grid.physics("book", pdes=("convection", "heat"))


def test_labels_of_records_and_configs_agree():
    c = grid.config_for("book", "wave", "relu/N", 2)
    rec = {"config": {"dataset": c.dataset, "model": c.model, "activation": c.activation}}
    assert grid.variant_label(c) == grid.variant_label(rec) == "relu/N"
    assert grid.pde_of(c) == grid.pde_of(rec) == "wave"
    assert grid.pde_of({"dataset": "convection:beta=30"}) == "convection"


def test_a_smoke_run_of_each_pde_trains_and_keeps_its_field(tmp_path, monkeypatch):
    from polyattn.runs import load_or_run

    monkeypatch.setenv("POLYATTN_RESULTS", str(tmp_path))
    smoke = grid.physics("smoke")
    assert len(smoke) == 21 and all(c.model in ("micro", "pinn_micro") for c in smoke)
    for pde in grid.PDES:
        cfg = next(c for c in smoke if grid.pde_of(c) == pde and c.activation == "poly:p=3")
        rec = load_or_run(cfg, progress=False)
        assert rec["status"] in ("ok", "diverged") and rec["metrics"]
        if rec["status"] == "ok":
            assert len(rec["final"]["prediction"]) == 51 * 51 and len(rec["final"]["attention"]) == 2


@pytest.mark.committed
def test_the_published_speed_runs_are_the_committed_first_book_runs():
    from polyattn.runs import stored

    runs = grid.published_speed_runs()
    assert [grid.variant_label(c) for c in runs] == ["softmax", grid.PINN_LABEL]
    assert all(c.dataset == "convection" and c.epochs == grid.PUBLISHED_SPEED_STEPS for c in runs)
    for c in runs:
        rec = stored(c)
        assert rec is not None and rec["preset"] == "book" and not rec["provenance"]["git_dirty"], c.hash
    with pytest.raises(ValueError, match="not a wave problem"):
        grid.config_for("book", "wave", "softmax", 0, spec="convection")
