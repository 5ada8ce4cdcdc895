"""Chapter 09's closing sections: the cost of the runs that would settle what is open, the key
number of each measured claim, and the closing table."""
from types import SimpleNamespace

from support.pages import table_rows
from support.patching import patch_everywhere
from support.records import make_record

import polyattn.book  # noqa: F401  (its tables are built from the real register, before a test plants one)
from polyattn.studies.critiques import summary as page


def test_the_cost_of_a_run_to_come_is_read_from_the_records_of_the_same_recipe():
    records = [make_record("softmax", s, wall_s=1800.0) for s in (0, 1)]
    assert page.run_hours(10, records) == "about 5 CPU hours"
    assert page.run_hours(10, [{"provenance": {}}]) == "cost unknown (no record to time)"


def test_each_measured_claim_has_a_short_key_number_from_its_finding():
    n = {"activations": 13, "attention_rho": -0.06, "attention_activations_ci_low": -0.47,
         "attention_activations_ci_high": 0.35, "jacobian_rho": -0.26, "jacobian_activations_ci_low": -0.56,
         "jacobian_activations_ci_high": 0.1, "gradient_p1_initial": 0.0446, "gradient_p7_initial": 2.56e-9,
         "saturated_share_max": 0.0, "factor": 100.0, "shares": "softmax 0.17, x³/√N 0.98",
         "negative_shares": "softmax 0.00 / 0.00", "k_1_to_2_by_length": "-0.7 points at N = 17 (95% CI -4.7 to +3.3)",
         "tasks": 4, "tasks shrinking": 1, "tasks undecided": 3}
    keys = {cid: f(n) for cid, f in page.KEY_NUMBERS.items()}
    assert set(keys) == set(page.MEASURED_CLAIMS) == set(page.MEASURED_SECTIONS)
    assert keys["norm_paradox"] == ("Spearman ρ of accuracy over 13 activations: with the attention norm −0.06 (−0.47 to "
                                    "+0.35), with the Jacobian −0.26 (−0.56 to +0.10)").replace("−", "-")
    assert keys["powers_gradients"].endswith("0.045 at p = 1, 2.6e-09 at p = 7")
    assert keys["outliers"] == "the token's share of the last layer's attention at ×100: softmax 0.17, x³/√N 0.98"
    assert keys["training_speed"] == "tasks whose gap shrinks detectably: 1 of 4 (undecided: 3)"


def test_the_closing_table_links_each_claim_to_its_section_with_its_verdict_and_key_number(monkeypatch):
    import polyattn.claims.evaluate as evaluate_module
    import polyattn.claims.register as register
    import polyattn.claims.report as report

    claims = {"planted_one": SimpleNamespace(chapter="09_critiques"), "planted_two": SimpleNamespace(chapter="09_critiques"),
              "elsewhere": SimpleNamespace(chapter="04_vit")}
    finding = SimpleNamespace(form="mixed", numbers={"factor": 100.0, "shares": "softmax 0.17"}, summary="unused")
    measured = {"outliers": SimpleNamespace(chapter="09_critiques", machine_dependent=False, evaluate=lambda: finding),
                "cost": SimpleNamespace(chapter="09_critiques", machine_dependent=True, evaluate=None)}
    patch_everywhere(monkeypatch, register, "REGISTER", claims)
    patch_everywhere(monkeypatch, register, "MEASURED", measured)
    patch_everywhere(monkeypatch, evaluate_module, "evaluate", lambda cid: cid)
    patch_everywhere(monkeypatch, report, "answer_rows", lambda verdicts, ids: [
        {"id": "planted_one", "verdict": "inconclusive at this power", "key number": "a − b: +0.72 [−4.40, +5.83] points",
         "late": True, "interim": False}])
    rows = page.findings_rows()
    assert [r["id"] for r in rows] == ["planted_one", "planted_two", "outliers"]
    assert rows[0]["section"] == "claim-planted-one" and rows[0]["late"]
    assert rows[1]["verdict"] == "no paired runs stored yet" and rows[1]["key"] == ""
    assert rows[2] == {"id": "outliers", "name": "polynomials amplify outliers", "section": "critiques-extreme-entries",
                       "verdict": "mixed", "late": False,
                       "key": "the token's share of the last layer's attention at ×100: softmax 0.17"}
    table = page.findings_table()
    shown = table_rows(table)
    assert shown[0]["claim"] == '<a href="#claim-planted-one">planted_one</a>'
    assert shown[0]["verdict"] == "<b>inconclusive at this power</b>†" and shown[2]["verdict"] == "<b>mixed</b>"
    assert "† margin registered after" in table.caption
