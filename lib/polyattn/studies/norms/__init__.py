"""Chapter 03 (``chapters/03_norms``): the norms in trained models, whether they predict accuracy, and
the norm bound by intervention and as a dose."""
