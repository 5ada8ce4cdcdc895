"""Chapter 03's Figures 2 and 3 analogue on planted records: softmax's norms against its bounds,
the cubics' norms, and the figure of the norms during training."""
import math

import matplotlib
from support.norms_runs import N_TOKENS, table1
from support.pages import probe_rows
from support.records import make_record

from polyattn.experiments import vit
from polyattn.studies.norms import accuracy as ac
from polyattn.studies.norms import page as npage
from polyattn.studies.norms import training as tr

matplotlib.use("Agg")


def _bound_records(softmax_ratio=0.6, softmax_jac=None, unscaled_status="ok"):
    sharp = math.sqrt(N_TOKENS) / 2
    jac = 0.4 * sharp if softmax_jac is None else softmax_jac
    return [make_record("softmax", 0, accs=(0.5, 0.80),
                        probes=probe_rows({"attn_fro_over_sqrt_n": softmax_ratio, "act_jac_fro": jac})),
            make_record("poly:p=3", 0, accs=(0.5, 0.78),
                        probes=probe_rows({"attn_fro_over_sqrt_n": 3.0, "act_jac_fro": 2.0})),
            make_record("poly:p=3,c=1", 0, accs=(0.5, 0.70), status=unscaled_status,
                        diverged_step=5 if unscaled_status == "diverged" else None,
                        probes=probe_rows({"attn_fro_over_sqrt_n": 12.0, "act_jac_fro": 10.0}))]


def test_softmax_within_its_bounds_and_the_cubics_norms_are_read_from_the_probes():
    v = tr.bound_values(table1(_bound_records()))
    assert v["ch03_softmax_max_ratio"] == "0.600" and v["ch03_softmax_bound_word"] == "within"
    assert v["ch03_softmax_jac_sharp"] == "0.40" and v["ch03_softmax_jac_word"] == "within"
    assert v["ch03_softmax_jac_paper"] == "0.10"                  # 2√N is four times √N/2
    assert v["ch03_poly_max_ratio"] == "3" and v["ch03_unscaled_max_ratio"] == "12"
    assert v["ch03_unscaled_jac_ratio"] == "5"
    assert v["ch03_unscaled_acc"] == "70.0%" and v["ch03_scaled_acc"] == "78.0%"


def test_a_softmax_norm_above_its_bound_reads_above_and_a_diverged_cubic_has_no_accuracy():
    v = tr.bound_values(table1(_bound_records(softmax_ratio=1.3, softmax_jac=math.sqrt(N_TOKENS),
                                              unscaled_status="diverged")))
    assert v["ch03_softmax_bound_word"] == "above" and v["ch03_softmax_jac_word"] == "above"
    assert v["ch03_unscaled_acc"] == "none (every run diverged)"


def test_without_runs_every_bound_value_says_so_and_there_is_no_figure():
    t1 = npage.Table1(vit.table1("book"), [], "paper", "not run", missing="not run")
    v = tr.bound_values(t1)
    assert set(v.values()) == {"not run"} and "ch03_softmax_bound_word" in v
    assert tr.norms_figure(t1) is None and ac.correlation_figure(t1) is None
    assert ac.correlation_table(t1) is None


def test_the_norms_figure_draws_three_layers_and_names_activations_for_people():
    records = [make_record(act, s, accs=(0.5, 0.7),
                           probes=probe_rows({"attn_fro": 3.0, "attn_fro_over_sqrt_n": 0.5, "act_jac_fro": 1.0,
                                              "param_jac_fro": 2.0}, layers=(0, 1, 2, 3)))
               for act in vit.NORM_ACTIVATIONS for s in (0, 1)]
    fig = tr.norms_figure(table1(records))
    assert fig.axes[0].get_title() == "layer 1 of 4" and fig.axes[2].get_title() == "layer 4 of 4"
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend == ["softmax", "x³/√N", "x³ (unscaled)"]


def test_within_or_above():
    assert tr.within_or_above(1.0, 1.0) == "within" and tr.within_or_above(1.01, 1.0) == "above"
    assert tr.within_or_above(float("nan"), 1.0) == "not measured"
