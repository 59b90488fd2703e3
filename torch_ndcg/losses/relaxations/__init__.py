"""The smooth relaxations of sorting that the NDCG losses put in place of the metric's exact sort.

* :mod:`.sinkhorn`: NeuralSort's row-stochastic matrix made doubly stochastic by Sinkhorn
  scaling (NeuralNDCG): the dense reference, the streaming form and the kernel path with its
  registered operator and compiled loops.
* :mod:`.blocks`: the O(N²) block primitives that the streaming losses run on (the Sinkhorn
  half-step, NeuralSort's column term, ApproxNDCG's approximate ranks), in PyTorch or as the
  fused Triton kernels.
"""
