"""Chapter 09 (``chapters/09_critiques``): the reviewers' remaining objections as computations and
trained grids, and the training-speed pattern."""
