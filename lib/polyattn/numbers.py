"""Numbers as a reader of the book reads them: one module, one convention.

Every number on a page, in a table cell, a generated sentence or the README goes through a function
here:

- :func:`number`: a number with a format spec (about three significant figures by default),
  integers as they are;
- :func:`significant`: about ``digits`` significant figures, at most two decimals above 1;
- :func:`fixed` and :func:`signed`: a fixed number of decimals, a signed difference;
- :func:`interval` ``[lo, hi]``, :func:`estimate` ``x [lo, hi]``, :func:`plus_minus` ``x ± y``;
- :func:`percent`, :func:`p_value`, :func:`p_relation`, :func:`scientific`, :func:`square_root`;
- :func:`readable_numbers`: the numbers inside a text (minus signs, powers of ten).

Conventions:

- A missing value (None, NaN, ``pd.NA``) reads :data:`MISSING` ("n/a").  A caller whose blank has a
  meaning of its own (a run that diverged, a comparison without pairs, "none" found) says so by
  passing ``missing``: :data:`DIVERGED` is such a status, not a missing number.
- Negative numbers carry a true minus sign (:data:`MINUS`, U+2212), not a hyphen.
- A value that rounds to zero carries no minus sign: -0.001 at two decimals reads "0.00" ("+0.00"
  when signed).
- An infinite value reads "∞" (with its sign).

This module imports nothing but the standard library, so anything may use it.
"""
from __future__ import annotations

import math
import re
from numbers import Integral

#: What every formatter returns for a missing value (None, NaN, ``pd.NA``) unless told otherwise.
MISSING = "n/a"
#: The text of a cell whose runs diverged: a status of the run, passed by the caller as ``missing``.
DIVERGED = "diverged"
#: The true minus sign of every negative number shown.
MINUS = "\u2212"

_HYPHEN_MINUS = re.compile(r"(?:^|(?<=[\s(\[]))-(?=\d)")
_SCIENTIFIC = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)e([+-])(\d+)\b")
_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")
_SIGN = re.compile(r"(?:.?[<>=^])?([+\- ]?)")


def is_missing(x) -> bool:
    """True for None, NaN and pandas' missing values (``pd.NA``, ``pd.NaT``); infinity is a value."""
    if x is None or type(x).__name__ in ("NAType", "NaTType"):
        return True
    try:
        return bool(x != x)
    except (TypeError, ValueError):
        return False


def readable_numbers(text: str) -> str:
    """The numbers of a text as a reader reads them: a minus sign (not a hyphen) before negative
    numbers, powers of ten written out (2.6 × 10⁻⁹, not 2.6e-09); words, ranges and maths stay."""
    def power(m: re.Match) -> str:
        exp = int(m.group(3)) * (-1 if m.group(2) == "-" else 1)
        return f"{m.group(1)} × 10{str(exp).translate(_SUPERSCRIPT)}"

    return _HYPHEN_MINUS.sub(MINUS, _SCIENTIFIC.sub(power, text))


def _infinite(x: float, sign: str) -> str:
    return (MINUS if x < 0 else "+" if sign == "+" else "") + "∞"


def _unsigned_zero(text: str, sign: str) -> str:
    """``format``'s text without the minus of a value that rounded to zero ("-0.00" -> "0.00")."""
    if text.startswith("-") and not re.search(r"[1-9]", re.split(r"[eE%]", text, maxsplit=1)[0]):
        return (sign if sign in "+ " else "") + text[1:]
    return text


def number(x, fmt: str = ".3g", missing: str = MISSING) -> str:
    """``x`` formatted by ``fmt`` (about three significant figures by default), a true minus sign,
    powers of ten written out (2.4 × 10⁻⁷); an integer (not a bool) as it is, whatever ``fmt``;
    ``missing`` when missing."""
    if is_missing(x):
        return missing
    if isinstance(x, Integral) and not isinstance(x, bool):
        return str(int(x))
    x = float(x)
    sign = _SIGN.match(fmt).group(1)
    if math.isinf(x):
        return _infinite(x, sign)
    return readable_numbers(_unsigned_zero(format(x, fmt), sign))


def fixed(x, decimals: int, signed: bool = False, missing: str = MISSING) -> str:
    """``x`` with ``decimals`` decimals, a true minus sign, a sign when ``signed``; ``missing`` when missing."""
    if is_missing(x):
        return missing
    x = float(x)
    sign = "+" if signed else ""
    if math.isinf(x):
        return _infinite(x, sign)
    return _unsigned_zero(format(x, f"{sign}.{decimals}f"), sign).replace("-", MINUS)


def signed(x, decimals: int = 2, missing: str = MISSING) -> str:
    """A difference: ``x`` with its sign and ``decimals`` decimals ("+0.31", "−1.20")."""
    return fixed(x, decimals, signed=True, missing=missing)


def significant(x, digits: int = 3, signed: bool = False, missing: str = MISSING) -> str:
    """``x`` to about ``digits`` significant figures (at most two decimals for values of 1 or
    more, at most six decimals), with a sign when ``signed``; zero reads "0" ("±0" when signed).
    The figures count from the rounded value: 0.09996 reads "0.100", not "0.1000"."""
    if is_missing(x):
        return missing
    x = float(x)
    if math.isinf(x):
        return _infinite(x, "+" if signed else "")
    if x == 0:
        return "±0" if signed else "0"

    def decimals(magnitude: int) -> int:
        d = max(0, min(6, digits - 1 - magnitude))
        return min(d, 2) if magnitude >= 0 else d

    mag = math.floor(math.log10(abs(x)))
    d = decimals(mag)
    if abs(round(x, d)) >= 10 ** (mag + 1):   # rounding carried into the next power of ten
        d = decimals(mag + 1)
    text = format(x, f".{d}f")
    if signed and x > 0:
        text = "+" + text
    return text.replace("-", MINUS)


def interval(low, high, fmt: str = "+.2f", missing: str = MISSING) -> str:
    """An interval, "[−0.49, +0.01]", each end by :func:`number`; ``missing`` when either end is."""
    if is_missing(low) or is_missing(high):
        return missing
    return f"[{number(low, fmt)}, {number(high, fmt)}]"


def estimate(value, low, high, fmt: str = "+.2f", missing: str = MISSING) -> str:
    """An estimate and its interval, "−0.24 [−0.49, +0.01]"; the estimate alone when the interval
    is missing, ``missing`` when the estimate is."""
    if is_missing(value):
        return missing
    if is_missing(low) or is_missing(high):
        return number(value, fmt)
    return f"{number(value, fmt)} {interval(low, high, fmt)}"


def plus_minus(mean, sd, digits: int = 2, missing: str = MISSING) -> str:
    """"mean ± sd" with ``digits`` decimals; the mean alone when ``sd`` is missing, ``missing``
    when the mean is (a caller whose runs diverged passes ``missing=DIVERGED``)."""
    if is_missing(mean):
        return missing
    if is_missing(sd):
        return fixed(mean, digits)
    return f"{fixed(mean, digits)} ± {fixed(sd, digits)}"


def percent(share, decimals: int = 0, missing: str = MISSING) -> str:
    """A share as a percentage, 0.6667 -> "67%" (``decimals`` decimals); ``missing`` when missing."""
    if is_missing(share):
        return missing
    share = float(share)
    if math.isinf(share):
        return _infinite(share, "") + "%"
    return _unsigned_zero(format(share, f".{decimals}%"), "").replace("-", MINUS)


def p_value(p, missing: str = MISSING) -> str:
    """A p-value: "< 0.001" below a thousandth, else two significant figures."""
    if is_missing(p):
        return missing
    return "< 0.001" if p < 0.001 else significant(p, 2)


def p_relation(p, missing: str = MISSING) -> str:
    """"< 0.001" or "= 0.04": a p-value after the word p."""
    s = p_value(p, missing)
    return s if s.startswith("<") else f"= {s}"


def scientific(x: float, digits: int = 2) -> str:
    """``x`` in scientific notation for readers: 7.1 × 10⁻²⁸ (not 7.1e-28)."""
    return number(x if is_missing(x) else float(x), f".{digits - 1}e")


def square_root(n: float) -> str:
    """√n for a sentence: a whole number when n is a perfect square (196 -> "14"), else two
    decimals (192 -> "13.86")."""
    r = math.sqrt(n)
    return f"{r:.0f}" if r == int(r) else f"{r:.2f}"
