"""One training step of a sampled loss on a 1,000,000-item catalogue costs memory for the sampled
rows, not for the catalogue: B = 256 queries, m = 1,000 shared negatives drawn by popularity with
the logQ correction, 64-d item embeddings with sparse gradients (``Embedding(sparse=True)`` and
``SparseAdam``), measured beyond the parameters, their optimiser state and the inputs."""

from __future__ import annotations

import pytest
from peak_memory import peak_growth

SETUP = """
import torch
from torch_ndcg.losses.sampled import SampledLists, sampled_softmax_loss
torch.manual_seed(0)
torch.set_num_threads(1)
CATALOGUE, DIM, BATCH, NEGATIVES = 1_000_000, 64, 256, 1_000
items = torch.nn.Embedding(CATALOGUE, DIM, sparse=True)
users = torch.nn.Embedding(10_000, DIM, sparse=True)
optimiser = torch.optim.SparseAdam(list(items.parameters()) + list(users.parameters()), lr=1e-3)
popularity = torch.rand(CATALOGUE) ** 4 + 1e-6
q = popularity / popularity.sum()
log_q = q.log()

def step():
    user = torch.randint(0, 10_000, (BATCH,))
    positive = torch.multinomial(q, BATCH, replacement=True)
    negative = torch.multinomial(q, NEGATIVES, replacement=True)
    query = users(user)
    lists = SampledLists((query * items(positive)).sum(-1), query @ items(negative).T, negative_log_q=log_q[negative])
    optimiser.zero_grad(set_to_none=True)
    sampled_softmax_loss(lists).backward()
    optimiser.step()

step()  # the optimiser's state (two moments per parameter) is made at the first step
"""


@pytest.mark.slow
def test_a_sampled_step_on_a_million_items_costs_at_most_64_mib_beyond_parameters_and_state():
    growth = peak_growth(SETUP, "step()", timeout=300)
    assert growth <= 64 * 2**20, f"{growth / 2**20:.1f} MiB"
