"""Differentiable NDCG losses that share the metric's gain, discount, cutoff and exact IDCG.

``neural_ndcg`` / ``approx_ndcg`` are the smooth NDCGs, ``*_loss`` are ``1 − NDCG``, and the
``*Loss`` classes are their ``torch.nn.Module`` forms. Each runs dense (``[B, N, N]`` tensors,
the readable reference) or streaming (O(B·N) memory, identical values and gradients);
NeuralNDCG also runs on the kernel path (the NeuralSort kernel built once per list, Sinkhorn as
its scalings), the default on CPU.
"""

from .approx import approx_ndcg, approx_ndcg_loss
from .modules import ApproxNDCGLoss, NeuralNDCGLoss
from .neural import neural_ndcg, neural_ndcg_loss

__all__ = ["ApproxNDCGLoss", "NeuralNDCGLoss", "approx_ndcg", "approx_ndcg_loss", "neural_ndcg", "neural_ndcg_loss"]
