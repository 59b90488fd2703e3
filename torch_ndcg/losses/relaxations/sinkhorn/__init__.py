"""NeuralNDCG's relaxation: NeuralSort's matrix, made doubly stochastic by Sinkhorn scaling.

* :mod:`.dense`: the readable reference, ``[B, N, N]`` under autograd.
* :mod:`.streaming`: O(B·N) memory, the block primitives of :mod:`..blocks`.
* :mod:`.op`: the kernel path as a registered operator (fake kernel, autograd), over
  :mod:`.kernel` (one NeuralSort kernel per list, Sinkhorn as its scalings), whose half-steps
  run in :mod:`.loops` (the compiled loops, or NumPy), on groups of lists planned by :mod:`.plan`.
"""
