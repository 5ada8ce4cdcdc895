"""Execute the book's chapters with papermill under a content key, then build the site.

    python -m polyattn.book                      # preset book, every chapter of _toc.yml
    python -m polyattn.book --preset smoke       # the fast pipeline check
    python -m polyattn.book --chapters 01,04 --force

The flow, in one direction:

1. The chapters are read from ``_toc.yml``.  An entry ``chapters/NN_name`` is a notebook
   chapter when ``chapters/NN_name.ipynb`` exists (the jupytext pair of
   ``chapters/NN_name.md``) and a plain page when only a markdown file without a jupytext
   header exists.  Entries with no source yet are left out, with a warning.
2. Each notebook chapter is executed by papermill (kernel ``python3``, parameters
   ``preset``, ``recompute``, ``seeds``, ``device``) into ``_build/executed/NN_name.ipynb``,
   unless its content key is unchanged.  The key is a sha256 over the chapter's source, every
   ``*.py`` file of the polyattn package, the parameters, ``requirements.txt`` and, for the
   experiments a chapter declares in its metadata (``polyattn: {results: [name, ...]}``),
   the content of their stored result records.  Keys, seconds, preset and state go to
   ``_build/executed/manifest.json``.
3. The source tree ``_build/src`` is assembled from ``_config.yml``, the TOC (pruned to
   what exists), ``intro.md`` with its verdict table, ``references.bib``, the plain pages
   (the status page gets its tables), the executed notebooks and a local copy of MathJax.
4. ``jupyter-book build _build/src --path-output . --all -W -n --keep-going`` writes
   ``_build/html``; any warning fails the build.

Every row of the intro's verdict table is a claim of the register, computed from the records by
``python -m polyattn verdicts``; a chapter glues the same sentence with
:func:`polyattn.book.deliver.deliver` and decides nothing itself.

The package's modules, in the order of the flow: :mod:`.toc`, :mod:`.notebooks`, :mod:`.keys`,
:mod:`.execute`, :mod:`.verdict_rows`, :mod:`.status`, :mod:`.site`, :mod:`.pipeline` and
:mod:`.cli`.  Every name below is importable from ``polyattn.book`` itself; ``setup`` makes the
package the Sphinx extension that ``_config.yml`` lists.
"""
from __future__ import annotations

from .cli import main
from .common import PACKAGE_DIR, PARAMETER_NAMES, PRESETS, REPO_ROOT, BookError
from .execute import execute_chapter
from .keys import (
                     MANIFEST_SCHEMA,
                     content_key,
                     key_of,
                     key_parts,
                     load_manifest,
                     manifest_path,
                     results_hash,
                     results_root,
                     save_manifest,
)
from .notebooks import (
                     cells_of,
                     check_chapter,
                     declared_results,
                     has_outputs,
                     pair_drift,
                     parameter_names,
                     read_notebook,
)
from .pipeline import VERDICTS_FILE, RunReport, run
from .site import (
                     ENVIRONMENT_MARKER,
                     FAVICON_SVG,
                     INJECTED_TAG,
                     MATHJAX_PARTS,
                     REMOVE_TAG,
                     STATUS_MARKER,
                     VERDICT_MARKER,
                     assemble,
                     build_html,
                     copy_executed_notebook,
                     mathjax_dir,
                     setup,
)
from .status import environment, status_markdown, status_table
from .toc import Entry, _prune_toc, discover, is_jupytext_markdown, read_toc  # noqa: F401  (tests use _prune_toc)
from .verdict_rows import (
                     CLAIM_IDS,
                     CLAIMS,
                     FINDINGS_END,
                     FINDINGS_START,
                     FORMS,
                     collect_verdicts,
                     findings_markdown,
                     glued_keys,
                     replace_findings,
                     verdict,
                     verdict_table,
)

__all__ = [
    "CLAIM_IDS", "CLAIMS", "glued_keys", "verdict", "verdict_table", "FORMS", "FINDINGS_START",
    "FINDINGS_END", "collect_verdicts", "findings_markdown", "replace_findings", "VERDICTS_FILE",
    "main",
    "PACKAGE_DIR", "PARAMETER_NAMES", "PRESETS", "REPO_ROOT", "BookError",
    "execute_chapter",
    "MANIFEST_SCHEMA", "content_key", "key_of", "key_parts", "load_manifest", "manifest_path",
    "results_hash", "results_root", "save_manifest",
    "cells_of", "check_chapter", "declared_results", "has_outputs", "pair_drift", "parameter_names",
    "read_notebook",
    "RunReport", "run",
    "ENVIRONMENT_MARKER", "FAVICON_SVG", "INJECTED_TAG", "MATHJAX_PARTS", "REMOVE_TAG", "STATUS_MARKER",
    "VERDICT_MARKER", "assemble", "build_html", "copy_executed_notebook", "mathjax_dir", "setup",
    "environment", "status_markdown", "status_table",
    "Entry", "discover", "is_jupytext_markdown", "read_toc",
]
