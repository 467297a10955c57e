"""The compiled (numba) leaves of the sampler and the small typed structures they take.

Every module here is a leaf: it imports numpy, numba, the standard library and other
modules of this package, never the rest of mixsynth. The plain-Python code that prepares their arguments
and draws their random parts from a chain's generator lives outside, in the module of the
same name or the one named in each kernel's docstring:

* ``truncnorm``: per-column generator streams, normals and truncated normals;
* ``latent``: the constraints as one structure (``ConstraintArrays``), the updates of Z and
  the cut move (``mixsynth.constraints`` builds the structure and calls them outside a sweep);
* ``blank_cells``: the draw of Omega with each blank pattern's cells integrated out, and the
  patterns as one structure (``mixsynth.blank_cells``);
* ``binary_rows``: the collapsed move of a rare binary's row of Omega
  (``mixsynth.binary_rows``);
* ``linalg``: triangular solves and an inverse-Wishart draw from its random parts;
* ``gig``: the scale move's steps (``mixsynth.moves``);
* ``ess``: effective sample sizes of many quantities (``mixsynth.chain_stats``).

numba caches each kernel in ``__pycache__`` beside its module, and its cache does not
notice an edit to a function of another module that a kernel calls (``truncnorm`` from
``latent``): after such an edit, delete ``mixsynth/kernels/__pycache__/*.nbi *.nbc``.
"""
