"""The register's claims by topic, one module per chapter that delivers them:

* :mod:`.norms` (chapter 03): the mechanism, softmax's norm bound tested by intervention;
* :mod:`.images` (chapter 04): the ViT on Fashion-MNIST: Tables 1 and 2, gradient clipping, the
  converged tier, the quadratic;
* :mod:`.lra` (chapter 05): the Long Range Arena;
* :mod:`.physics` (chapter 06): PINNsFormer on convection, reaction and the wave;
* :mod:`.language` (chapter 07): causal character language models, associative recall (MQAR),
  which $N$ scales a causal row, attention sinks;
* :mod:`.critiques` (chapter 09): the reviewers' alternatives to the $1/\\sqrt{N}$ factor, and the powers;
* :mod:`.architectures` (chapter 10): timm's ViT, DeiT, Swin and XCiT, and Mask R-CNN.

Each module's ``CLAIMS`` holds its claims in the order its chapter takes them up.  Every claim carries
its registration date (``registered``): the day of the commit that first wrote its id into the
register, or that first fixed its margin (:mod:`polyattn.claims.dates`; the tests check each date
against the repository history).  What the topics share (arms, chance levels) is in
:mod:`polyattn.claims.constants`.
"""
from . import architectures, critiques, images, language, lra, norms, physics

#: The topics in the book's chapter order.
TOPICS = (norms, images, lra, physics, language, critiques, architectures)
