"""The page kit's table form, shared by every page."""

def test_one_compact_table_form_serves_every_page():
    import pandas as pd
    from IPython.display import Markdown

    from polyattn.pages import shown
    from polyattn.studies.causal import page as lm_page
    from polyattn.studies.critiques import page as critiques
    from polyattn.studies.lra import page as lra_page
    from polyattn.studies.norms import page as norms_page

    assert lm_page.compact is shown.compact and lra_page.compact is shown.compact and norms_page.compact is shown.compact
    note = Markdown("nothing stored")
    assert shown.compact(None) is None and shown.compact(note) is note
    styled = shown.compact(pd.DataFrame({"a": [1.0], "b": ["x y"]}).style, nowrap=("b", "missing"))
    html = styled.to_html()
    assert "font-size: 0.85em" in html and "white-space: nowrap" in html
    assert 'style="width: 100%"' in critiques.compact(pd.DataFrame({"a": [1]}).style).to_html()
