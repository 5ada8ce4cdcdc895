"""Chapter 07 (``chapters/07_causal``): causal character language models, the readings of N, the length
sweeps, attention sinks and associative recall."""
