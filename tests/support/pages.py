"""Helpers for the tests of the book's page modules: planted probe rows, a styled table's rows and
the words that state a result."""

#: The words of a result; a description (difference, interval, pairs) uses none of them.
RESULT_WORDS = ("equivalent", "better", "worse", "inconclusive", "holds", "not supported")


def probe_rows(values: dict, steps=(0, 10), layers=(0, 1), heads=(0, 1)) -> list[dict]:
    """Probe rows: ``values[metric]`` is a number, or a function of the step."""
    return [{"step": s, "layer": layer, "head": h, "metric": m, "value": v(s) if callable(v) else v}
            for m, v in values.items() for s in steps for layer in layers for h in heads]


def table_rows(styler) -> list[dict]:
    """The rows of a styled table, as dicts."""
    return styler.data.to_dict("records")
