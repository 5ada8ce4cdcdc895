"""What a page shows, glued: values for its text, and tables, Markdown or figures for its folded
parts (a ``{glue}`` directive inside a MyST ``{dropdown}``).

    glue_values("ch06", {"beta": "30"})      # {glue:text}`ch06_beta`
    fold("ch06_fold_probes", table)           # ```{glue} ch06_fold_probes``` in a dropdown
"""
from __future__ import annotations

from typing import Mapping, Sequence

from ..book.deliver import glue

#: A table shown in the page's flow: small type, caption included.
COMPACT = [{"selector": "th, td", "props": "font-size: 0.85em"}, {"selector": "caption", "props": "font-size: 0.85em"}]

#: What a fold says where the preset has nothing to show.
NOTHING = "Nothing to show at this preset: its records are not stored."


def glue_values(prefix: str, values: Mapping[str, object]) -> None:
    """Glue each value as ``<prefix>_<key>`` (as ``<key>`` with an empty prefix) for the page's
    ``{glue:text}`` and ``{glue:md}`` references."""
    for key, value in values.items():
        glue(f"{prefix}_{key}" if prefix else key, value, display=False)


def glue_keyed(values: Mapping[str, object]) -> None:
    """Glue each value under its own key (the keys name the page already)."""
    glue_values("", values)


def fold(name: str, shown, empty=None) -> None:
    """Glue a table, Markdown or figure for a folded part of the page; a figure is closed so that
    it is not also shown where it is made, and nothing to show (``None``) glues ``empty`` (by
    default :data:`NOTHING`)."""
    from IPython.display import Markdown

    if shown is None:
        shown = Markdown(NOTHING) if empty is None else empty
    glue(name, shown, display=False)
    if hasattr(shown, "savefig"):
        import matplotlib.pyplot as plt

        plt.close(shown)


def compact(table, nowrap: Sequence[str] = (), full_width: bool = False):
    """A styled table in :data:`COMPACT` form (small type, caption included), with the columns ``nowrap``
    kept on one line and, with ``full_width``, across the page's column; None and a Markdown note are
    returned as they are."""
    if table is None or not hasattr(table, "set_table_styles"):
        return table
    table = table.set_table_styles(COMPACT, overwrite=False)
    if full_width:
        table = table.set_table_attributes('style="width: 100%"')
    columns = [c for c in nowrap if c in table.data.columns]
    return table.set_properties(subset=columns, **{"white-space": "nowrap"}) if columns else table
