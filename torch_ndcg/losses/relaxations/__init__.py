"""The smooth relaxations of sorting that the losses put in place of the metric's exact sort.

* :mod:`.choices`: the relaxations a metric's twin takes (``relaxation=``), by name or as an
  object, each turning scores into the ranking that :mod:`torch_ndcg.over_ranks` reads;
  Gumbel-perturbed scores around any of them.
* :mod:`.approximate_ranks`: ApproxNDCG's approximate ranks (dense, streaming, and the sorted
  cut that ranks only the items that can reach the cutoff).
* :mod:`.neuralsort`: NeuralSort's top rows in O(N log N + k·N), with an analytic backward.
* :mod:`.sinkhorn`: NeuralSort's row-stochastic matrix made doubly stochastic by Sinkhorn
  scaling (NeuralNDCG): the dense reference, the streaming form and the kernel path with its
  registered operator and compiled loops.
* :mod:`.blocks`: the O(N²) block primitives that the streaming losses run on (the Sinkhorn
  half-step, NeuralSort's column term, ApproxNDCG's approximate ranks), in PyTorch or as the
  fused Triton kernels.
"""
