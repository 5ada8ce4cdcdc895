"""Chapter 08's finding: the numbers stored for :mod:`polyattn.measures.costs`, from planted
measurements, and the verdict's table."""
import pytest
from support.costs_frames import CFG, TARGETS, attention, causal, lra, train
from support.patching import patch_everywhere

from polyattn import kernels
from polyattn.measures import costs as measured
from polyattn.studies.costs import finding as costs_finding


def test_the_stored_numbers_are_what_the_measure_needs(monkeypatch, tmp_path):
    frames = {"attention": attention(), "causal": causal(), "lra": lra(), "training": train()}
    for kind, frame in frames.items():
        monkeypatch.setattr(costs_finding, kind, lambda cfg, frame=frame: frame.copy())
    patch_everywhere(monkeypatch, kernels.compiled, "auto_enabled", lambda: True)
    numbers = costs_finding.cost_numbers(CFG, TARGETS)
    assert set(numbers) == set(measured.FIELDS)
    assert (numbers["attention_time_min"], numbers["attention_time_max"], numbers["auto_paths"]) == (0.8, 0.9, "compiled")
    assert numbers["peak_memory"] == pytest.approx(0.8) and numbers["vit_throughput"] == 1.1
    assert (numbers["lra_n"], numbers["lra_cubic_step"], numbers["causal_linear_from_n"]) == (1024, 0.7, 1024)
    measured.save(numbers, repo=tmp_path)
    finding = measured.cost(repo=tmp_path)
    assert finding.form == "measured" and "0.80–0.90" in finding.summary
    table = costs_finding.finding_table(numbers, finding.form).data.iloc[0]
    assert table["x³/√N against SDPA softmax, time"] == "0.80–0.90×"
