import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.colors import to_rgb  # noqa: E402

from polyattn import activations, plotting  # noqa: E402


def test_every_book_spec_has_its_own_explicit_colour():
    colours = [plotting.activation_color(s) for s in activations.BOOK_SPECS]
    assert set(plotting.BOOK_COLORS) == set(activations.BOOK_SPECS)
    assert len(set(colours)) == len(colours)
    for c in colours:
        to_rgb(c)  # a valid matplotlib colour


def test_colour_follows_the_canonical_spec():
    assert plotting.activation_color("poly:p=3,c=2/28") == plotting.activation_color("poly:p=3,c=1/14")
    assert plotting.activation_color("poly:p=3,c=1/14") == plotting.BOOK_COLORS["poly:p=3,c=1/14"]


def test_fallback_colour_is_deterministic_and_distinct_from_book_colours():
    a = plotting.activation_color("poly:p=5")
    assert a == plotting.activation_color("poly:p=5")
    assert a in plotting.FALLBACK_COLORS
    assert not set(plotting.FALLBACK_COLORS) & set(plotting.BOOK_COLORS.values())
    # different specs spread over the fallback palette
    others = {plotting.activation_color(f"poly:p={p}") for p in range(4, 30)}
    assert len(others) > 5
    # a name that is not a spec still gets a colour
    assert plotting.activation_color("my-own-thing") in plotting.FALLBACK_COLORS


def test_activation_order_puts_book_specs_first_in_book_order():
    specs = ["zeta", "sigmoid", "poly:p=5", "softmax", "sigmoid", "poly:p=3"]
    assert plotting.activation_order(specs) == ["softmax", "poly:p=3", "sigmoid", "poly:p=5", "zeta"]


def test_palette_maps_given_names():
    pal = plotting.activation_palette(["poly:p=3", "softmax"])
    assert list(pal) == ["softmax", "poly:p=3"]
    assert pal["softmax"] == plotting.BOOK_COLORS["softmax"]


def test_setup_outside_ipython_sets_theme():
    plotting.setup()
    assert matplotlib.rcParams["svg.fonttype"] == "none"


def test_setup_adds_installed_fallback_fonts_after_the_theme_font_and_skips_absent_ones(monkeypatch):
    monkeypatch.setattr(plotting, "FALLBACK_FONTS", (("No Such Font At All", "/no/such/font.ttf"),))
    plotting.setup()
    assert "No Such Font At All" not in matplotlib.rcParams["font.family"]
    from matplotlib import font_manager

    present = font_manager.fontManager.ttflist[0].name
    monkeypatch.setattr(plotting, "FALLBACK_FONTS", ((present, "/no/such/font.ttf"),))
    plotting.setup()
    families = matplotlib.rcParams["font.family"]
    assert families[-1] == present and families.count(present) == 1


def test_stamp_writes_preset_and_warns_under_smoke():
    fig, ax = plt.subplots()
    t = plotting.stamp(ax, "smoke", "8 seeds")
    assert "smoke" in t.get_text() and "not evidence" in t.get_text() and "8 seeds" in t.get_text()
    t2 = plotting.stamp(fig, "book")
    assert t2.get_text() == "preset book"
    with pytest.raises(ValueError, match="preset"):
        plotting.stamp(ax, "")
    with pytest.raises(ValueError, match="location"):
        plotting.stamp(ax, "book", loc="middle")
    assert t.get_fontsize() >= 9 and t2.get_fontsize() >= 9  # readable, not the old 7 pt
    plt.close(fig)


def test_line_plot_averages_repeats_and_uses_book_colours():
    df = pd.DataFrame({
        "activation": ["softmax"] * 4 + ["poly:p=3"] * 2,
        "N": [4, 4, 8, 8, 4, 8],
        "value": [1.0, 3.0, 5.0, 7.0, 2.0, 4.0],
    })
    fig, ax = plt.subplots()
    plotting.line_plot(df, x="N", y="value", ax=ax, logx=True)
    lines = {ln.get_label(): ln for ln in ax.get_lines()}
    assert list(lines) == ["softmax", "poly:p=3"]
    assert list(lines["softmax"].get_ydata()) == [2.0, 6.0]
    assert to_rgb(lines["softmax"].get_color()) == to_rgb(plotting.BOOK_COLORS["softmax"])
    assert ax.get_xscale() == "log"
    assert len(ax.collections) == 1  # a band only where there are repeats
    plt.close(fig)


def test_line_plot_names_missing_column():
    df = pd.DataFrame({"activation": ["softmax"], "N": [1]})
    with pytest.raises(ValueError, match="'value'"):
        plotting.line_plot(df, x="N", y="value")


def test_reference_line_checks_shapes():
    fig, ax = plt.subplots()
    plotting.reference_line(ax, [1, 2], [1, 2], "y=x")
    with pytest.raises(ValueError, match="shape"):
        plotting.reference_line(ax, [1, 2], [1], "bad")
    plt.close(fig)


def test_group_panels_draw_each_group_with_the_reference_in_grey():
    from polyattn import survey

    df = pd.DataFrame([{"activation": s, "N": n, "v": float(n)} for s in activations.BOOK_SPECS for n in (4, 16)])
    fig, axes = plt.subplots(1, len(survey.FIGURE_GROUPS))
    used = plotting.group_panels(df, "N", "v", survey.FIGURE_GROUPS, axes, marker="")
    grouped = [s for _, specs in survey.FIGURE_GROUPS for s in specs]
    assert sorted(grouped) == sorted(activations.BOOK_SPECS)          # every activation in exactly one panel
    for ax, (title, specs) in zip(used, survey.FIGURE_GROUPS):
        labels = [line.get_label() for line in ax.get_lines()]
        assert ax.get_title() == title and len(labels) <= 6
        assert set(specs) <= set(labels) and "softmax" in labels
        if "softmax" not in specs:
            ref = next(line for line in ax.get_lines() if line.get_label() == "softmax")
            assert ref.get_color() == plotting.REFERENCE_GREY
    with pytest.raises(ValueError, match="no row of group"):
        plotting.group_panels(df, "N", "v", [("none", ("poly:p=9",))], axes[:1])
    plt.close(fig)


def test_a_wide_figure_is_drawn_at_the_column_width_with_readable_type():
    fig, axes = plt.subplots(1, 3, figsize=(14, 4))
    for ax in axes:
        ax.plot([1, 2], [3, 4], label="x³/√N")
        ax.set(xlabel="N", ylabel="‖A‖_F", title="$x^3/\\sqrt{N}$")
    plotting.legend_outside(axes[-1])
    before, _ = plotting.smallest_label_points(fig)
    assert before < plotting.MIN_LABEL_POINTS  # shrunk by the page: 14 inches do not fit 784 px
    svg = plotting.column_svg(fig)
    after, _ = plotting.smallest_label_points(fig)
    width_pt = float(svg.split('width="', 1)[1].split("pt", 1)[0])
    assert width_pt * 4 / 3 <= plotting.COLUMN_PX + 1 and after >= plotting.MIN_LABEL_POINTS
    assert "$" not in svg and "\\sqrt" not in svg and "x³/√N" in svg  # TeX made plain
    assert '‖<tspan baseline-shift="sub">F</tspan>' in svg and "‖_F" not in svg
    assert "<title>Figure: panels: x³/√N. ‖A‖ against N</title>" in svg
    plt.close(fig)


def test_smallest_label_points_finds_small_type_and_ignores_hidden_ticks():
    fig, ax = plt.subplots(figsize=(5, 3))
    ax.plot([0, 1], [0, 1])
    ax.set_xlabel("N", fontsize=12)
    ax.tick_params(labelsize=10)
    assert plotting.smallest_label_points(fig)[0] >= 9
    ax.text(0.5, 0.5, "tiny", fontsize=6)
    assert plotting.smallest_label_points(fig) == (6, "tiny")
    plt.close(fig)


def test_an_axes_stamp_sits_outside_the_data():
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    ax.set(xlabel="N", title="a panel")
    low, high = plotting.stamp(ax, "smoke", "8 seeds"), plotting.stamp(ax, "book", loc="upper left")
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    box = ax.get_window_extent(renderer)
    assert low.get_window_extent(renderer).y1 <= ax.xaxis.label.get_window_extent(renderer).y0 + 1e-6
    assert high.get_window_extent(renderer).y0 >= box.y1 and high.get_window_extent(renderer).y0 >= \
        ax.title.get_window_extent(renderer).y1 - 1e-6
    plt.close(fig)


def test_plain_text_drops_tex_markup():
    assert plotting.plain_text("$x^3/\\sqrt{N}$") == "x³/√N"
    assert plotting.plain_text("$\\|A\\|_F / \\sqrt{N}$") == "‖A‖_F / √N"
    assert plotting.plain_text("no markup, 5% of runs") == "no markup, 5% of runs"


def test_a_long_stamp_is_set_in_lines_no_wider_than_the_limit():
    fig, ax = plt.subplots()
    note = "3 seeds, a line each; dashed: copy plateau 1/K = 50%, its band grey; dotted: guessing, and the rest"
    lines = plotting.stamp(fig, "smoke", note).get_text().split("\n")
    assert lines[0] == plotting.PRESET_NOTES["smoke"] and len(lines) >= 3
    assert max(map(len, lines)) <= plotting.STAMP_CHARS and " ".join(lines[1:]) == note
    assert plotting.stamp(ax, "book", "8 seeds").get_text() == "preset book | 8 seeds"  # short: one line
    plt.close(fig)


def test_log_ticks_are_plain_text_at_full_size():
    assert [plotting.power_of_ten(v) for v in (1e-4, 1, 10, 1e3, 3e2)] == ["10⁻⁴", "1", "10", "10³", ""]
    fig, ax = plt.subplots()
    ax.plot([1e-4, 1e2], [1, 2])
    ax.set_xscale("log")
    svg = plotting.column_svg(fig)
    sizes = {float(s) for s in __import__("re").findall(r"font-size:\s*([\d.]+)px", svg)}
    assert "10⁻⁴" in svg and min(sizes) >= plotting.MIN_LABEL_POINTS  # no 0.7-size exponent
    plt.close(fig)


def test_powers_of_two_and_symlog_ticks_are_plain_text_too():
    assert [plotting.power_of_ten(v, base=2) for v in (0.125, 1, 2, 16)] == ["2⁻³", "1", "2", "2⁴"]
    assert [plotting.power_of_ten(v) for v in (0, -10, -100)] == ["0", "−10", "−10²"]
    fig, (a, b) = plt.subplots(1, 2)
    a.plot([0.125, 16], [1, 2])
    a.set_xscale("log", base=2)
    b.plot([-100, 100], [1, 2])
    b.set_xscale("symlog")
    svg = plotting.column_svg(fig)
    sizes = {float(s) for s in __import__("re").findall(r"font-size:\s*([\d.]+)px", svg)}
    assert "2⁴" in svg and "−10²" in svg and min(sizes) >= plotting.MIN_LABEL_POINTS
    plt.close(fig)


def test_every_figure_is_drawn_at_one_width_inside_the_text_column():
    from polyattn.book import forest
    from polyattn.studies.critiques import training_speed

    assert forest.WIDTH_PX == training_speed.WIDTH_PX == plotting.COLUMN_PX
    assert plotting.COLUMN_PX < 760  # the column's width in a 1400 px window, where the browser test measures
