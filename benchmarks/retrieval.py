"""Catalogue-scale evaluation: ``tn.retrieval.top_k`` against a plain chunked matmul with
``torch.topk`` and a running merge, time and peak memory as the catalogue grows.

``python -m benchmarks retrieval [--quick]``. One CPU thread, float32, 64-d embeddings, k = 10,
10,000 queries, chunks of 4,096 items; 100,000 and 1,000,000 items. Each case runs in a fresh
process: the embeddings are made first, then the resident set's high-water mark is reset
(Linux ``VmHWM``) and one call is timed, so the peak counts what the search needs beyond its
inputs. ``--quick`` runs tiny sizes in this process, to check that the benchmark works.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

import torch

import torch_ndcg as tn
from benchmarks import child_env

from .losses import _peak_now, _peak_start

K, DIM, CHUNK = 10, 64, 4096
QUERIES = 10_000
CATALOGUES = [100_000, 1_000_000]
QUICK = (200, [5_000, 20_000])
# What the chunked evaluation is designed to meet (one CPU thread).
TARGET = "time ≤ 4 × the plain chunked scan; peak memory flat in the catalogue's size"


def plain(queries: torch.Tensor, items: torch.Tensor) -> torch.Tensor:
    """The baseline: the chunked matmul, ``torch.topk`` per chunk, a running merge."""
    best = queries.new_empty((queries.shape[0], 0))
    ids = torch.empty((queries.shape[0], 0), dtype=torch.long)
    for start in range(0, items.shape[0], CHUNK):
        chunk = items[start : start + CHUNK]
        values, indices = (queries @ chunk.T).topk(min(K, chunk.shape[0]), dim=1)
        best, order = torch.cat((best, values), 1).topk(K, dim=1)
        ids = torch.cat((ids, indices + start), 1).gather(1, order)
    return ids


SEARCHES = {
    "tn.retrieval.top_k": lambda q, i: tn.retrieval.top_k(q, i, K, chunk_size=CHUNK).ids,
    "plain chunked topk": plain,
}


def measure(search: str, queries: int, items: int) -> dict[str, float]:
    torch.set_num_threads(1)
    generator = torch.Generator().manual_seed(0)
    q = torch.randn(queries, DIM, generator=generator)
    v = torch.randn(items, DIM, generator=generator)
    with torch.no_grad():
        base = _peak_start()
        start = time.perf_counter()
        SEARCHES[search](q, v)
        seconds = time.perf_counter() - start
    return {"s": seconds, "peak_mib": _peak_now() - base}


def _fresh_process(search: str, queries: int, items: int) -> dict[str, float]:
    command = [sys.executable, "-m", "benchmarks.retrieval", "--case", search, str(queries), str(items)]
    done = subprocess.run(command, capture_output=True, text=True, check=True, env=child_env({"OMP_NUM_THREADS": "1"}))
    return json.loads(done.stdout.strip().splitlines()[-1])


def table(quick: bool) -> dict[tuple[str, int], dict[str, float]]:
    queries, catalogues = QUICK if quick else (QUERIES, CATALOGUES)
    print(f"Top-{K} of {queries:,} queries, {DIM}-d float32, chunks of {CHUNK:,} items, one CPU thread; "
          "peak = memory beyond the embeddings (VmHWM growth" + (", in process)" if quick else ", a fresh process per case)"))  # fmt: skip
    print(f"target: {TARGET}")
    print(f"{'search':<20}" + "".join(f" {f'{n:,} items':>22}" for n in catalogues))
    print(f"{'':<20}" + "".join(f" {'s':>10} {'MiB':>11}" for _ in catalogues))
    results = {}
    for search in SEARCHES:
        cells = []
        for items in catalogues:
            result = measure(search, queries, items) if quick else _fresh_process(search, queries, items)
            results[(search, items)] = result
            cells.append(f" {result['s']:10.2f} {result['peak_mib']:11.1f}")
        print(f"{search:<20}{''.join(cells)}")
    return results


def main(quick: bool = False, argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks retrieval")
    parser.add_argument("--case", nargs=3, metavar=("SEARCH", "QUERIES", "ITEMS"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv or [])
    if args.case:
        search, queries, items = args.case
        print(json.dumps(measure(search, int(queries), int(items))))
        return
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        table(quick)
    finally:
        torch.set_num_threads(threads)


if __name__ == "__main__":
    main(argv=sys.argv[1:])
