"""Chapter 04's section on which scale wins at which length, on planted numbers of the measured
claim: the longer sweep's flatness per complete length, its flattest length, the deciding sweep."""
from polyattn.studies.vit import scale_sweep as sw


def _fig1_numbers(long_decides=False, complete=("17", "50")):
    numbers = {"deciding sweep": "vit_scale_long" if long_decides else "vit_scale",
               "deciding sweep scale": "1,000 images for 5 epochs", "long sweep runs stored": 30,
               "long sweep runs planned": 45, "long sweep scale": "20,000 images (10,000 at $N = 197$) for 10 epochs",
               "flat spread (points)": 1.0, "best c at N = 17": "2", "best c at N = 50": "8",
               "slope": -0.12, "slope CI low": -0.71, "slope CI high": 0.88}
    for n, spread in (("17", 1.5), ("50", 0.24)):
        if n not in complete:
            continue
        numbers.update({f"long sweep N = {n}: spread (points)": spread,
                        f"long sweep N = {n}: flat": "flat" if spread < 1 else "not flat",
                        f"long sweep N = {n}: largest seed sd (points)": 0.5,
                        f"long sweep N = {n}: c = 1/8 (%)": 84.8, f"long sweep N = {n}: c = 32 (%)": 84.8 - spread})
    if complete:
        numbers.update({"long sweep complete lengths": ", ".join(complete), "long sweep flattest N": 50,
                        "long sweep flattest spread (points)": 0.24, "long sweep flattest best c": "1/8",
                        "long sweep flattest worst c": "32", "long sweep flattest best accuracy (%)": 84.8,
                        "long sweep flattest worst accuracy (%)": 84.56,
                        "long sweep flattest largest seed sd (points)": 0.5, "long sweep flattest reading": "flat"})
    return numbers


def test_the_longer_sweep_table_states_each_complete_lengths_spread_and_reading():
    table = sw.long_sweep_table(_fig1_numbers())
    rows = table.data.to_dict("records")
    assert [r["N"] for r in rows] == ["17", "50"]
    assert list(table.data.columns)[1:3] == ["c = 1/8 (%)", "c = 32 (%)"]
    assert [r["Reading"] for r in rows] == ["not flat", "flat"]
    assert rows[1]["Spread (points)"] == "0.24" and rows[1]["c = 32 (%)"] == "84.56"
    assert "$" not in table.caption and "under 1 point" in table.caption
    assert sw.long_sweep_table(_fig1_numbers(complete=())) is None


def test_the_longer_sweeps_numbers_name_its_flattest_length():
    numbers = sw.long_sweep_numbers(_fig1_numbers())
    assert numbers["ch04_flat_n"] == "50" and numbers["ch04_flat_spread"] == "0.24"
    assert numbers["ch04_flat_worst_acc"] == "84.6%" and numbers["ch04_flat_reading"] == "flat"
    assert numbers["ch04_long_spreads"] == "1.50 points at N = 17 and 0.24 points at N = 50"
    assert numbers["ch04_long_stored"] == "30 of 45" and numbers["ch04_long_ratio"] == "256"
    empty = sw.long_sweep_numbers(_fig1_numbers(complete=()))
    assert empty["ch04_flat_n"] == "not stored" and empty["ch04_long_spreads"] == "nothing yet"


def test_the_deciding_sweep_is_named_for_readers():
    short, long_ = sw.fig1_numbers(_fig1_numbers()), sw.fig1_numbers(_fig1_numbers(long_decides=True))
    assert short["ch04_deciding_sweep"] == "the short sweep" and long_["ch04_deciding_sweep"] == "the longer sweep"
    assert short["ch04_best_by_length"] == "2 at N = 17, 8 at N = 50"


def test_the_ratio_of_a_grid_of_constants():
    assert sw._ratio(("1/8", "1/2", "2", "8", "32")) == 256
