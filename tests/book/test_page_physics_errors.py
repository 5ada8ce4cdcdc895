"""Chapter 06's "How the errors are judged" and "Errors per problem and variant": the judging
rules' numbers, the failed seeds counted from planted runs, and the measured claim's counts."""
from support.physics_runs import planted_runs

from polyattn.studies.physics import errors as page


def test_the_judging_values_state_the_rules_numbers():
    judging = page.judging_values()
    assert (judging["margin"], judging["margin_factor"], judging["fail"]) == ("0.301", "2", "0.1")
    # the published errors the threshold is set against, in the judging rules' text
    assert (judging["pub_former"], judging["pub_pinn"], judging["pub_wave"]) == ("0.023 and 0.015", "0.78 and 0.98",
                                                                                 "0.27")


def test_the_error_values_count_the_failed_seeds():
    runs = planted_runs()
    v = page.error_values(runs)
    # the cubic at 10 times softmax's error: 0.2, 0.3, 0.25 on convection fail, 0.1 to 0.12 on reaction
    assert v["failed_convection_softmax"] == "0 of 3" and v["failed_convection_poly"] == "3 of 3"
    assert v["failed_reaction_poly"] == "2 of 3" and v["failed_wave_softmax"] == "3 of 3"
    assert v["failed_convection_pinn"] == "3 of 3" and v["budget"].startswith("63 runs")
    styled = page.error_table(runs)
    table = styled.data
    assert table["PDE"].tolist()[:2] == ["convection", ""] and not table["Variant"].str.contains("sqrt").any()
    # the caption states the setting and its departures from the published one
    assert "convection at β = 30 instead of the published parameters, preset smoke" in styled.caption


def test_the_measured_claims_numbers_are_glued_by_name():
    numbers = {"problems where softmax is seed-sensitive": 1, "problems checked": 3,
               "other activation cases seed-sensitive": 4, "other activation cases": 15}
    assert page.seed_values(numbers) == {"sensitive": "1", "checked": "3", "others": "4", "other_cases": "15"}
    assert page.seed_values({})["checked"] == "not stored"
