"""Rerunning one section of a chapter on its own (``python -m polyattn section``)."""
import nbformat
import pytest

from polyattn.book import sections
from polyattn.book.common import BookError

CHAPTER = """---
jupytext:
  text_representation:
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

# A chapter

```{code-cell} ipython3
:tags: [parameters]

preset = "book"
```

```{code-cell} ipython3
base = 40
```

## First section

```{code-cell} ipython3
first = base + 1
```

## Second section

It reads only the setup.

```{code-cell} ipython3
second = base + 2
print(f"second = {second} at {preset}")
```

## Third section, which leans on the first

```{code-cell} ipython3
print(first)
```
"""


@pytest.fixture
def chapter(tmp_path):
    path = tmp_path / "chapters" / "05_demo.md"
    path.parent.mkdir()
    path.write_text(CHAPTER)
    return path


def test_a_chapter_splits_into_its_setup_and_its_sections(chapter):
    setup, parts = sections.split(chapter)
    assert [s.title for s in parts] == ["First section", "Second section", "Third section, which leans on the first"]
    assert any("base = 40" in c.source for c in setup) and not any("first" in c.source for c in setup)
    nb = sections.section_notebook(chapter, "second")
    assert [c.source.splitlines()[0] for c in nb.cells if c.cell_type == "code"] == [
        'preset = "book"', "base = 40", "second = base + 2"]
    with pytest.raises(BookError, match="no section starts with 'fourth'"):
        sections.find(parts, "fourth")
    with pytest.raises(BookError, match="no single chapter matches '07'"):
        sections.chapter_path("07", root=chapter.parents[1])
    assert sections.chapter_path("05", root=chapter.parents[1]) == chapter


def test_a_section_runs_alone_with_the_parameters_and_one_that_leans_on_another_fails(chapter, tmp_path):
    root = chapter.parents[1]
    out = sections.run_section("05", "Second", {"preset": "smoke"}, tmp_path / "out.ipynb", root=root)
    text = "".join(o.get("text", "") for c in nbformat.read(str(out), as_version=4).cells
                   if c.cell_type == "code" for o in c.get("outputs", []))
    assert "second = 42 at smoke" in text
    with pytest.raises(BookError, match="NameError"):
        sections.run_section("05", "Third", {"preset": "smoke"}, tmp_path / "out3.ipynb", root=root)


def test_the_readme_reruns_a_section_that_exists(repo_root):
    import re

    text = (repo_root / "README.md").read_text()
    calls = re.findall(r'polyattn section (\d\d) "([^"]+)"', text)
    assert calls, "the README shows how to rerun one section"
    for chapter, title in calls:
        _, parts = sections.split(sections.chapter_path(chapter, root=repo_root))
        assert sections.find(parts, title).title.startswith(title)
