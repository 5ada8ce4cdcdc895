"""Chapter 05's "Did softmax learn each task?" on planted runs: the tasks softmax learned, and the
caption of a table of the runs."""
from support.lra_runs import planted_runs

from polyattn.studies.lra import learned as page


def test_learned_tasks_and_the_caption_of_a_table():
    runs = planted_runs({}, base=0.6, chance={"listops": 0.3, "image": 0.65})
    assert runs.informative == ["listops"] and runs.uninformative == ["image"]
    table = page.learned_table(runs).data
    assert list(table["Task"]) == ["ListOps", "Image"] and list(table["Learned"]) == ["yes", "no"]
    assert table["Chance (%)"].iloc[1] == "65.0"
    caption = runs.caption("X")
    assert caption.startswith("X; preset smoke, 3 seeds,") and "10 times the published learning rate" in caption
