"""Chapter 04's marked-garment page: the probes' numbers and figure from planted records."""
import matplotlib

matplotlib.use("Agg")

from polyattn.studies.vit import marked as mk


def _probe(arm, epochs, accs):
    return {"config": {"activation": arm, "epochs": epochs}, "status": "ok",
            "metrics": [{"epoch": i + 1, "test_acc": a} for i, a in enumerate(accs)]}


def test_the_probe_values_give_each_final_accuracy_and_the_gap_at_the_longest_budget_with_both():
    records = [_probe("softmax", 10, [0.2, 0.39]), _probe("uniform", 10, [0.2, 0.28]),
               _probe("softmax", 30, [0.3, 0.783])]
    v = mk.probe_values(records)
    assert v["ch04_marked_probe_softmax_30"] == "78.3%" and v["ch04_marked_probe_uniform_30"] == "not run"
    assert v["ch04_marked_gap"] == "11.0 points"  # 30 epochs lacks uniform, so the gap is read at 10
    assert v["ch04_marked_floor"].endswith("%") and 30 < float(v["ch04_marked_floor"][:-1]) < 45


def test_the_probe_figure_has_a_panel_per_budget_and_none_without_records():
    assert mk.probe_figure([]) is None
    fig = mk.probe_figure([_probe("softmax", 10, [0.2, 0.4]), _probe("uniform", 30, [0.2, 0.3])])
    assert [ax.get_title() for ax in fig.axes] == ["10 epochs", "30 epochs"]
    assert mk.gate_band() == "5"



def _run(arm, seed, final, status="ok"):
    return {"config": {"activation": arm, "epochs": 30, "seed": seed}, "status": status,
            "metrics": [{"epoch": 1, "test_acc": 0.2}, {"epoch": 2, "test_acc": final}]}


def test_the_claims_runs_are_read_as_each_arms_final_accuracy_by_seed_diverged_runs_left_out():
    records = [_run("softmax", 0, 0.78), _run("softmax", 1, 0.80), _run("uniform", 0, 0.42),
               _run("poly:p=3", 0, 0.5, status="diverged")]
    finals = mk.final_accuracies(records)
    assert finals["softmax"] == {0: 78.0, 1: 80.0} and finals["poly:p=3"] == {} and finals["uniform"] == {0: 42.0}
    v = mk.marked_values(records)
    assert v["ch04_marked_means"].startswith("softmax 79.0% (2 seeds); x³/√N not run")
    assert "(attention ablated) 42.0% (1 seed)" in v["ch04_marked_means"]
    assert v["ch04_marked_margin"] == "2"
    fig = mk.marked_figure(records)
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["softmax", "uniform 1/N\n(ablated)"]
    assert mk.marked_figure([]) is None
