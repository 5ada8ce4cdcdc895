"""Chapter 04's Table 1 analogue on planted ViT records: how much the seeds can say, and the cubic's
scale against x³/√N."""
from support.records import table1_records

from polyattn.studies.vit import table1 as t1


def test_power_numbers_follow_the_number_of_seeds():
    numbers = t1.power_numbers(table1_records({"poly:p=3": -0.02}))
    assert numbers["ch04_t1_seeds"] == "3" and numbers["ch04_t_mult"] == "4.30"     # t(0.975, 2)
    assert numbers["ch04_wilcoxon_p"] == "0.250" and numbers["ch04_wilcoxon_n"] == "6"
    assert float(numbers["ch04_mde_low"]) > 0
    one = t1.power_numbers(table1_records({"poly:p=3": -0.02}, seeds=(0,), noise=(0.0,)))
    assert one["ch04_t_mult"] == "undefined (one seed)" and one["ch04_mde_low"] == "not computed"


def test_the_scale_comparisons_are_against_the_scaled_cubic():
    # x³/14 planted 1 point below x³/√N, the unscaled x³ 2 points above it
    records = table1_records({"poly:p=3": 0.0, "poly:p=3,c=1/14": -0.01, "poly:p=3,c=1": 0.02})
    numbers = t1.scale_numbers(records)
    assert numbers["ch04_fixed_diff"].startswith("−1.00 [") and numbers["ch04_fixed_diff"].endswith(" points")
    assert numbers["ch04_unscaled_diff"].startswith("+2.00 [") and numbers["ch04_scale_pairs"] == "3"
    assert t1.scale_numbers(table1_records({"poly:p=3": 0.0}))["ch04_fixed_diff"] == "not run"


def test_a_page_without_runs_has_no_scale_numbers():
    assert set(t1.scale_numbers([]).values()) <= {"no", "not run"}
