"""The page kit the studies share: glued values, folded tables and figures (:mod:`.shown`) and a
registered claim's positive control in words (:mod:`.controls`).  What one chapter shows lives in its
study, :mod:`polyattn.studies`."""
