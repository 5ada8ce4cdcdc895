"""Chapter 08's linear forms: their time against SDPA and the blocked path, and their features."""
from support.costs_frames import CFG, attention

from polyattn.studies.costs import linear as costs_linear


def test_linear_forms():
    df = attention()
    lin = costs_linear.linear_texts(df, CFG)
    assert (lin["lin1_worst"], lin["lin1_from"]) == ("0.030", "256")     # from min(1024, longest N) on
    assert lin["lin2_vs_blocked"] == "0.25" and lin["lin3_vs_blocked"] == "0.50" and lin["lin3_result"] == "wins"
    assert costs_linear.linear_texts(attention(lin3=1.5), CFG)["lin3_result"] == "does not win"
    rows = {r["p"]: r for r in costs_linear.linear_rows(df, CFG)}
    assert rows[3]["features"] == 120 and rows[1]["features"] == 8 and rows[3]["n"] == CFG["big_n"]
