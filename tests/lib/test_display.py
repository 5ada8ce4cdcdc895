import re

from polyattn import display
from polyattn.activations import BOOK_SPECS
from polyattn.activations_extra import EXTRA_SPECS


def test_every_book_spec_has_a_human_name_without_spec_syntax():
    for spec in BOOK_SPECS + EXTRA_SPECS:
        n = display.name(spec)
        assert ":" not in n and not re.search(r"\w=\w", n), (spec, n)


def test_polynomial_names_follow_their_scale():
    assert display.name("poly:p=3") == "x³/√N"
    assert display.name("poly:p=3,c=1/14") == "x³/14"
    assert display.name("poly:p=5,c=1/8") == "x⁵/8"
    assert display.name("poly:p=7") == "x⁷/√N"
    assert display.name("poly:p=3,c=1") == "x³ (unscaled)"
    assert display.column("tost_p") == "TOST p" and display.column("some_key") == "some key"


def test_run_labels_read_as_maths_without_ascii_syntax():
    assert display.label("x^3/sqrt(i+1)") == "x³/√(i+1)"
    assert display.label("x^3/sqrt(T)") == "x³/√T"
    assert display.label("Swin with x^3/14 against x^3/sqrt(16)") == "Swin with x³/14 against x³/√16"
    assert display.label("x^3/sqrt(N), N = tokens") == "x³/√N, N = tokens"
    assert display.label("Poly2 (ReLU^2 / row sum)") == "Poly2 (ReLU² / row sum)"
    assert display.label("x^3/14") == display.name("poly:p=3,c=1/14")
    assert display.label("SA-Softmax") == "SA-Softmax"


def test_typographic_writes_minus_signs_and_powers_of_ten_and_leaves_ranges_and_maths_alone():
    from polyattn.display import typographic
    from polyattn.numbers import scientific

    assert typographic("from 0.045 to 2.6e-09 and 5.89e+03 (CI -0.71 to +0.88), alpha 0.05") == \
        "from 0.045 to 2.6 × 10⁻⁹ and 5.89 × 10³ (CI −0.71 to +0.88), α = 0.05"
    assert typographic("seeds 3-5, $N^{-1/2}$, x-axis") == "seeds 3-5, $N^{-1/2}$, x-axis"
    assert scientific(7.1e-28) == "7.1 × 10⁻²⁸"


def test_readable_numbers_leave_words_alone_and_tables_and_glue_use_them(monkeypatch):
    from IPython.display import Markdown

    from polyattn.book import deliver
    from polyattn.numbers import readable_numbers

    assert readable_numbers("alpha 0.05, -0.28 [-0.30, -0.26], 9.9e-06") == "alpha 0.05, −0.28 [−0.30, −0.26], 9.9 × 10⁻⁶"
    table = deliver.styled([{"Δ [95% CI]": "-0.282 [-0.303, -0.261]", "p": "9.9e-06", "seeds": 3}], "at 1e-05")
    assert table.data.iloc[0].tolist() == ["−0.282 [−0.303, −0.261]", "9.9 × 10⁻⁶", 3]
    assert table.caption == "at 1 × 10⁻⁵"
    glued = {}
    monkeypatch.setattr("myst_nb.glue", lambda name, value, display=True: glued.__setitem__(name, value))
    deliver.glue("a", "falls to 2.56e-09", display=False)
    deliver.glue("b", Markdown("a factor 5.8e-08 at $p = 7$"), display=False)
    deliver.glue("c", 2.56e-09, display=False)
    assert glued["a"] == "falls to 2.56 × 10⁻⁹" and glued["b"].data == "a factor 5.8 × 10⁻⁸ at $p = 7$"
    assert glued["c"] == 2.56e-09      # a float stays a float: the page formats it
