"""Chapter 02's shared page code: the setup, the glue, the formats of numbers and intervals, the
table style and the closing summary."""
import re

import pytest
from support.pages import table_rows
from support.patching import patch_everywhere
from support.proofs_pages import plant_findings

from polyattn import theory
from polyattn.studies.proofs import assumptions as asm
from polyattn.studies.proofs import page
from polyattn.studies.proofs import product_powers as pw


@pytest.fixture
def findings(monkeypatch):
    return plant_findings(monkeypatch)


# --- setup and glued values -------------------------------------------------------------------


def test_the_seed_is_the_presets_default_or_the_first_given():
    assert page.seed_of(None, "book") == theory.preset("book").seed
    assert page.seed_of([3, 4], "smoke") == 3 and page.seed_of(5, "book") == 5
    assert page.setting_values("smoke", 2) == {"preset": "smoke", "seed": "2"}


def test_numbers_are_formatted_by_their_spec():
    out = page.formatted({"n": 1234, "tiny": 1.0036e-5, "r": 0.4999862, "word": "x³/√N"},
                         {"n": "d", "tiny": "sci", "r": ".6f", "word": ""}, prefix="a_")
    assert out == {"a_n": "1,234", "a_tiny": "1.0 × 10⁻⁵", "a_r": "0.499986", "a_word": "x³/√N"}
    with pytest.raises(KeyError, match="no number 'absent'"):
        page.formatted({"n": 1}, {"absent": "d"})


def test_each_value_is_glued_under_the_chapters_prefix(monkeypatch):
    import polyattn.book.deliver as deliver

    glued = {}
    patch_everywhere(monkeypatch, deliver, "glue", lambda name, value, display=True: glued.__setitem__(name, value))
    page.glue_all({"t41a_x": "7", "preset": "book"})
    assert glued == {"ch02_t41a_x": "7", "ch02_preset": "book"}


# --- tables -----------------------------------------------------------------------------------


def test_an_interval_is_shown_by_its_half_width_to_the_estimates_decimals():
    assert page.pm_cell(0.505, 0.496, 0.514) == "0.505 ± 0.009"
    assert page.pm_cell(12.01, 11.7, 12.3, "#.3g") == "12.0 ± 0.3" and page.pm_cell(-1.5, -2.0, -1.0, ".1f") == "−1.5 ± 0.5"


def _unbroken(styler) -> set:
    """The elements (th, td) a table's style keeps on one line; asserts the book's padding is kept."""
    rules = re.findall(r"#\w+\s+(\w+) \{([^}]*)\}", styler.to_html().split("</style>")[0])
    assert any(element == "td" and "padding: 0.25em 0.6em" in props for element, props in rules)
    return {element for element, props in rules if "white-space: nowrap" in props}


def test_numbers_in_table_cells_stay_on_one_line_and_the_book_style_is_kept():
    assert _unbroken(pw.moment_ratio_table((1, 3), (1, 64))) == {"td"}
    factors = asm.factors_table()
    _unbroken(factors)
    single = {"N, D, d", "√N", "D factor, ÷ √d"}  # the columns of one number each; "a | b" cells may break
    html = factors.to_html()
    for column in range(len(factors.data.columns)):
        nowrap = re.search(rf"_row0_col{column}[^{{]*\{{[^}}]*white-space: nowrap", html) is not None
        assert nowrap == (factors.data.columns[column] in single), factors.data.columns[column]


# --- what the chapter found -------------------------------------------------------------------


def test_the_findings_table_lists_each_claim_with_its_form(findings):
    findings({}, forms={"thm41_2": "holds with a corrected constant", "critique7_matrix_powers": "not supported"})
    rows = table_rows(page.findings_table())
    assert [r["result"] for r in rows] == [label for _, label, _ in page.CLAIMS]
    assert rows[1]["verdict"] == "holds with a corrected constant" and rows[3]["verdict"] == "not supported"
    findings({"thm41_1": {"matrices_above": 0, "ascent_steps": 300}})
    assert page.claim_numbers("thm41_1") == {"matrices_above": 0, "ascent_steps": 300}
