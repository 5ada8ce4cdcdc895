"""Chapter 07's section on the survey article's table: the article's perplexity and sink strength
per method beside this chapter's runs of the same formulas, and how far their orderings agree.

    survey_table(lm); glue_values(survey_numbers(lm))

``lm`` is :func:`polyattn.studies.causal.page.charlm_runs` of the page.
"""
from __future__ import annotations

from ...analysis import causal as ca
from ...analysis.tables import number_cell
from ...book.deliver import styled
from .page import Runs, compact, scale_caption

#: The survey article's table, in its own words with a translation.
SURVEY_TABLE_NAME = "\u201cLanguage-modelling task\u201d (语言建模任务 in the original)"


def survey_table(lm: Runs):
    """The article's perplexity and sink strength per method beside this chapter's perplexity per
    character and sink rate, with ranks (1 = lowest) and each perplexity's ratio to softmax's."""
    if not lm:
        return None
    survey = ca.survey_comparison(lm.frame)

    def ranked(r, col, fmt):
        return "" if r[col] != r[col] else f"{number_cell(r[col], fmt)} ({r['rank: ' + col]})"

    rows = [{"method": r["method"], "article: perplexity (rank)": ranked(r, "survey perplexity", ".4g"),
             "ratio to softmax": number_cell(r["survey ratio to softmax"], ".3f"),
             "sink strength (rank)": ranked(r, "survey sink strength", ".2f"),
             "here: perplexity per char (rank)": ranked(r, "book perplexity per char", ".3f"),
             "ratio to softmax ": number_cell(r["book ratio to softmax"], ".3f"),
             "sink rate (rank)": ranked(r, "book sink rate", ".2f")} for _, r in survey.iterrows()]
    return compact(styled(rows, (
        f"The article's table {SURVEY_TABLE_NAME} (no model, data or source given) beside this chapter's runs of "
        f"the same formulas (rank 1 = lowest; perplexity here per character). {scale_caption(lm)}")))


def survey_numbers(lm: Runs) -> dict:
    """How far the article's orderings agree with this chapter's (pairs of methods in the same order,
    reversed, tied), and SA-Softmax's rank at 4x the context."""
    keys = ("ch07_survey_ppl", "ch07_survey_sinks", "ch07_sa_rank")
    out = {"ch07_survey_methods": len(ca.SURVEY_TABLE),
           "ch07_survey_pairs": len(ca.SURVEY_TABLE) * (len(ca.SURVEY_TABLE) - 1) // 2}
    if not lm:
        return {**out, **dict.fromkeys(keys, lm.missing)}
    survey = ca.survey_comparison(lm.frame)

    def agreement(a, b):
        x = ca.rank_agreement(survey[a], survey[b])
        rho = f", Spearman ρ = {number_cell(x['rho'], '+.2f')}" if x["rho"] == x["rho"] else ""
        return f"{x['concordant']} in the same order, {x['discordant']} reversed, {x['ties']} tied{rho}"

    x4 = lm.frame.groupby("activation", sort=False)["test_bpc_x4"].mean().sort_values()
    return {**out, "ch07_survey_ppl": agreement("survey perplexity", "book perplexity per char"),
            "ch07_survey_sinks": agreement("survey sink strength", "book sink rate"),
            "ch07_sa_rank": f"{list(x4.index).index('SA-Softmax') + 1} of {len(x4)}"
            if "SA-Softmax" in x4.index else "not measured"}

