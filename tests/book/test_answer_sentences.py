"""The answer a reader takes away, on planted verdicts: three sentences that open with their answer
and margin, cite no uninformative comparison, stay within about 45 words; the answer table keyed by
each claim's deciding comparison; the forest plot with one row per table row, legible at the column."""
import math
import re

import pytest

from polyattn.book import answer_rows as ar
from polyattn.book import forest, questions
from polyattn.claims.evaluate import ClaimVerdict, ComparisonResult
from polyattn.claims.register import REGISTER

#: N of each planted comparison's runs (by comparison id), else 50.
LENGTHS = {"cube_vs_row_1024": 1024, "cube_vs_row_256": 256, "cube_vs_row_64": 64, "row_vs_softmax_1024": 1024,
           "cube_sqrt_n": 65, "cube_vs_scaled": 65, "asymmetry": 256}


def result(comp, mean=-0.2, lo=-0.6, hi=0.2, res="equivalent", outcome="supports", n=5, unit="points",
           margin=1.0, qualifier="", **kw) -> ComparisonResult:
    r = ComparisonResult(comp, n, n, 0, unit, unit == "points", 80.0, 80.0 - mean, mean, lo, hi, lo / 2, hi / 2,
                         0.5, 0.01, res == "equivalent", 0.8, holm_p=0.5, result=res, qualifier=qualifier,
                         outcome=outcome, margin=margin)
    for k, v in kw.items():
        setattr(r, k, v)
    return r


def plant(cid: str, form: str, **per_comparison) -> ClaimVerdict:
    """A verdict on a registered claim with planted results: comparison id -> result kwargs."""
    claim = REGISTER[cid]
    unit = {"length_scale_needed": "bits/char", "norm_dose_response": "bits/char"}.get(cid, "points")
    rows = []
    for c in claim.comparisons:
        kw = dict(unit=unit, margin=claim.margin if c.margin is None else c.margin)
        if unit == "bits/char":
            kw.update(mean=-0.001, lo=-0.005, hi=0.003)
        kw.update(per_comparison.get(c.id, {}))
        rows.append(result(c, **kw))
    return ClaimVerdict(claim, rows, form, {}, None)


@pytest.fixture
def planted(monkeypatch):
    def records(r):
        ds = "bible_kjv" if r.comparison.candidate.grid.startswith("causal") else "fashion_mnist"
        return [{"config": {"model": "micro", "dataset": ds},
                 "seq_lens": {"seq_len": LENGTHS.get(r.comparison.id, 50)}}]

    monkeypatch.setattr(questions, "records_of", records)
    gated = dict(res="uninformative", outcome="uninformative", candidate_learned=False, baseline_learned=False)
    return {
        "table_parity": plant("table_parity", "equivalent within the margin",
                              table1=dict(res="inconclusive", outcome="open", lo=-3.4, hi=1.2)),
        "marked_garment": plant("marked_garment", "not supported",
                                cube_vs_scaled=dict(mean=0.3, lo=-1.2, hi=1.8, outcome="contradicts")),
        "norm_dose_response": plant("norm_dose_response", "not supported",
                                    asymmetry=dict(mean=-0.085, lo=-0.107, hi=-0.062, res="better",
                                                   outcome="contradicts")),
        "converged_unclipped": plant("converged_unclipped", "not supported",
                                     cube_vs_scaled=dict(outcome="contradicts")),
        "converged_scale_needed": plant("converged_scale_needed", "not supported",
                                        cube_vs_scaled_converged=dict(mean=-0.22, lo=-0.75, hi=0.31,
                                                                      outcome="contradicts")),
        "length_scale_needed": plant("length_scale_needed", "inconclusive at this scale",
                                     cube_vs_row_1024=dict(mean=-0.0123, **gated),
                                     cube_vs_row_256=dict(**gated),
                                     cube_vs_row_64=dict(res="inconclusive", outcome="open", lo=-0.15, hi=0.01)),
        "norm_intervention": plant("norm_intervention", "not supported",
                                   necessity=dict(mean=-0.93, lo=-1.63, hi=-0.23, res="worse, size unclear",
                                                  outcome="size unclear"),
                                   sufficiency_contrast=dict(mean=0.44, lo=-0.27, hi=1.15, outcome="contradicts")),
        "norm_intervention_unclipped": plant("norm_intervention_unclipped", "not supported",
                                             necessity=dict(mean=-0.47, lo=-0.74, hi=-0.20, outcome="contradicts",
                                                            qualifier=", and slightly worse")),
        "qk_norm": plant("qk_norm", "not testable as designed",
                         cube_qknorm_vs_scaled=dict(mean=-0.51, lo=-3.1, hi=2.08, res="inconclusive",
                                                    outcome="open"),
                         softmax_qknorm_vs_softmax=dict(mean=2.97, lo=1.66, hi=4.28, res="better",
                                                        outcome="contradicts")),
    }


def _void_converged(planted) -> None:
    """The converged benchmark's ablated arm, not beyond the margin, voids the agreement it validates."""
    parity = planted["table_parity"]
    parity.form = "not testable as designed"
    by = {r.comparison.id: r for r in parity.comparisons}
    ablated = by["ablated_vs_softmax"]
    ablated.mean, ablated.ci_low, ablated.ci_high = -0.85, -1.24, -0.45
    ablated.result, ablated.outcome = "worse, size unclear", "size unclear"
    by["converged"].result, by["converged"].outcome = "cannot see attention", "uninformative"
    by["converged"].voided_by, by["converged"].voided_check = ablated.comparison.label, ablated


def test_each_answer_opens_with_its_answer_and_margin_and_stays_within_about_45_words(planted):
    _void_converged(planted)
    text = questions.questions_markdown(planted).splitlines()
    assert len(text) == 3
    answers = [line.split("?** ", 1)[1] for line in text]
    # each answered by its key comparison alone (the marked garment's two parts answer two questions)
    assert answers[0].startswith("**Yes, within ±2 points**, on the marked garment (micro ViT, Fashion-MNIST, N = 65")
    assert answers[1].startswith("**No, not at N = 65**")
    assert answers[2].startswith("**No (margin ±0.05 bits/char)**")
    for a in answers:
        assert questions.word_count(a) <= questions.MAX_WORDS, a
    # the numbers come from the planted results; an agreement its ablated arm voids is named as untested,
    # with the ablated arm's number and never its own
    assert "+0.30 [−1.20, +1.80] points" in answers[1] and "−0.085 [−0.107, −0.062]" in answers[2]
    assert "on plain Fashion-MNIST (N = 50) untested: uniform attention − softmax −0.85 [−1.24, −0.45]" in answers[0]
    assert "−0.20 [−0.60, +0.20]" in answers[0] and answers[0].count("−0.20 [") == 1


def test_no_answer_cites_an_uninformative_comparison(planted):
    q2 = questions.answer_sentence(planted, questions.QUESTIONS[1])
    assert "in character LMs, untested beyond N = 64: no model learned the task" in q2
    assert "−0.012" not in q2 and "1,024" not in q2
    # a floor the rule names is said in its words
    r = next(r for r in planted["length_scale_needed"].comparisons if r.comparison.id == "cube_vs_row_256")
    r.floor_name = "bigram floor"
    assert "untested beyond N = 64: every model stayed at the bigram floor" in \
        questions.answer_sentence(planted, questions.QUESTIONS[1])
    # an informative primary at a longer N is cited with its numbers
    for r in planted["length_scale_needed"].comparisons:
        r.result, r.outcome = "equivalent", "contradicts"
    q2 = questions.answer_sentence(planted, questions.QUESTIONS[1])
    assert "at N = 1,024 (character LM) −0.012" in q2 and "untested" not in q2


def test_a_later_design_that_learned_at_a_length_supersedes_the_untested_one(planted):
    # the position-free sweep did not learn beyond N = 64; the rotary sweep decides at N = 1,024
    rope = plant("rope_scale_needed", "inconclusive at this power",
                 cube_vs_row_1024=dict(mean=0.021, lo=-0.05, hi=0.09, res="inconclusive", outcome="open",
                                       unit="bits/char"))
    planted["rope_scale_needed"] = rope
    q2 = questions.answer_sentence(planted, questions.QUESTIONS[1])
    assert "at N = 1,024 (character LM) +0.021" in q2 and "untested" not in q2
    # where the later design is uninformative too, it alone says where the answer stops, with the
    # reason its gate gives
    rope.comparisons[0].result = rope.comparisons[0].outcome = "uninformative"
    rope.comparisons[0].gate_reason = "x³/√(i+1) fell 0.20 bits/char behind T = 64 (gate: 0.15)"
    q2 = questions.answer_sentence(planted, questions.QUESTIONS[1])
    assert q2.count("untested") == 1 and "untested beyond N = 64" not in q2
    assert "x³/√(i+1) fell 0.20 bits/char behind T = 64" in q2 or "(gate failed)" in q2


def test_a_form_the_rule_adds_later_still_gives_an_answer(planted):
    # a question answered by its claim's form
    q = questions.Question("Does it match?", "converged_unclipped",
                           (questions.Part("converged_unclipped", "cube_vs_scaled", "x³ − x³/√N"),))
    planted["converged_unclipped"].form = "holds, smaller than the margin"
    assert "**Yes, but smaller than the margin" in questions.answer_sentence(planted, q)
    planted["converged_unclipped"].form = "some future form"
    assert questions.answer_sentence(planted, q).startswith("**Some future form (margin ±1")
    # one answered by its key comparison: a harm found inside the margin
    key = next(r for r in planted["marked_garment"].comparisons if r.comparison.id == "cube_vs_scaled")
    key.outcome = "smaller than the margin"
    assert questions.answer_sentence(planted, questions.QUESTIONS[1]).startswith("**Yes, but smaller than the margin")
    for v in planted.values():
        for r in v.comparisons:
            r.result = r.outcome = "uninformative"
    assert "no comparison it rests on has two informative pairs" in \
        questions.answer_sentence(planted, questions.QUESTIONS[0])


def test_a_rows_key_number_is_its_deciding_primary_not_its_control(planted):
    rows = ar.answer_rows(planted, ["qk_norm", "length_scale_needed", "table_parity"])
    qk = rows[0]
    assert qk.key.comparison.role == "primary" and qk.key.comparison.id == "cube_qknorm_vs_scaled"
    assert "+2.97" not in ar.key_text(qk) and ar.key_text(qk) == \
        "−0.51 [−3.10, +2.08] points (check failed: softmax with − without QK-norm)"
    assert qk.greyed and rows[1].greyed and not rows[2].greyed
    assert ar.key_text(rows[1]).endswith("untested: no model learned the task")
    table = ar.table_markdown(rows, links=False)
    assert table.count("\n") == 4 and "**not testable as designed**†" in table
    assert ar.legend_line(rows) == "† margin, rule or chance level fixed after some runs were seen."


def test_the_intro_table_folds_repeated_notes_into_markers_with_one_legend_line():
    from polyattn.book.verdict_rows import fold_notes, verdict_table

    text, marks = fold_notes("a; deciding needs about 40 pairs, more than this book can run. Margin ±1. "
                             "*Registered late: on 2 December.* *Chance level registered late: later.*")
    assert text == "a; deciding needs about 40 pairs§. Margin ±1." and set(marks) == {"§", "†"}
    rows = {"thm41_1": {"form": "holds", "summary": "x. *Registered late: then.*", "chapter": "02_proofs",
                        "preset": "book"},
            "thm41_2": {"form": "holds", "summary": "y. *Registered late: then.*", "chapter": "02_proofs",
                        "preset": "book"}}
    table = verdict_table({}, verdicts=rows)
    assert table.count("Registered late") == 0 and table.count("**holds**†") == 2
    assert table.splitlines()[0].startswith("† margin, rule or chance level fixed after some runs were seen")


def _rows(planted, extra=()):
    rows = ar.answer_rows(planted, ["table_parity", "norm_intervention", "qk_norm", "length_scale_needed", *extra])
    return rows


def test_the_forest_has_one_row_per_table_row_in_order_with_axes_at_top_and_bottom(planted):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = _rows(planted)
    fig = forest.forest_figure(rows)
    fig.canvas.draw()
    axes = fig.axes
    labels = [t.get_text().replace("\n", " ") for t in axes[0].get_yticklabels()]
    assert labels[::-1] == [r.claim for r in rows]
    # one panel per unit, each with its tick labels at the top and at the bottom
    assert [ax.get_title() for ax in axes] == ["points", "bits/char"]
    for ax in axes:
        ticks = [t for t in ax.xaxis.get_major_ticks() if t.label1.get_text()]
        assert ticks and all(t.label1.get_visible() and t.label2.get_visible() for t in ticks)
    # greyed rows: the grey of untested rows, and the legend names every colour drawn
    drawn = {line.get_color() for ax in axes for line in ax.get_lines() if line.get_marker() == "o"}
    legend = {h.get_color() for h in fig.legends[0].legend_handles if hasattr(h, "get_marker")}
    assert forest.GREY in drawn and drawn <= legend
    plt.close(fig)


def test_an_interval_beyond_the_frame_ends_in_an_arrow(planted):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    planted["family"] = plant("family", "not supported",
                              **{c.id: dict(mean=-15.3, lo=-17.8, hi=-12.9, res="worse", outcome="contradicts")
                                 for c in REGISTER["family"].comparisons})
    rows = _rows(planted, ["family"])
    fig = forest.forest_figure(rows)
    ax = fig.axes[0]
    assert ax.get_xlim()[0] > -12.9
    arrows = [line for line in ax.get_lines() if line.get_marker() == "<"]
    assert len(arrows) == 1 and arrows[0].get_xdata()[0] == pytest.approx(ax.get_xlim()[0])
    assert any(t.get_text() == "−15.3" for t in ax.texts)  # the estimate written beside its arrow
    plt.close(fig)


def test_the_forest_is_an_svg_at_the_column_width_with_text_of_at_least_9_points(planted, tmp_path):
    path = forest.save_forest(_rows(planted), tmp_path / "forest.svg")
    svg = path.read_text()
    width = re.search(r'<svg[^>]* width="([\d.]+)pt"', svg)
    assert width and float(width.group(1)) * 96 / 72 == pytest.approx(forest.WIDTH_PX)
    sizes = forest.svg_text_sizes(svg)
    assert len(sizes) > 20 and min(s for _, s in sizes) >= forest.MIN_PT
    assert "$" not in "".join(t for t, _ in sizes) and "\\" not in "".join(t for t, _ in sizes)
    # the same text is kept as text, not outlines, and is deterministic
    assert "x³/√N matches softmax" in svg
    assert forest.save_forest(_rows(planted), tmp_path / "again.svg").read_text() == svg


def test_svg_text_sizes_reads_the_size_as_shown_at_the_column():
    wide = 2 * forest.WIDTH_PX * 3 / 4  # points: twice the column
    svg = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{wide:g}pt" height="100pt" viewBox="0 0 {wide:g} 100">'
           '<text style="font: 9px \'DejaVu Sans\'">a</text></svg>')
    # drawn twice as wide as the column: shown at half its size
    assert forest.svg_text_sizes(svg) == [("a", pytest.approx(4.5))]
    assert not math.isnan(forest.svg_text_sizes(svg)[0][1])


def test_a_chapters_findings_key_each_claim_by_its_deciding_primary():
    from polyattn.book.deliver import findings
    from polyattn.claims.evaluate import evaluate

    text = findings("09_critiques", glue_it=False)
    line = next(row for row in text.splitlines() if row.startswith("|") and "QK-norm" in row.split(" | ")[0])
    key = ar.deciding(evaluate("qk_norm"))
    assert key.comparison.role == "primary"
    assert line.rstrip(" |").split(" | ")[2] == ar.key_text(ar.answer_rows({"qk_norm": evaluate("qk_norm")})[0])
    assert "(control):" not in line
    assert text.count("fixed after some runs were seen") <= 1


def test_a_result_the_rule_adds_later_gets_a_colour_of_its_own_in_the_legend(planted):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    r = planted["table_parity"].comparisons[0]
    r.result, r.outcome = "worse by less than the margin", "supports"
    rows = _rows(planted)
    fig = forest.forest_figure(rows)
    legend = {h.get_label(): h.get_color() for h in fig.legends[0].legend_handles if hasattr(h, "get_marker")}
    assert legend["worse by less than the margin"] not in {c for k, c in legend.items()
                                                          if k != "worse by less than the margin"}
    plt.close(fig)


def test_an_uninformative_comparison_names_the_gate_its_models_did_not_clear():
    from types import SimpleNamespace

    from polyattn.book.questions import _floor_words

    r = SimpleNamespace(gate="the count-based trigram (and within 0.15 bits/char of its own T = 64 result)",
                        gate_failed=False, result="uninformative", comparison=SimpleNamespace(),
                        candidate_learned=False, baseline_learned=False)
    assert _floor_words(r) == "no model beat the count-based trigram"
    r.gate, r.result = None, "uninformative"
    assert _floor_words(r) == "no model learned the task"
