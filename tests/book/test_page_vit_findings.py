"""Chapter 04's closing list, on planted claims: one linked line per claim with paired runs, and the
claims still waiting for runs named with their grids."""
import pytest
from support.patching import patch_everywhere
from support.vit_claims import plant_claims

from polyattn.studies.vit import findings as fd


@pytest.fixture
def planted(tmp_path, planted_grid):
    """The planted claims of :func:`support.vit_claims.plant_claims`: (evaluate, claims, root)."""
    return plant_claims(tmp_path, planted_grid)


def test_the_closing_list_has_one_linked_line_per_claim_and_names_the_waiting_ones(planted, monkeypatch):
    from polyattn.claims import evaluate as evaluate_module
    from polyattn.claims import register

    evaluate, claims, root = planted
    patch_everywhere(monkeypatch, register, "REGISTER", claims)
    patch_everywhere(monkeypatch, evaluate_module, "evaluate", evaluate)
    patch_everywhere(monkeypatch, fd, "to_run", lambda grid: f"to run: {grid}")
    text = fd.findings_list("unit_vit")
    lines = text.splitlines()
    assert lines[0].startswith("- {ref}`unit_parity <claim-unit-parity>`: **equivalent within the margin**†; "
                               "x³/√N − softmax: −0.2")
    assert sum(line.startswith("- ") for line in lines) == 1          # the claim without runs has no line
    assert "Still waiting for paired runs: {ref}`unit_pending <claim-unit-pending>` (to run: unit_vit_pending)." in text
    assert "† margin or chance level registered after" in text
    assert "no runs yet" not in text and "n/a" not in text
