"""One package per chapter's study, named as the chapter is (``chapters/07_causal`` <->
``studies/causal``): what that chapter shows, as page modules with the same names where they apply
(``page`` for the chapter's shared loaders and glue, then one module per section).  A chapter imports
its own study; the shared page kit is :mod:`polyattn.pages`."""
