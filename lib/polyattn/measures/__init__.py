"""The measure functions of the measured claims (:mod:`polyattn.claims.register_measured`).

Each function takes ``root`` (the results directory; None for the repository's) and returns a
:class:`polyattn.claims.spec.Finding`: the form its module's rule decides, one sentence with the key
numbers, and the numbers.  They read stored records (or measurement records written when missing)
and finish in seconds, so ``python -m polyattn verdicts`` computes every row without a chapter.
Modules by topic: ``theorems`` (chapter 02), ``norms`` (03), ``scale`` (04), ``physics``
(06), ``critiques`` (09), ``architectures`` (10), ``costs`` (08).
"""
