"""Chapter 10's measured claim: what N is for windows and channels, and whether the reading matters."""
import json
from pathlib import Path

import pytest
from support.planted_records import plant

from polyattn.experiments import architectures
from polyattn.labels import architecture, architecture_label
from polyattn.measures import architectures as measure

SEEDS = (0, 1, 2)
WOBBLE = (-0.1, 0.0, 0.1)


def _plant(root, planted_grid, level=80.0, shift=0.0, spread=0.0):
    """Every run of the architecture grid at ``level`` points; Swin's x^3/14 and XCiT's N = tokens
    moved by ``shift`` points, with a seed-to-seed wobble, scaled by ``spread``, of their own."""
    configs = []
    for seed in SEEDS:
        for base in architectures.table2("smoke"):
            cfg = base.replace(seed=seed)
            other = (architecture(cfg), architecture_label(cfg)) in {("swin", measure.FIXED), ("xcit", measure.TOKENS)}
            points = level + WOBBLE[seed] + (shift + spread * (seed - 1) if other else 0.0)
            plant(root, cfg, [{"epoch": 1, "step": 10, "test_acc": points / 100}],
                  seq_lens={"seq_len": cfg.seq_len, "tokens": cfg.seq_len})
            configs.append(cfg)
    planted_grid(measure.GRID, configs)


def test_readings_that_match_are_equivalent_within_the_margin(tmp_path, planted_grid):
    _plant(tmp_path, planted_grid, shift=0.05, spread=0.05)
    f = measure.n_windows_channels(tmp_path)
    assert f.form == "equivalent within the margin", f.summary
    assert f.numbers["Swin x^3/14: result"] == f.numbers["XCiT N = tokens: result"] == "equivalent"


def test_a_reading_that_costs_more_than_the_margin_is_not_supported(tmp_path, planted_grid):
    _plant(tmp_path, planted_grid, shift=-10.0, spread=0.1)
    f = measure.n_windows_channels(tmp_path)
    assert f.form == "not supported"
    assert f.numbers["Swin x^3/14: result"] == "worse"
    assert f.numbers["Swin x^3/14: difference (points)"] == pytest.approx(-10.0)


def test_a_difference_inside_the_margin_does_not_decide(tmp_path, planted_grid):
    # detectable after Holm, but its interval reaches inside the margin: neither equivalent nor beyond it
    _plant(tmp_path, planted_grid, shift=-1.0, spread=0.05)
    f = measure.n_windows_channels(tmp_path)
    assert f.numbers["Swin x^3/14: result"] == "worse, size unclear"
    assert f.form == "inconclusive at this power"


def test_noisy_pairs_are_inconclusive_at_this_power(tmp_path, planted_grid):
    _plant(tmp_path, planted_grid, shift=1.0, spread=8.0)
    f = measure.n_windows_channels(tmp_path)
    assert f.form == "inconclusive at this power"
    assert "inconclusive at this power" in f.summary


def test_runs_at_chance_are_inconclusive_at_this_scale(tmp_path, planted_grid):
    _plant(tmp_path, planted_grid, level=10.0, shift=0.05, spread=0.05)
    assert measure.n_windows_channels(tmp_path).form == "inconclusive at this scale"


def test_no_stored_run_is_inconclusive_at_this_scale(tmp_path, planted_grid):
    planted_grid(measure.GRID, architectures.table2("smoke"))
    f = measure.n_windows_channels(tmp_path)
    assert f.form == "inconclusive at this scale"
    assert "no pair of runs stored" in f.summary


def test_n_is_read_from_the_configs_and_the_temperature_factor_follows():
    n = measure.n_values(architectures.table2("book"), architectures.table2("paper"))
    assert (n["Swin window N"], n["Swin window N, paper"]) == (16, 49)
    assert (n["XCiT channels N"], n["XCiT tokens N"], n["XCiT channels N, paper"], n["XCiT tokens N, paper"]) == \
        (16, 64, 48, 196)
    assert n["XCiT temperature factor"] == pytest.approx((16 / 64) ** (1 / 6))


@pytest.mark.committed
def test_the_committed_records_give_the_committed_verdict(repo_root: Path):
    committed = json.loads((repo_root / "data" / "verdicts.json").read_text())["n_windows_channels"]
    assert measure.n_windows_channels().form == committed["form"]
