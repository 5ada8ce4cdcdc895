"""The measure functions of the measured claims (:mod:`polyattn.claims.register_measured`).

Each function takes ``root`` (the results directory; None for the repository's) and returns a
:class:`polyattn.claims.spec.Finding`: the form its module's rule decides, one sentence with the key
numbers, and the numbers.  They read stored records (or measurement records written when missing)
and finish in seconds, so ``python -m polyattn verdicts`` computes every row without a chapter.
Modules by topic: ``proofs_*`` (chapter 02: ``proofs_softmax``, ``proofs_product_powers``,
``proofs_matrix_powers``, ``proofs_query_gradient``, and ``proofs_measurements``, the measurements
they read), ``norms`` (03), ``scale`` (04), ``physics`` (06), ``critique_*`` (09:
``critique_paradox``, ``critique_scale``, ``critique_gradients``, ``critique_outliers``,
``critique_maps``, and ``critique_common`` and ``critique_survey``, what they share and read;
``training_speed``, the gap to softmax against the training budget across tasks),
``architectures`` (10), ``costs`` (08).
"""
