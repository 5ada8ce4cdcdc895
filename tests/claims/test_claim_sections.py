"""Every registered claim has a section target in its chapter, and the answer table links to it."""
from pathlib import Path

import pytest
from support.planted_records import plant

from polyattn.claims.register import REGISTER
from polyattn.claims.report import answer_markdown, section_label, section_link

CHAPTERS = Path(__file__).resolve().parents[2] / "chapters"


def test_a_claims_label_is_its_id_with_hyphens():
    assert section_label("table_parity") == "claim-table-parity"
    assert section_label("lra_long") == "claim-lra-long"
    assert section_link("table_parity", "04") == "{ref}`04 <claim-table-parity>`"
    assert len({section_label(cid) for cid in REGISTER}) == len(REGISTER)


def _targets(chapter: str) -> dict[str, str]:
    """Label -> the heading it stands before, for every ``(label)=`` line of a chapter that is
    followed (after other targets) by a heading."""
    lines = (CHAPTERS / f"{chapter}.md").read_text().splitlines()
    out = {}
    for i, line in enumerate(lines):
        if line.startswith("(") and line.endswith(")="):
            j = i + 1
            while j < len(lines) and lines[j].startswith("(") and lines[j].endswith(")="):
                j += 1
            if j < len(lines) and lines[j].startswith("#"):
                out[line[1:-2]] = lines[j]
    return out


def test_every_registered_claim_has_its_target_before_a_heading_of_its_chapter():
    missing = [f"{cid} ({c.chapter}.md: ({section_label(cid)})=)" for cid, c in REGISTER.items()
               if section_label(cid) not in _targets(c.chapter)]
    assert not missing, ("registered claims without a section target; put the label on its own line before the "
                         "heading of the section that computes the claim: " + "; ".join(missing))


def test_no_claim_label_is_defined_twice():
    seen = {}
    for md in sorted(CHAPTERS.glob("*.md")):
        for line in md.read_text().splitlines():
            if line.startswith("(claim-") and line.endswith(")="):
                seen.setdefault(line[1:-2], []).append(md.name)
    twice = {label: files for label, files in seen.items() if len(files) > 1}
    assert not twice, f"labels defined more than once (Sphinx refuses duplicates): {twice}"


@pytest.fixture
def verdict(tmp_path, monkeypatch):
    from polyattn import experiments
    from polyattn.claims.evaluate import evaluate
    from polyattn.claims.spec import Arm, Comparison, RegisteredClaim
    from polyattn.config import TrainConfig

    accs = {"softmax": [0.80, 0.81, 0.79], "poly:p=3": [0.78, 0.79, 0.77]}
    configs = [plant(tmp_path, TrainConfig(experiment="unit_links", activation=a, seed=s, preset="smoke"),
                     [{"epoch": 1, "test_acc": v}]) for a, vals in accs.items() for s, v in enumerate(vals)]
    monkeypatch.setitem(experiments.GRIDS, "unit_links",
                        lambda preset, seeds: [c for c in configs if seeds is None or c.seed in seeds])
    claim = RegisteredClaim("unit_claim", "unit claim", "test", "04_vit", margin=1.0, comparisons=(
        Comparison("main", "x³/√N − softmax", Arm("unit_links", {"activation": "poly:p=3"}),
                   Arm("unit_links", {"activation": "softmax"}), "equivalent"),))
    return evaluate(claim, root=tmp_path, preset="smoke")


def test_the_answer_table_links_each_claim_to_its_section(verdict):
    table = answer_markdown({"unit_claim": verdict}, ["unit_claim"]).splitlines()
    assert table[0] == "| claim | verdict | key number |"
    assert table[2].startswith("| {ref}`unit claim <claim-unit-claim>` | **"), table[2]
    plain = answer_markdown({"unit_claim": verdict}, ["unit_claim"], links=False).splitlines()
    assert plain[2].startswith("| unit claim (chapter 04) | **"), plain[2]
    full = answer_markdown({"unit_claim": verdict}, ["unit_claim"], links=False, short=False).splitlines()
    assert full[2].startswith("| unit claim | **") and "chapter" not in full[2]


def test_every_headline_claim_has_a_short_name_that_fits_one_line():
    from polyattn.claims.report import HEADLINE, HEADLINES

    assert set(HEADLINES) == set(HEADLINE)
    too_long = {cid: name for cid, name in HEADLINES.items() if len(name) > 42}
    assert not too_long, f"answer-table names longer than 42 characters wrap: {too_long}"


def test_a_delivered_sentence_opens_with_its_verdict_capitalised():
    from polyattn.book.deliver import deliver

    d = deliver("quadratic", glue_it=False)
    form = d.verdict.form
    assert d.sentence.startswith(f"**{form[0].upper()}{form[1:]}**. ")
    # the form itself stays as the rule names it (tables and the intro use it as it is)
    assert form == form.lower() or not form[0].isalpha()
