"""Train a matrix-factorisation recommender over the whole catalogue with each ranking loss in turn.

    python examples/recommend_full_catalog.py --quick                  # tiny synthetic data, seconds
    python examples/recommend_full_catalog.py                          # synthetic stand-in, full grid
    python examples/recommend_full_catalog.py --data ml-100k --plot runs/ml-100k.png
    python examples/recommend_full_catalog.py --data path/to/u.data    # or ratings.csv, or a RecBole .inter
    python examples/recommend_full_catalog.py --data ml-100k --losses softmax sampled-softmax \
        --negatives 100 --samplers uniform popularity --corrections logq none

The model scores every item for every user (user and item embeddings, a dot product), so each
training list is a whole catalogue row: 1,682 items on ml-100k. Each loss gets the same budget:
it trains until its validation NDCG@10 has not improved for ``--patience`` epochs, at least
``--min-epochs`` (at small learning rates validation sits flat for the first epochs) and at most
``--epochs``, on the same grid (5 learning rates, 0.1 to 0.001; 4 temperatures where the loss has one), three
seeds per grid point; the grid point with the best mean validation NDCG@10 is chosen, each run is
kept at its best validation epoch, and the table gives test NDCG@10 and Recall@20 as mean ±
standard deviation over the seeds.

The losses:

* ``neuralsort@10``: ``tn.neuralsort_ndcg_loss`` (the top 10 rows of NeuralSort), τ = c·σ(s)·√n
  per list, c in the grid (c = 1 is the loss's own ``temperature="auto"``);
* ``approx@10``: ``tn.approx_ndcg_loss(impl="sorted")``, ranks smoothed at τ = c·σ(s) per list,
  c in the grid (the soft cutoff then has width c ranks);
* ``softmax``: ``tn.softmax_loss``, ListNet's cross-entropy with the label-normalised target:
  the recommender standard;
* ``listnet``: ``tn.listnet_loss``, the cross-entropy with ``softmax(labels)`` as the target;
* ``lambdaloss@10``: ``tn.lambda_loss(k=10)`` (NDCG-Loss2++, σ_s = 1);
* the sampled losses of ``tn.sampled``, each user's training items against ``--negatives``
  items drawn for the batch (``uniform``ly or by training ``popularity``, ``--samplers``), drawn
  items the user has left out (accidental hits), with or without the logQ correction
  (``--corrections logq logq-all none``: ``logq-all`` corrects the positive's logit by its own
  ``q`` too, TensorFlow's ``sampled_softmax_loss`` convention): ``sampled-softmax``
  (``tn.sampled.sampled_softmax_loss``), ``sampled-ndcg`` and ``sampled-ndcg@10``
  (``tn.sampled.sampled_ndcg_loss`` without and with the cutoff, importance-weighted ranks,
  τ = c·σ(s)), ``bpr`` and ``gbce`` (t = 0.75; neither takes the correction). They read the drawn items' scores from the full rows the model makes
  anyway; a model that cannot score the catalogue would score only those.

σ(s) is the standard deviation of the list's scores, without gradient: both relaxations depend
on s/τ only, so a τ relative to the score spread makes them invariant to the model's score scale.
The other losses get no temperature grid: a temperature or slope there (softmax's 1/T,
LambdaLoss's σ_s) only rescales the scores, which the embeddings learn anyway.

Conventions: relevance is binary (every rated item is relevant, whatever its rating: implicit
feedback); items the user already has (train, and for test also validation) are left out of the
ranking; NDCG@10 uses the linear gain and log2 discount; Recall@20 divides by all of the user's
held-out items; users without held-out items are not evaluated. Each user's interactions are
split by time: the latest 10% to test, the 10% before to validation
(:meth:`torch_ndcg.data.Interactions.split`).

``--data ml-100k`` fetches RecBole 1.2.1's wheel with ``pip download --no-deps recbole==1.2.1``
into ``--cache`` (once) and reads ``recbole/dataset_example/ml-100k/ml-100k.inter`` from it
(943 users, 1,682 items, 100,000 ratings). MovieLens is GroupLens's data, under its terms
(https://grouplens.org/datasets/movielens/): it is not shipped here. Without ``--data`` the
example needs no network: a synthetic stand-in of users with hidden tastes.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import Tensor, nn

import torch_ndcg as tn
from torch_ndcg.data import CatalogueSplits, Interactions, read_interactions

RECBOLE = "recbole==1.2.1"
ML_100K_MEMBER = "recbole/dataset_example/ml-100k/ml-100k.inter"
LOSSES = ("neuralsort@10", "approx@10", "softmax", "listnet", "lambdaloss@10",
          "sampled-softmax", "sampled-ndcg", "sampled-ndcg@10", "bpr", "gbce")  # fmt: skip
SAMPLED = ("sampled-softmax", "sampled-ndcg", "sampled-ndcg@10", "bpr", "gbce")
SAMPLERS = ("uniform", "popularity")
# "logq": the negatives' logits less log(m·q) (the positive, not drawn, counts exactly); "logq-all":
# every logit, the positive's with its own q too (TensorFlow's sampled_softmax_loss, Yi et al. 2019).
CORRECTIONS = ("logq", "logq-all", "none")
CORRECTIONS_OF = {"sampled-softmax": CORRECTIONS, "sampled-ndcg": ("logq", "none"), "sampled-ndcg@10": ("logq", "none"),
                  "bpr": ("none",), "gbce": ("none",)}  # fmt: skip
CORRECTION_LABELS = {"logq": "logQ", "logq-all": "logQ on every logit", "none": "no logQ"}
LEARNING_RATES = (0.1, 0.03, 0.01, 0.003, 0.001)  # largest first: a run cut short has the fastest learners
# Per loss, its temperature-like knob and the 4 values of the grid (None: no knob).
KNOBS: dict[str, tuple[str, tuple[float, ...]] | None] = {
    "neuralsort@10": ("c", (0.25, 0.5, 1.0, 2.0)),
    "approx@10": ("c", (0.1, 0.3, 1.0, 3.0)),
    "softmax": None,
    "listnet": None,
    "lambdaloss@10": None,
    "sampled-softmax": None,
    "sampled-ndcg": ("c", (0.1, 0.3, 1.0, 3.0)),
    "sampled-ndcg@10": ("c", (0.1, 0.3, 1.0, 3.0)),
    "bpr": None,
    "gbce": None,
}
K, RECALL_K = 10, 20


# ---------------------------------------------------------------------------------------- data
def ml_100k(cache: Path) -> Path:
    """The ml-100k ``.inter`` file, read out of RecBole's wheel (downloaded once into ``cache``)."""
    target = cache / "ml-100k.inter"
    if target.exists():
        return target
    cache.mkdir(parents=True, exist_ok=True)
    wheels = sorted(cache.glob("recbole-1.2.1-*.whl"))
    if not wheels:
        print(f"downloading {RECBOLE} (about 2 MB) into {cache} with pip ...", flush=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", RECBOLE, "-d", str(cache), "-q"], check=True)
        wheels = sorted(cache.glob("recbole-1.2.1-*.whl"))
    with zipfile.ZipFile(wheels[0]) as wheel:
        target.write_bytes(wheel.read(ML_100K_MEMBER))
    return target


def synthetic(users: int, items: int, seed: int = 0) -> Interactions:
    """Users and items with hidden 8-dimensional tastes and a long tail of popularity; each user
    rates about 5% of the catalogue, the items closest to their taste more often, at random times."""
    gen = np.random.default_rng(seed)
    affinity = gen.standard_normal((users, 8)) @ gen.standard_normal((8, items)) / math.sqrt(8)
    logits = 1.5 * affinity + np.linspace(1.5, -1.5, items) - 4.0
    chosen = gen.random((users, items)) < 1 / (1 + np.exp(-logits))
    chosen[np.arange(users), np.argmax(logits, axis=1)] = True  # nobody is empty
    user, item = np.nonzero(chosen)
    return Interactions.from_arrays(users=user, items=item, timestamps=gen.random(len(user)))


def load(data: str, cache: Path, quick: bool) -> tuple[str, Interactions]:
    if data == "synthetic":
        users, items = (60, 120) if quick else (600, 1000)
        return f"synthetic ({users} users, {items} items)", synthetic(users, items)
    path = ml_100k(cache) if data == "ml-100k" else Path(data)
    return data, read_interactions(path)


# --------------------------------------------------------------------------------------- model
class MatrixFactorisation(nn.Module):
    def __init__(self, users: int, items: int, dim: int):
        super().__init__()
        self.users, self.items = nn.Embedding(users, dim), nn.Embedding(items, dim)
        nn.init.normal_(self.users.weight, std=0.1)
        nn.init.normal_(self.items.weight, std=0.1)

    def forward(self, users: Tensor) -> Tensor:
        """``[B, n_items]`` scores: every item of the catalogue for each user."""
        return self.users(users) @ self.items.weight.T


def spread(scores: Tensor) -> Tensor:
    """Each list's score standard deviation ``[B, 1]``, without gradient (never 0)."""
    return scores.detach().std(-1, unbiased=False, keepdim=True).clamp(min=1e-12)


@dataclass(frozen=True)
class Sampler:
    """Draws the negatives of a batch from ``q`` over the catalogue (with replacement)."""

    q: Tensor  # [n_items], sums to 1

    @staticmethod
    def named(name: str, splits: CatalogueSplits) -> Sampler:
        if name == "uniform":
            return Sampler(torch.full((splits.n_items,), 1 / splits.n_items))
        counts = splits.item_counts("train").double() + 1  # + 1: every item can be drawn
        return Sampler((counts / counts.sum()).float())

    def draw(self, negatives: int, gen: torch.Generator) -> Tensor:
        return torch.multinomial(self.q, negatives, replacement=True, generator=gen)

    def lists(self, scores: Tensor, relevance: Tensor, drawn: Tensor, correction: str) -> tn.sampled.SampledLists:
        """Each user's training items (padded to the batch's largest count) against the same
        ``drawn`` items; a drawn item the user has is an accidental hit, masked out."""
        most = int((relevance > 0).sum(-1).max())
        order = relevance.argsort(dim=-1, descending=True, stable=True)[:, :most]
        return tn.sampled.SampledLists(
            scores.gather(1, order), scores[:, drawn],
            negative_log_q=None if correction == "none" else self.q[drawn].log(),
            positive_log_q=self.q[order].log() if correction == "logq-all" else None,
            positive_mask=relevance.gather(1, order) > 0, negative_mask=relevance[:, drawn] == 0,
        )  # fmt: skip


@dataclass(frozen=True)
class Setting:
    loss: str
    lr: float
    knob: float | None
    sampler: str | None = None  # the sampled losses': "uniform" or "popularity"
    correction: str | None = None  # the sampled losses': one of CORRECTIONS
    negatives: int | None = None

    @property
    def label(self) -> str:
        if self.sampler is None:
            return self.loss
        return f"{self.loss} ({self.negatives} {self.sampler}, {CORRECTION_LABELS[self.correction or 'none']})"


def loss_value(setting: Setting, scores: Tensor, relevance: Tensor, generator: torch.Generator, sampler: Sampler | None) -> Tensor:
    name, knob = setting.loss, setting.knob
    if name == "neuralsort@10":
        # The loss takes one τ per call; its logits are linear in the scores, so dividing each
        # list by its own τ = c·σ(s)·√n and passing τ = 1 is the loss at a per-list τ.
        tau = knob * spread(scores) * math.sqrt(scores.shape[-1])
        return tn.neuralsort_ndcg_loss(scores / tau, relevance, k=K, temperature=1.0)
    if name == "approx@10":
        return tn.approx_ndcg_loss(scores / spread(scores), relevance, k=K, temperature=knob, impl="sorted")
    if name == "softmax":
        return tn.softmax_loss(scores, relevance)
    if name == "listnet":
        return tn.listnet_loss(scores, relevance)
    if name == "lambdaloss@10":
        return tn.lambda_loss(scores, relevance, k=K)
    if name.startswith("sampled-ndcg"):  # τ = c·σ(s): the scores divided by each user's spread
        scores = scores / spread(scores)
    drawn, correction = sampler.draw(setting.negatives, generator), setting.correction or "none"
    if name.startswith("sampled-ndcg"):
        return sampled_ndcg(scores, relevance, drawn, correction, sampler, K if name.endswith(f"@{K}") else None, knob)
    lists = sampler.lists(scores, relevance, drawn, correction)
    if name == "sampled-softmax":
        return tn.sampled.sampled_softmax_loss(lists)
    if name == "bpr":
        return tn.sampled.bpr_loss(lists)
    return tn.sampled.gbce_loss(lists, catalogue_size=scores.shape[-1])


def sampled_ndcg(scores: Tensor, relevance: Tensor, drawn: Tensor, correction: str, sampler: Sampler, k: int | None,
                 knob: float, group: int = 16) -> Tensor:  # fmt: skip
    """The batch's mean ``sampled_ndcg_loss``, its users taken in groups of similar training
    counts: the loss compares every pair of a user's positives, and a batch padded to its
    largest user (589 items on ml-100k, against 85 on average) would compare mostly padding."""
    counts = (relevance > 0).sum(-1)
    total = scores.new_zeros(())
    for users in counts.argsort().split(group):
        lists = sampler.lists(scores[users], relevance[users], drawn, correction)
        total = total + tn.sampled.sampled_ndcg_loss(lists, k, temperature=knob, reduction="sum")
    return total / (counts > 0).sum().clamp(min=1)  # the loss's mean skips users without items


# ------------------------------------------------------------------------------------ training
@torch.no_grad()
def evaluate(model: MatrixFactorisation, splits: CatalogueSplits, split: str, batch_size: int) -> dict[str, float]:
    """Mean NDCG@10 and Recall@20 over the users with held-out items, already-seen items left out."""
    ndcg, recall, users = 0.0, 0.0, 0
    for chosen, relevance, seen in splits.batches(split, batch_size):
        # Seen items go below every other item: they have relevance 0 here, so with at least 20
        # unseen items this is the metric with them left out (a mask= would say the same, slower).
        scores = model(chosen).masked_fill(seen, -1e30)
        ndcg += tn.ndcg(scores, relevance, k=K, reduction="sum").item()
        recall += tn.recall(scores, relevance, k=RECALL_K, reduction="sum").item()
        users += len(chosen)
    return {"ndcg": ndcg / users, "recall": recall / users}


def train(setting: Setting, splits: CatalogueSplits, seed: int, epochs: int, dim: int, batch_size: int,
          patience: int, min_epochs: int = 0) -> dict:  # fmt: skip
    """One run, until the validation NDCG@10 has not improved for ``patience`` epochs (at most
    ``epochs``, at least ``min_epochs``): returns the validation NDCG@10 per epoch and the test
    metrics at the best epoch."""
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    model = MatrixFactorisation(splits.n_users, splits.n_items, dim)
    optimiser = torch.optim.Adam(model.parameters(), lr=setting.lr)
    sampler = None if setting.sampler is None else Sampler.named(setting.sampler, splits)
    curve, best, best_state, since_best = [], -1.0, None, 0
    for _ in range(epochs):
        for users, relevance, _ in splits.batches("train", batch_size, shuffle=True, generator=gen):
            loss = loss_value(setting, model(users), relevance, gen, sampler)
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
        curve.append(evaluate(model, splits, "validation", 1024)["ndcg"])
        if curve[-1] > best:
            best, best_state, since_best = curve[-1], {k: v.clone() for k, v in model.state_dict().items()}, 0
        else:
            since_best += 1
            if since_best >= patience and len(curve) >= min_epochs:
                break
    model.load_state_dict(best_state)
    return {"curve": curve, "best_validation": best, "test": evaluate(model, splits, "test", 1024)}


def grid(losses: list[str], quick: bool, samplers: tuple[str, ...] = ("uniform",), corrections: tuple[str, ...] = ("logq",),
         negatives: int = 100) -> list[Setting]:  # fmt: skip
    """Every loss's settings: 5 learning rates × its 4 knob values (only 0.03 if
    ``quick``); a sampled loss once per sampler and correction it takes (BPR and gBCE: none)."""
    rates = LEARNING_RATES[1:2] if quick else LEARNING_RATES
    out = []
    for name in losses:
        knobs = KNOBS[name][1] if KNOBS[name] else (None,)
        variants: list[tuple[str | None, str | None, int | None]] = [(None, None, None)]
        if name in SAMPLED:
            fixes = [fix for fix in corrections if fix in CORRECTIONS_OF[name]] or ["none"]
            variants = [(sampler, fix, negatives) for sampler in samplers for fix in dict.fromkeys(fixes)]
        out += [Setting(name, lr, knob, *variant) for variant in variants for lr in rates for knob in knobs]
    return out


def mean_spread(values: list[float]) -> str:
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{statistics.mean(values):.4f} ± {sd:.4f}"


def run(args: argparse.Namespace) -> dict[str, dict]:
    torch.set_num_threads(args.threads)
    start = time.perf_counter()
    if args.merge:
        results = merged(args.merge)
        losses = [loss for loss in LOSSES if any(s.loss == loss for s in results)]
    else:
        name, log = load(args.data, args.cache, args.quick)
        splits = log.split(test=0.1, validation=0.1)
        print(f"data: {name}: {splits}")
        results, losses = {}, args.losses
        for setting in grid(losses, args.quick, args.samplers, args.corrections, args.negatives):
            results[setting] = {seed: train(setting, splits, seed, args.epochs, args.dim, args.batch_size, args.patience, args.min_epochs)
                                for seed in args.seeds}  # fmt: skip
            if args.verbose:
                val = statistics.mean(r["best_validation"] for r in results[setting].values())
                print(f"  {setting.label:16s} lr={setting.lr:<6} knob={setting.knob}: validation NDCG@10 {val:.4f}"
                      f"  ({time.perf_counter() - start:.0f} s)", flush=True)
            if args.save:  # after every grid point, so a run cut short keeps what it finished
                args.save.parent.mkdir(parents=True, exist_ok=True)
                args.save.write_text(json.dumps([[vars(s), runs] for s, runs in results.items()]))
    chosen = {}
    # One row per loss and, for the sampled losses, per sampler and correction.
    variants = dict.fromkeys((s.loss, s.sampler, s.correction, s.negatives) for s in results if s.loss in losses)
    for variant in sorted(variants, key=lambda v: (LOSSES.index(v[0]), str(v[1:]))):
        family = [s for s in results if (s.loss, s.sampler, s.correction, s.negatives) == variant]
        # Only grid points with every seed compete (merged files may hold runs cut short).
        seeds = max(len(results[s]) for s in family)
        candidates = [s for s in family if len(results[s]) == seeds]
        best = max(candidates, key=lambda s: statistics.mean(r["best_validation"] for r in results[s].values()))
        size = len(LEARNING_RATES) * (len(KNOBS[variant[0]][1]) if KNOBS[variant[0]] else 1)
        chosen[best.label] = {"setting": best, "runs": list(results[best].values()), "grid": (len(candidates), size)}
    report(chosen, args, time.perf_counter() - start)
    return chosen


def merged(paths: list[Path]) -> dict[Setting, dict[int, dict]]:
    """The runs of several ``--save`` files (e.g. losses or seeds run as separate processes: each
    run is seeded on its own, so the split changes no number)."""
    results: dict[Setting, dict[int, dict]] = {}
    for path in paths:
        for setting, runs in json.loads(path.read_text()):
            results.setdefault(Setting(**setting), {}).update({int(seed): run for seed, run in runs.items()})
    return results


def report(chosen: dict[str, dict], args: argparse.Namespace, seconds: float) -> None:
    runs = next(iter(chosen.values()))["runs"]
    epochs = statistics.mean(len(r["curve"]) for entry in chosen.values() for r in entry["runs"])
    print(f"\nTest, {len(runs)} seeds (mean ± std), until validation NDCG@{K} stopped improving "
          f"(patience {args.patience}, at least {args.min_epochs} and at most {args.epochs} epochs; {epochs:.0f} on average), each run at its best validation epoch; "
          f"binary relevance (every rated item), already-seen items excluded, linear gain, log2 discount.")
    reference = chosen.get("softmax")
    header = ["loss", "grid", "lr", "knob", f"val NDCG@{K}", f"test NDCG@{K}", f"test Recall@{RECALL_K}", "vs softmax"]
    rows = []
    for loss, entry in chosen.items():
        setting, runs = entry["setting"], entry["runs"]
        test = [r["test"]["ndcg"] for r in runs]
        knob = "-" if setting.knob is None else f"{KNOBS[setting.loss][0]}={setting.knob:g}"
        ratio = "-"
        if reference is not None:
            ratio = f"{statistics.mean(test) / statistics.mean(r['test']['ndcg'] for r in reference['runs']):.1%}"
        rows.append([loss, "{}/{}".format(*entry["grid"]), f"{setting.lr:g}", knob, mean_spread([r["best_validation"] for r in runs]),
                     mean_spread(test), mean_spread([r["test"]["recall"] for r in runs]), ratio])
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    for i, row in enumerate([header, *rows]):
        print("| " + " | ".join(cell.ljust(w) for cell, w in zip(row, widths)) + " |")
        if i == 0:
            print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    print(f"(grid: the settings run with every seed, of the full grid; {seconds:.0f} s on {args.threads} thread(s))")
    if args.plot:
        plot(chosen, args.plot)


def plot(chosen: dict[str, dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for loss, entry in chosen.items():
        curves = np.array([r["curve"] for r in entry["runs"]])
        epochs = np.arange(1, curves.shape[1] + 1)
        mean = curves.mean(0)
        ax.plot(epochs, mean, label=loss)
        ax.fill_between(epochs, curves.min(0), curves.max(0), alpha=0.2)
    ax.set_xlabel("epoch")
    ax.set_ylabel(f"validation NDCG@{K} (seen items excluded)")
    ax.set_title("Full-catalogue matrix factorisation, chosen setting per loss (seed range shaded)")
    ax.legend()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
    print(f"plot: {path}")


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default="synthetic",
                        help="'synthetic' (default, offline), 'ml-100k' (pip-downloads recbole==1.2.1's wheel into "
                             "--cache and reads ml-100k.inter from it), or a u.data / ratings.csv / .inter file")
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "torch_ndcg",
                        help="folder for the downloaded wheel and the extracted ml-100k.inter")
    parser.add_argument("--losses", nargs="+", choices=LOSSES, default=list(LOSSES))
    parser.add_argument("--epochs", type=int, default=200, help="the most epochs a run may train")
    parser.add_argument("--patience", type=int, default=20,
                        help="stop a run once its validation NDCG@10 has not improved for this many epochs: the "
                             "sampled softmax's validation dips for several epochs before it climbs past its first peak")
    parser.add_argument("--min-epochs", type=int, default=20,
                        help="no run stops earlier: at small learning rates validation NDCG@10 sits flat for the "
                             "first epochs, and the patience alone would stop the run there")
    parser.add_argument("--negatives", type=int, default=100, help="items drawn per batch for the sampled losses")
    parser.add_argument("--samplers", nargs="+", choices=SAMPLERS, default=["uniform"],
                        help="how the sampled losses draw their negatives: uniformly, or by training popularity")
    parser.add_argument("--corrections", nargs="+", choices=CORRECTIONS, default=["logq"],
                        help="the sampled losses' logQ correction: on the negatives' logits (logq), on every logit "
                             "(logq-all: the sampled softmax only), none; several run each")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2], help="one run per seed and grid point")
    parser.add_argument("--dim", type=int, default=64, help="embedding size")
    parser.add_argument("--batch-size", type=int, default=128, help="users per step")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--plot", type=Path, help="write the validation curves to this PNG")
    parser.add_argument("--quick", action="store_true", help="a smoke test: 2 epochs, 1 seed, one learning rate (synthetic data is tiny)")
    parser.add_argument("--verbose", action="store_true", help="print every grid point's validation NDCG@10")
    parser.add_argument("--save", type=Path, help="write every run (curves and test metrics) to this JSON file")
    parser.add_argument("--merge", type=Path, nargs="+", help="report from --save files instead of training")
    args = parser.parse_args(argv)
    for option in ("epochs", "patience", "negatives", "dim", "batch_size", "threads"):
        if getattr(args, option) < 1:
            parser.error(f"--{option.replace('_', '-')} must be ≥ 1")
    if args.min_epochs < 0:
        parser.error("--min-epochs must be ≥ 0")
    if args.quick:
        args.epochs, args.seeds = 2, [0]
    return args


def main(argv: list[str] | None = None) -> dict[str, dict]:
    return run(parse(argv))


if __name__ == "__main__":
    main()
