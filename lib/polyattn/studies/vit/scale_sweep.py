"""Chapter 04's section on which scale wins at which length (the paper's Figure 1): the best
constant of c·x³ per length, which sweep decides the measured claim ``fig1_scale``, and the longer
sweep at its complete lengths.

    sweep_table(records, preset, caption)        # the best constant per length of a sweep
    glue_values(fig1_numbers(numbers))           # the deciding sweep, its scale, the best constants
    glue_values(long_sweep_numbers(numbers))     # the longer sweep and its flattest length
    long_sweep_table(numbers)                    # one row per complete length

``numbers`` are the measured claim's (``deliver("fig1_scale").verdict.numbers``).
"""
from __future__ import annotations

from typing import Mapping, Sequence

from ... import analysis
from ...book.deliver import styled
from ...book.views import SMALL, best_view
from ...measures import scale
from .page import number_text


def sweep_table(records: list[dict], preset: str, caption_text: str):
    """The best constant per length of a sweep's records (:func:`polyattn.book.views.best_view`)."""
    if not records:
        return None
    best = analysis.best_constant(analysis.final_accuracy(records), n_boot=1000, seed=0)
    return best_view(best, f"{caption_text}, preset {preset}")


def fig1_numbers(numbers: Mapping[str, object]) -> dict[str, object]:
    """Which sweep decides the measured claim ``fig1_scale``, at what scale, and its best constant
    per length, for the prose (the slope and its interval are in the claim's sentence)."""
    from IPython.display import Markdown

    lengths = sorted(int(k.removeprefix("best c at N = ")) for k in numbers if k.startswith("best c at N = "))
    return {"ch04_best_by_length": ", ".join(f"{numbers[f'best c at N = {n}']} at N = {n}" for n in lengths) or "none",
            "ch04_deciding_sweep": "the longer sweep" if numbers["deciding sweep"] == scale.LONG_GRID
            else "the short sweep",
            "ch04_deciding_scale": Markdown(str(numbers["deciding sweep scale"]))}


def long_lengths(numbers: Mapping[str, object]) -> list[int]:
    """The lengths of the longer sweep whose runs are all stored."""
    return [int(n) for n in str(numbers.get("long sweep complete lengths", "")).split(", ") if n]


def long_sweep_table(numbers: Mapping[str, object]):
    """The longer sweep, one row per complete length: the mean accuracy of each constant, the
    spread across the constants, the largest seed standard deviation and the measure's reading
    (None while no length is complete)."""
    lengths = long_lengths(numbers)
    if not lengths:
        return None
    consts = list(dict.fromkeys(k.split(": c = ")[1].removesuffix(" (%)") for k in numbers
                                if k.startswith("long sweep N = ") and ": c = " in k))
    rows = [{"N": str(n),
             **{f"c = {c} (%)": number_text(numbers.get(f"long sweep N = {n}: c = {c} (%)"), ".2f", "–") for c in consts},
             "Spread (points)": number_text(numbers[f"long sweep N = {n}: spread (points)"]),
             "Largest seed sd": number_text(numbers[f"long sweep N = {n}: largest seed sd (points)"]),
             "Reading": numbers[f"long sweep N = {n}: flat"]} for n in lengths]
    scale = str(numbers["long sweep scale"]).replace("$", "")
    return styled(rows, f"The longer sweep at its complete lengths ({scale}): mean test accuracy over seeds per "
                        f"constant c of c·x³, the spread across the constants, the largest seed standard deviation "
                        f"of a constant (points) and the measure's reading (flat: spread under "
                        f"{numbers['flat spread (points)']:g} point); the book preset's committed records"
                  ).set_table_styles(SMALL, overwrite=False)


def _ratio(constants: Sequence[str]) -> float:
    """The largest constant of a grid over its smallest ("1/8" .. "32" -> 256)."""
    from fractions import Fraction

    values = [Fraction(c) for c in constants]
    return float(max(values) / min(values))


def long_sweep_numbers(numbers: Mapping[str, object]) -> dict[str, object]:
    """The longer sweep for the prose: its scale, constants, stored runs, and its flattest complete
    length with the spread, the best and worst constants and the largest seed standard deviation."""
    from IPython.display import Markdown

    from ...experiments import vit

    long_grid = vit.scale_sweep_long("book")
    out = {"ch04_long_scale": Markdown(f"{numbers['long sweep scale']}, batch {long_grid[0].batch_size}"),
           "ch04_long_constants": "{" + ", ".join(vit.SWEEP_LONG_CONSTANTS) + "}",
           "ch04_long_ratio": f"{_ratio(vit.SWEEP_LONG_CONSTANTS):g}",
           "ch04_long_seeds": str(len({c.seed for c in long_grid})),
           "ch04_long_stored": f"{numbers['long sweep runs stored']} of {numbers['long sweep runs planned']}",
           "ch04_short_scale": f"{vit.scale_sweep('book')[0].train_subset:,} images for "
                               f"{vit.scale_sweep('book')[0].epochs} epochs",
           "ch04_flat_margin": f"{numbers['flat spread (points)']:g}"}
    lengths = long_lengths(numbers)
    out["ch04_long_spreads"] = " and ".join(
        f"{number_text(numbers[f'long sweep N = {n}: spread (points)'])} points at N = {n}" for n in lengths) \
        or "nothing yet"
    formats = {"N": ("{}", "ch04_flat_n"), "spread (points)": ("{:.2f}", "ch04_flat_spread"),
               "best c": ("{}", "ch04_flat_best_c"), "worst c": ("{}", "ch04_flat_worst_c"),
               "best accuracy (%)": ("{:.1f}%", "ch04_flat_best_acc"),
               "worst accuracy (%)": ("{:.1f}%", "ch04_flat_worst_acc"),
               "largest seed sd (points)": ("{:.2f}", "ch04_flat_sd"), "reading": ("{}", "ch04_flat_reading")}
    for key, (fmt, glue_key) in formats.items():
        value = numbers.get(f"long sweep flattest {key}")
        out[glue_key] = fmt.format(value) if value is not None else "not stored"
    return out
