"""Benchmarks: ``python -m torch_ndcg.bench {eval,losses,metrics,gpu}``; each prints one table measured in one run."""
