"""The answer on one screen: written from the claim register, the same in README and intro."""
import json
from pathlib import Path

import pytest

from polyattn.book import answer

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.committed
def test_the_readme_answer_is_what_the_committed_records_give():
    text = (ROOT / "README.md").read_text()
    block = text.split(answer.ANSWER_START, 1)[1].split(answer.ANSWER_END, 1)[0].strip()
    assert block == answer.answer_block().strip(), \
        "README.md's answer block differs from the stored records: run `python -m polyattn verdicts`"


def test_the_answer_table_fits_one_screen_and_every_verdict_word_is_in_the_legend():
    from polyattn.book.answer_rows import answer_rows
    from polyattn.claims.evaluate import evaluate_all

    verdicts = evaluate_all()
    rows = answer_rows(verdicts)
    assert 1 <= len(rows) <= 20
    legend = answer.legend_markdown()
    assert all(f"**{r.form}**" in legend for r in rows)
    # the markers' legend stands once, above the table
    block = answer.answer_block(verdicts)
    assert block.count("fixed after some runs were seen") == 1
    assert block.index("fixed after some runs were seen") < block.index("| claim | verdict | key number |")


def test_replace_answer_needs_its_markers():
    assert answer.replace_answer(f"a\n{answer.ANSWER_START}\nold\n{answer.ANSWER_END}\nb", "new") == \
        f"a\n{answer.ANSWER_START}\nnew\n{answer.ANSWER_END}\nb"
    with pytest.raises(ValueError, match="no answer markers"):
        answer.replace_answer("nothing", "new")


def test_the_intro_answer_has_its_figure_and_links(tmp_path):
    md = answer.intro_answer(tmp_path)
    assert (tmp_path / answer.FOREST_FILE).stat().st_size > 10_000
    assert "{ref}`04 <claim-table-parity>`" in md and "```{figure} answer_forest.svg" in md
    assert (tmp_path / answer.FOREST_FILE).read_text().lstrip().startswith("<?xml")
    assert "**What the verdict words mean.**" in md
    # what each claim rests on: collapsed, under the figure, one row per claim with runs; the legend once
    start = md.index(f"```{{dropdown}} {answer.SCOPE_TITLE}\n")
    end = md.index("\n```\n", start)
    assert md.index("**What the verdict words mean.**") < md.index("```{figure}") < start
    assert md.count("**What the verdict words mean.**") == 1
    block = md[start:end].splitlines()
    table = [line for line in block if line.startswith("|")]
    assert table[0] == "| claim | experiment (data) | N | training | CPU-hours | verdict |"
    assert len(table) - 2 >= 10 and all(line.count(" | ") == 5 for line in table)
    assert any("Fashion-MNIST" in line and "Table 1 analogue" in line for line in table)


@pytest.mark.committed
def test_the_committed_verdicts_and_readme_blocks_are_what_the_records_give_without_a_chapter(repo_root):
    """`python -m polyattn verdicts --check`: every register row of data/verdicts.json and both README
    blocks, recomputed from the committed records in seconds."""
    from polyattn.book import verdicts

    assert verdicts.differences(repo_root) == [], "run `python -m polyattn verdicts`"


def test_every_row_of_the_verdict_table_is_computed_by_the_command(repo_root):
    from polyattn.book import verdicts
    from polyattn.book.verdict_rows import CLAIMS
    from polyattn.claims.register import REGISTER

    rows = verdicts.register_rows()
    # every row, measured claims included, is computed from the records; only costs are not written
    assert set(rows) == {c.id for c in CLAIMS if not c.machine_dependent}
    assert "norm_intervention" in rows and verdicts.register_id("norm_intervention") in REGISTER
    assert all(r["preset"] == "book" and r["summary"] for r in rows.values())


def test_the_verdicts_command_reports_a_stale_file(tmp_path):
    import shutil

    from polyattn.book import verdicts

    (tmp_path / "data").mkdir()
    shutil.copy(verdicts.REPO_ROOT / verdicts.VERDICTS_FILE, tmp_path / verdicts.VERDICTS_FILE)
    shutil.copy(verdicts.REPO_ROOT / "README.md", tmp_path / "README.md")
    assert verdicts.differences(tmp_path) == []
    stale = json.loads((tmp_path / verdicts.VERDICTS_FILE).read_text())
    stale["table_parity"]["form"] = "holds"
    (tmp_path / verdicts.VERDICTS_FILE).write_text(json.dumps(stale))
    assert any("table_parity" in d for d in verdicts.differences(tmp_path))
    verdicts.write(tmp_path)
    assert verdicts.differences(tmp_path) == []


def test_the_three_questions_are_answered_from_the_register_with_their_numbers():
    from polyattn.book.answer import questions_markdown
    from polyattn.book.questions import ANSWER_WORDS, MAX_WORDS, QUESTIONS, answer_form, word_count
    from polyattn.claims.evaluate import evaluate_all
    from polyattn.claims.report import estimate_cell

    verdicts = evaluate_all()
    text = questions_markdown(verdicts)
    assert [line[:3] for line in text.splitlines()] == ["1. ", "2. ", "3. "]
    answers = [line.split("?** ", 1)[1] for line in text.splitlines()]
    for said, q in zip(answers, QUESTIONS):
        key = next(r for r in verdicts[q.claim].comparisons if r.comparison.id == q.parts[0].comparison)
        form = answer_form(verdicts[q.claim], q, key)
        assert said.startswith(f"**{ANSWER_WORDS.get(form, form)}"), said
        assert estimate_cell(key) in said
    assert all(word_count(a) <= MAX_WORDS for a in answers)
    linked = questions_markdown(verdicts, links=True)
    assert "({ref}`chapter 04 <claim-marked-garment>`)" in linked.splitlines()[0]
    assert "({ref}`chapter 03 <claim-norm-dose-response>`)" in linked.splitlines()[2]


def test_the_readme_lists_every_slow_test_with_its_purpose(repo_root):
    import subprocess
    import sys

    text = (repo_root / "README.md").read_text()
    block = text.split("<!-- slow tests: checked by tests/book/test_answer.py -->", 1)[1].split(
        "<!-- end of slow tests -->", 1)[0]
    listed = {line.split("`")[1] for line in block.splitlines() if line.startswith("- `")}
    out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-m", "slow or book", "tests"],
                         capture_output=True, text=True, cwd=repo_root).stdout
    marked = {line.split("::")[-1].split("[")[0] for line in out.splitlines() if "::" in line}
    assert marked == listed, f"slow tests not listed: {sorted(marked - listed)}; listed but not slow: {sorted(listed - marked)}"


def test_a_row_that_a_register_claim_decides_states_the_registers_statement():
    from polyattn.book.verdict_rows import CLAIMS, statement
    from polyattn.book.verdicts import register_id
    from polyattn.claims.register import MEASURED, REGISTER

    rows = {c.id: c for c in CLAIMS}
    assert statement(rows["table_parity"]) == REGISTER["table_parity"].statement
    assert statement(rows["norm_intervention"]) == REGISTER["norm_intervention"].statement
    assert register_id("thm41_1") is None and statement(rows["thm41_1"]) == MEASURED["thm41_1"].statement


def test_the_convection_finding_counts_the_seeds_that_solve_it_at_each_budget():
    from types import SimpleNamespace as NS

    from polyattn.book.answer import _physics_longer

    def verdict(solved, n, scale):
        r = NS(comparison=NS(label="x³/√N − softmax, convection"), learned_counts=(solved, n, n), n=n,
               result="inconclusive")
        return NS(comparisons=[r], claim=NS(scale=scale))

    text = _physics_longer(verdict(0, 5, "short"), verdict(3, 3, "long"))
    assert "solves it in 0 of 5 seeds" in text and "in 3 of 3 with more steps" in text and "softmax 5 of 5" in text
    assert _physics_longer(verdict(0, 5, "short"), None) == ""
    assert _physics_longer(verdict(0, 1, "short"), verdict(3, 3, "long")) == ""


def test_the_findings_lead_recall_with_the_setting_where_softmax_learns_and_headlines_follow_the_verdicts():
    from polyattn.claims.evaluate import evaluate_all

    verdicts = evaluate_all()
    recall = next(line for line in answer.findings_markdown(verdicts).splitlines() if "(MQAR)" in line)
    assert recall.index("Where softmax learns it") < recall.index("At the book's budget")
    assert f"reads **{verdicts['mqar_recall'].form}**" in recall
    assert f"**{verdicts['nope_lm'].form}**" in answer.findings_markdown(verdicts)
    assert answer.findings_markdown({}) == ""


def test_the_legend_names_every_form_the_rule_gives_and_nothing_else():
    from polyattn.claims import rule

    assert sorted(rule.LEGEND) == sorted(rule.FORMS), (
        f"polyattn.claims.rule.LEGEND must define every form of FORMS once: missing "
        f"{sorted(set(rule.FORMS) - set(rule.LEGEND))}, extra {sorted(set(rule.LEGEND) - set(rule.FORMS))}")
    words = [line.split("**")[1] for line in answer.legend_markdown().splitlines()]
    assert sorted(words) == sorted(rule.FORMS)


def test_the_result_legend_names_every_result_a_comparison_can_have():
    from polyattn.analysis import results

    assert sorted(results.RESULT_LEGEND) == sorted(results.RESULTS)
    words = [line.split("*")[1] for line in answer.result_legend_markdown().splitlines()]
    assert sorted(words) == sorted(results.RESULTS)
    # "worse" and "better" need the 95% interval beyond the margin, as comparison_result decides: the
    # same detectable difference whose interval crosses the margin's edge is of unclear size
    for word, mean, beyond, crossing in (("worse", -2.0, (-3.0, -1.5), (-3.0, -0.5)),
                                         ("better", 2.0, (1.5, 3.0), (0.5, 3.0))):
        def decide(ci):
            return results.comparison_result(n=5, mean=mean, ci_low=ci[0], ci_high=ci[1], holm_p=0.01,
                                             equivalent=False, alpha=0.05, margin=1.0)

        assert decide(beyond) == word and "beyond the margin" in results.RESULT_LEGEND[word]
        assert decide(crossing) == f"{word}, size unclear"
        assert "crosses the margin's edge" in results.RESULT_LEGEND[f"{word}, size unclear"]


def test_the_readme_shows_the_rules_legend_as_the_code_writes_it(repo_root):
    text = (repo_root / "README.md").read_text()
    shown = text.split("**What the verdict words mean.**", 1)[1].strip().split("\n\n", 1)[0]
    assert shown == answer.legend_markdown(), \
        "README.md's legend differs from polyattn.claims.rule.LEGEND: run `python -m polyattn verdicts`"


def test_the_intro_types_no_legend_of_its_own_and_its_built_page_shows_the_rules(repo_root, tmp_path):
    from polyattn.analysis.results import RESULTS
    from polyattn.book import site
    from polyattn.claims.rule import FORMS

    source = (repo_root / "intro.md").read_text()
    assert answer.ANSWER_MARKER in source and answer.RESULT_LEGEND_MARKER in source
    typed = [w for w in FORMS + RESULTS if f"**{w}**" in source or f"*{w}*" in source]
    assert not typed, f"intro.md defines {typed} by hand; the legends are written from the rule by code"
    built = site._replace_marker(source, answer.RESULT_LEGEND_MARKER, answer.result_legend_markdown())
    assert answer.result_legend_markdown() in built and answer.RESULT_LEGEND_MARKER not in built
