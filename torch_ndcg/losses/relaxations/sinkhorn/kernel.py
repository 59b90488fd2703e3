r"""NeuralNDCG's Sinkhorn as scalings of one materialised kernel: the fast path for lists that fit.

Every matrix of the log-domain iteration is ``exp(L_ij + S_i + S'_j)`` for the NeuralSort log-kernel
``L_ij = r_i s_j + a_j`` (``r_i = (n + 1 − 2i)/τ``, ``a_j = −Σ_m |s_j − s_m|/τ``) and two log
scaling vectors. Writing ``S = Ū + log ũ`` around absorbed vectors ``Ū``, ``W̄``, the kernel
``K = exp(L + Ū ⊕ W̄)`` is built once (one ``exp`` per list) and a half-step is a matrix–vector
product and a reciprocal (Sinkhorn & Knopp 1967; Cuturi 2013):

* rows:    ``ũ = 1 / (K w̃)``,
* columns: ``w̃ = 1 / (Kᵀ ũ)``.

Without ``tol`` all half-steps first run unchecked (one host check at the end); only when a
scaling left the safe range does the group rerun with the checks below. The half-step loops
themselves are :mod:`.loops` (compiled loops or NumPy for short CPU lists, torch
otherwise).

Stabilisation (Schmitzer 2019, "absorption"): every :data:`CHECK_EVERY` half-steps the scalings
are checked on the host; when one left ``[1/BIG, BIG]`` (or became non-finite) the iteration rolls
back to the last checked step, absorbs the scalings into ``Ū, W̄``, rebuilds ``K`` and replays the
steps one at a time, doing a step in the log domain (a ``logsumexp``) whenever a product
underflows. Small τ and scores of ±1e4 thus stay exact where a plain scaling loop gives 0/0.

The backward walks the half-steps in reverse, as the streaming path does, with the weights
``W = diag(ũ) K diag(w̃)`` of each step: one matrix–vector product per half-step. The forward
hands on only the ``[steps, B, N]`` scalings (:func:`forward`'s ``history``); the backward
rebuilds ``K`` from the scores (one ``exp``), or, for a group whose run needed absorption,
reruns that group's forward (deterministic, so the same segments).

Inputs are compact (each list's real items first, ``lengths`` of them); lists are grouped by
length by :mod:`.plan`.

``tol`` stops a group once the sums that the next half-step would correct are within ``tol`` of
1, after whole iterations (allRank's criterion; its columns then rows order). The flags are
computed on the device every iteration and read every :data:`CHECK_EVERY` half-steps; the history
is cut back to the first converged iteration, so the result is the same as checking every time.
"""

from __future__ import annotations

import contextlib
import math
import sys
from collections.abc import Iterator

import torch
from torch import Tensor

from . import loops
from .plan import Place, plan

# Lists up to this long also keep a contiguous Kᵀ: a row vector times a transposed view is the
# slow batched product on CPU; beyond, a group is one list whose second copy would double the
# kernel's memory.
TRANSPOSE_COPY_MAX = 256
# A group runs in float64 when its log-kernel's entries, sums of terms up to M in magnitude, are
# resolved by its dtype only to M·eps above this: the kernel is rebuilt from such sums after every
# absorption, and errors of this size (in nats) would leave whole rows of it underflowed.
LOG_KERNEL_MAX_ERROR = 2.0**-6
# Half-steps between host checks of the scalings (and of ``tol``).
CHECK_EVERY = 10
ROW, COL = 0, 1


def _big(dtype: torch.dtype) -> float:
    """Scalings beyond ``BIG`` get absorbed: K·w̃ then stays far from overflow and underflow."""
    return float(torch.finfo(dtype).max) ** 0.25


class _Group:
    """One group of compacted lists, ``[b, w]``, and its Sinkhorn state.

    Matrix coordinates: rows × columns of ``M``; plain NeuralNDCG has positions on rows and items
    on columns, the transposed variant works on ``Mᵀ`` (items on rows), so both end on a row step.
    """

    def __init__(
        self, s: Tensor, n: Tensor, rank_weight: Tensor, gains: Tensor, tau: float, transposed: bool, padded: bool
    ):
        b, w = s.shape
        pos = torch.arange(1, w + 1, dtype=s.dtype, device=s.device)[None, :]
        exists = pos <= n[:, None]  # positions and items alike: the real items come first
        if padded:  # whatever the padding holds (even inf or NaN) must not reach the products
            s, rank_weight, gains = (torch.where(exists, t, torch.zeros_like(t)) for t in (s, rank_weight, gains))
        self.s, self.n, self.tau, self.transposed, self.padded = s, n, tau, transposed, padded
        self.rank_weight, self.gains = rank_weight, gains
        self.exists = exists
        self.v = exists.to(s.dtype)
        self.r = (n[:, None] + 1 - 2 * pos) / tau
        self.pad_log: Tensor | None = None
        self.cross: Tensor | None = None  # [b, w, w]: real × padding entries, for padded groups
        if padded:  # a few ops less for the common full group
            self.r = torch.where(exists, self.r, torch.zeros_like(pos))
            # Padding forms its own block, uniform over the padded rows and columns: doubly
            # stochastic, never mixing with the real block, so the iterations need no masking.
            self.pad_log = -torch.log((w - n).clamp(min=1).to(s.dtype))[:, None].expand(b, w)
        self.a_log: Tensor | None = None  # −A/τ at real items, −log(#padding) elsewhere (set by _Run)
        if transposed:  # items on rows
            self.x, self.y, self.row_w, self.col_h = s, self.r, gains, rank_weight
        else:
            self.x, self.y, self.row_w, self.col_h = self.r, s, rank_weight, gains
        self.buffers: tuple[Tensor, Tensor] | None = None
        self.kept: tuple[Tensor, Tensor] | None = None  # the kernel saved by the forward, if any

    def allocate(self) -> None:
        b, w = self.s.shape
        copies = 2 if w <= TRANSPOSE_COPY_MAX else 1
        self.buffers = tuple(torch.empty(b, w, w, dtype=self.s.dtype, device=self.s.device) for _ in range(copies))
        self.buffers += (None,) * (2 - copies)

    # -- the kernel -------------------------------------------------------------------------

    def log_kernel(self, ubar: Tensor, wbar: Tensor) -> Tensor:
        """``L + Ū ⊕ W̄`` in the group's buffer; cross blocks (real × padding) are ``-inf``."""
        rows_add, cols_add = (self.a_log + ubar, wbar) if self.transposed else (ubar, self.a_log + wbar)
        m = torch.addcmul(cols_add[:, None, :], self.x[:, :, None], self.y[:, None, :], out=self.buffers[0])
        m.add_(rows_add[:, :, None])
        if self.padded:
            if self.cross is None:  # computed once: the forward builds the log-kernel twice
                self.cross = self.exists[:, :, None] != self.exists[:, None, :]
            m.masked_fill_(self.cross, -torch.inf)
        return m

    def kernel(self, ubar: Tensor, wbar: Tensor) -> tuple[Tensor, Tensor]:
        """``K`` and ``Kᵀ`` (a contiguous copy for short lists, where a row vector times a
        contiguous matrix is the fast batched product on CPU; a view for long ones, whose
        kernel alone fills the cache).

        Every kernel built is a Sinkhorn iterate just normalised along one axis (or NeuralSort's
        kernel shifted by its maxima), so its log-entries are at most 0: larger ones are rounding
        (of a shift taken at the exact maximum's place) and are cut to 0, which also keeps
        ``exp`` finite at the extreme scores."""
        log_m = self.log_kernel(ubar, wbar)
        # Subnormal entries make exp and every product with them ~100× slower on x86. Below
        # tiny·BIG an entry scaled by two scalings (each ≤ BIG) stays under tiny·BIG³, far below
        # the rounding of a row sum of 1: zero it, and no entry–scaling product is subnormal.
        # Entries are raised to just below the floor before the exp and zeroed after it: exp of
        # -inf (the masked blocks) or of a huge negative number is ~5× slower than of a normal one.
        floor = math.log(torch.finfo(log_m.dtype).tiny * _big(log_m.dtype))
        m = torch.nn.functional.threshold_(log_m.clamp_(min=floor - 1, max=0.0).exp_(), math.exp(floor), 0.0)
        if self.buffers[1] is None:
            return m, m.transpose(1, 2)
        return m, self.buffers[1].copy_(m.transpose(1, 2))

    def real_only(self, t: Tensor) -> Tensor:
        """``t`` with 0 at padding (``t`` itself in a group without any)."""
        return torch.where(self.exists, t, torch.zeros_like(t)) if self.padded else t

    def position_max(self) -> Tensor:
        """``[b, w]``: at each position, the largest log-kernel entry over the items before any
        scaling. NeuralSort's entries ``r_i s_j − A_j/τ`` of position ``i`` peak at the item with
        the ``i``-th largest score (Grover et al. 2019, Theorem 1), so a sort and two gathers
        replace a max over ``w²`` entries; at padding positions (``r = 0``), the padding items'
        ``−log(#padding)``, as padding sorts last."""
        keys = torch.where(self.exists, self.s, -torch.inf) if self.padded else self.s
        order = torch.sort(keys, -1, descending=True).indices
        return torch.addcmul(self.a_log.gather(-1, order), self.r, self.s.gather(-1, order))

    def abs_diff_sum(self) -> Tensor:
        """``A_j = Σ_m v_m |s_j − s_m|`` through the group's buffer."""
        diff = torch.sub(self.s[:, None, :], self.s[:, :, None], out=self.buffers[0]).abs_()
        return torch.bmm(self.v[:, None, :], diff)[:, 0]

    def abs_diff_sum_backward(self, grad_a: Tensor, buffer: Tensor) -> Tensor:
        """``gs_k = Σ_m v_m (g_k + g_m) sign(s_k − s_m)``, through a free ``[b, w, w]`` buffer."""
        # Σ_m w_m sign(s_k − s_m) = −Σ_m w_m sign(s_m − s_k): rows index m, columns k.
        sign = torch.sub(self.s[:, :, None], self.s[:, None, :], out=buffer).sign_()
        sums = torch.bmm(torch.stack([self.v, self.v * grad_a], 1), sign)
        return -(grad_a * sums[:, 0] + sums[:, 1])


def _rows(vectors: tuple[Tensor, ...]) -> Tensor:
    """``[b, k, N]`` from ``k`` vectors ``[b, N]`` (copies into one buffer: ``torch.stack`` costs
    several times a small copy, and the loops call this hundreds of times)."""
    if len(vectors) == 1:
        return vectors[0][:, None, :]
    first = vectors[0]
    rows = torch.empty(first.shape[0], len(vectors), first.shape[1], dtype=first.dtype, device=first.device)
    for k, vector in enumerate(vectors):
        rows[:, k].copy_(vector)
    return rows


def _sum_cols(m: tuple[Tensor, Tensor], *vectors: Tensor) -> Tensor:
    """``Σ_j M_ij v_j`` for each vector → ``[b, k, R]``."""
    return torch.bmm(_rows(vectors), m[1])


def _sum_rows(m: tuple[Tensor, Tensor], *vectors: Tensor) -> Tensor:
    """``Σ_i v_i M_ij`` for each vector → ``[b, k, C]``."""
    return torch.bmm(_rows(vectors), m[0])


def _kinds(iters: int, transposed: bool) -> list[int]:
    """Half-step kinds in ``M``'s coordinates: NeuralSort's softmax first, always ending on rows."""
    kinds = [ROW] + [COL, ROW] * iters
    return kinds[1:] if transposed else kinds


def _fine(t: Tensor, big: float) -> bool:
    """All scalings finite and within ``[1/big, big]`` (one host synchronisation)."""
    if t.device.type == "cpu":  # NumPy's min and max are about twice as fast as aminmax
        values = t.numpy()
        return bool(values.max() <= big) and bool(values.min() >= 1 / big)  # NaN fails both
    low, high = torch.aminmax(t)
    return bool((high <= big) & (low >= 1 / big))


class _Run:
    """The forward iteration of one group, and the record its backward replays."""

    def __init__(self, g: _Group, iters: int, tol: float | None):
        self.g, self.tol = g, tol
        self.kinds = _kinds(iters, g.transposed)
        self.ones = torch.ones_like(g.s)
        # The scaling each half-step produced, relative to its segment: a list while checked
        # steps append to it, one [steps, b, w] tensor from an unchecked run or after unpacking.
        self.outs: list[Tensor] | Tensor = []
        self.flags: list[tuple[int, Tensor]] = []
        self.segments: list[tuple[int, Tensor, Tensor]] = []  # (first step, Ū, W̄)

    def start(self, h: int) -> int:
        """First step of the segment that step ``h`` belongs to."""
        if len(self.segments) == 1:
            return 0
        return max(first for first, _, _ in self.segments if first <= h)

    def given(self, h: int) -> Tensor:
        """The scaling step ``h`` multiplies by: the previous step's, or 1 at a segment's start."""
        return self.ones if h == self.start(h) else self.outs[h - 1]

    def old(self, h: int) -> Tensor:
        """The scaling step ``h`` replaces (relative to the current segment)."""
        return self.outs[h - 2] if h - 2 >= self.start(h) else self.ones

    def flagged(self, h: int) -> bool:
        """Step ``h`` opens an iteration: the matrix before it is a finished iteration's."""
        return self.tol is not None and h >= 2 and self.kinds[h] != self.kinds[-1]

    def absorb(self, h: int) -> Tensor:
        """Start a segment at step ``h`` with the current scalings absorbed; the new kernel."""
        _, ubar, wbar = self.segments[-1]
        latest = [self.ones, self.ones]
        for j in range(self.start(h), h):
            latest[self.kinds[j]] = self.outs[j]
        self.segments.append((h, ubar + latest[ROW].log(), wbar + latest[COL].log()))
        return self.g.kernel(*self.segments[-1][1:])

    def log_step(self, h: int) -> Tensor:
        """Step ``h`` in the log domain (a ``logsumexp``), starting a segment; the new kernel."""
        kind, old = self.kinds[h], self.old(h)
        _, ubar, wbar = self.segments[-1]
        if kind == ROW:
            wbar = wbar + self.given(h).log()
        else:
            ubar = ubar + self.given(h).log()
        log_m = self.g.log_kernel(ubar, wbar)
        lse = torch.logsumexp(log_m, -1 if kind == ROW else -2)
        if self.flagged(h):
            self.flags.append((h, (old * lse.exp() - 1).abs().amax()))
        if kind == ROW:
            ubar = ubar - lse
        else:
            wbar = wbar - lse
        self.segments.append((h, ubar, wbar))
        return self.g.kernel(ubar, wbar)

    def step(self, m: Tensor, h: int, careful: bool) -> Tensor:
        kind = self.kinds[h]
        out = loops.step((m[1], m[0]), kind, self.given(h))
        if careful and not _fine(out, _big(out.dtype)):
            m = self.log_step(h)
            out = loops.step((m[1], m[0]), kind, self.ones)
        elif self.flagged(h):
            self.flags.append((h, (self.old(h) / out - 1).abs().amax()))
        self.outs.append(out)
        return m

    def begin(self) -> tuple[Tensor, Tensor]:
        """NeuralSort's column term, the first segment (shifted by each position's maximum) and
        its kernel: what the forward starts from and the backward rebuilds."""
        g = self.g
        g.a_log = g.abs_diff_sum() / -g.tau
        if g.padded:
            g.a_log = torch.where(g.exists, g.a_log, g.pad_log)
        zero, shift = self.ones - 1, -g.position_max()
        self.segments = [(0, shift, zero) if self.kinds[0] == ROW else (0, zero, shift)]
        return g.kernel(*self.segments[0][1:])

    def run(self) -> tuple[Tensor, Tensor]:
        """All half-steps (or up to convergence); returns the kernel of the last segment."""
        g, big = self.g, _big(self.g.s.dtype)
        m = self.begin()
        if self.tol is None and self.run_unchecked(m, big):
            return m
        h, stop, careful, flag_at = 0, len(self.kinds), False, 0
        while h < stop:
            first = h
            for h in range(first, min(first + CHECK_EVERY, stop)):
                m = self.step(m, h, careful)
            h += 1
            # The block's last scaling of each kind: inf and NaN propagate, so they show there.
            if not careful and not _fine(torch.stack(self.outs[max(first, h - 2):h]), big):
                del self.outs[first:]
                self.flags = [(j, f) for j, f in self.flags if j < first]
                m, h, careful = self.absorb(first), first, True
                continue
            careful = False
            if self.flags[flag_at:]:
                done = (torch.stack([f for _, f in self.flags[flag_at:]]) < self.tol).nonzero()
                if len(done):
                    stop = self.flags[flag_at + int(done[0, 0])][0]  # keep the steps before it
                    del self.outs[stop:]
                    kept = [seg for seg in self.segments if seg[0] < stop]
                    if len(kept) < len(self.segments):
                        self.segments = kept
                        m = g.kernel(*kept[-1][1:])
                    break
                flag_at = len(self.flags)
        del self.kinds[stop:]
        return m

    def run_unchecked(self, m: tuple[Tensor, Tensor], big: float) -> bool:
        """Every half-step with no host check, into one ``[steps, b, w]`` buffer (two ops a step);
        ``False``, with nothing recorded, when a scaling left ``[1/BIG, BIG]``. When all are in
        range the checked loop would have run exactly these products, so nothing changes; the
        only host synchronisation is the one check at the end."""
        history = torch.empty(len(self.kinds), *self.g.s.shape, dtype=self.g.s.dtype, device=self.g.s.device)
        # A row step multiplies by Kᵀ on the right, a column step by K.
        loops.scalings(history, self.ones, (m[1], m[0]), self.kinds)
        if not _fine(history, big):
            return False
        self.outs = history
        return True

    def value(self, m: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
        """Smooth DCG of the last (row) step's matrix: ``Σ_i row_w_i Σ_j W_ij col_h_j``, and the means."""
        g, last = self.g, len(self.kinds) - 1
        mean = self.outs[last] * _sum_cols(m, self.given(last) * g.col_h)[:, 0]
        return (g.row_w * mean).sum(-1), mean


def backward_group(run: _Run, mean: Tensor, grad: Tensor) -> Tensor:
    """Gradient of ``Σ grad · dcg`` with respect to the group's (compacted) scores.

    Each half-step's gradient with respect to the log-kernel is ``M ∘ (p ⊗ q)`` (two such terms
    for the last step). The walk back needs one product per half-step; the scores' and ``a``'s
    parts (``Σ`` over the position axis of ``r``-weighted and plain terms) are summed per
    segment in one matrix–matrix product."""
    if len(run.segments) == 1:
        return backward_one_segment(run, mean, grad)
    g, kinds = run.g, run.kinds
    plain = not g.transposed
    gs = torch.zeros_like(g.s)
    ga = torch.zeros_like(g.s)
    terms: list[tuple[Tensor, Tensor]] = []  # (p on rows, q on columns) of the current segment

    def flush(m: tuple[Tensor, Tensor]) -> None:
        p, q = torch.stack([t[0] for t in terms], 1), torch.stack([t[1] for t in terms], 1)
        weights, scale = (p, q) if plain else (q, p)  # on the position axis / on the item axis
        sums = torch.bmm(torch.cat([g.r[:, None, :] * weights, weights], 1), m[0] if plain else m[1])
        k = len(terms)
        gs.add_((scale * sums[:, :k]).sum(1))
        ga.add_((scale * sums[:, k:]).sum(1))
        terms.clear()

    seg = len(run.segments) - 1
    m = g.kernel(*run.segments[seg][1:])
    last = len(kinds) - 1
    o, given = run.outs[last], run.given(last)
    p1 = o * g.row_w * grad[:, None]
    p2 = -p1 * mean
    q1 = given * g.col_h
    terms += [(p1, q1), (p2, given)]
    t = _sum_rows(m, p1, p2)
    back = q1 * t[:, 0] + given * t[:, 1]  # gradient of the last step's input (log) scaling
    for h in range(last - 1, -1, -1):
        if run.segments[seg][0] > h:
            flush(m)
            while run.segments[seg][0] > h:  # a step can open two: absorbed, then a log-domain step
                seg -= 1
            m = g.kernel(*run.segments[seg][1:])
        given = run.given(h)
        pq = -back * run.outs[h]
        if kinds[h] == ROW:
            terms.append((pq, given))
            back = given * _sum_rows(m, pq)[:, 0]
        else:
            terms.append((given, pq))
            back = given * _sum_cols(m, pq)[:, 0]
    flush(m)
    gs += g.abs_diff_sum_backward(g.real_only(-ga / g.tau), g.buffers[0])
    return g.real_only(gs)


def backward_one_segment(run: _Run, mean: Tensor, grad: Tensor) -> Tensor:
    """:func:`backward_group` for a run with one kernel throughout (no absorption), in two ops a step.

    Each step multiplies by the previous one's scaling (``given_h = õ_{h−1}``), so the walk back is
    ``pq_{h−1} = −õ_{h−1}² ∘ (pq_h`` times the kernel``)``: one product and one multiply into a
    buffer that holds ``õ²`` until then. The sign flips every step, so ``pq̃ = ±pq`` is kept
    unsigned: ``+`` on row steps, ``−`` on column steps (the last step is a row step). The
    kernel's gradient ``K ∘ Σ_h p_h ⊗ q_h`` is then two matrix–matrix products over all steps.
    Large temporaries are few on purpose: each fresh ``[steps, b, w]`` block costs page faults.
    """
    g, kinds = run.g, run.kinds
    # A checked run (``tol``, or a group rerun in float64) appended its scalings one by one.
    outs = run.outs if isinstance(run.outs, Tensor) else torch.stack(run.outs)
    last = len(kinds) - 1
    m = g.kept if g.kept is not None else g.kernel(*run.segments[0][1:])
    given = outs[last - 1]
    p1 = outs[last] * g.row_w * grad[:, None]
    p2 = -p1 * mean
    q1 = given * g.col_h
    t = _sum_rows(m, p1, p2)
    pq = outs[:last].square()
    pq[last - 1].mul_(g.col_h * t[:, 0] + t[:, 1])
    loops.walk_back(pq, m, kinds)
    # Σ p ⊗ q: step 0's term (its given scaling is 1) and the last step's two, as broadcast
    # products (a two-column matrix product costs several times as much), then the rest by kind.
    first = pq[0][:, :, None] if kinds[0] == ROW else -pq[0][:, None, :]
    grad_log_m = torch.addcmul(first, p1[:, :, None], q1[:, None, :]).addcmul_(p2[:, :, None], given[:, None, :])
    row = 2 if kinds[0] == ROW else 1  # first row step after step 0
    col = 3 - row
    grad_log_m.baddbmm_(pq[row:last:2].permute(1, 2, 0), outs[row - 1 : last - 1 : 2].transpose(0, 1))
    grad_log_m.baddbmm_(outs[col - 1 : last - 1 : 2].permute(1, 2, 0), pq[col:last:2].transpose(0, 1), alpha=-1)
    grad_log_m.mul_(m[0])
    if g.transposed:  # items on rows
        grad_log_m = grad_log_m.transpose(1, 2)
    sums = torch.bmm(torch.stack([g.r, run.ones], 1), grad_log_m)  # Σ over positions of r·G and G
    gs = sums[:, 0] + g.abs_diff_sum_backward(g.real_only(sums[:, 1] / -g.tau), grad_log_m)
    return g.real_only(gs)


@contextlib.contextmanager
def _subnormals_flushed(device: torch.device) -> Iterator[None]:
    """Subnormal results flushed to zero (and read as zero) by this thread's CPU while inside.

    The backward's walk multiplies gradients that shrink step after step by kernel entries: on
    long lists many products fall below the smallest normal number, and x86 handles each such
    operand ~100× slower (a 240-item list's backward took 1.5× as long). Flushed, those terms,
    each under ``finfo.tiny`` (1e-38 in float32), become 0: a change far below the rounding of
    any gradient entry. The thread's previous mode is kept when it already flushes (read from a
    Python float product, which runs on the same floating-point unit) and restored otherwise."""
    if device.type != "cpu" or _TINY * 0.5 == 0.0 or not torch.set_flush_denormal(True):
        yield
        return
    try:
        yield
    finally:
        torch.set_flush_denormal(False)


_TINY = sys.float_info.min


def steps(iters: int, transposed: bool) -> int:
    """Half-steps of a run of ``iters`` iterations: the first axis of :func:`forward`'s ``history``."""
    return len(_kinds(iters, transposed))


def _groups(lengths: list[int]) -> tuple[list[tuple[int, int, int]], list[int], Tensor | None]:
    """The groups of :func:`.plan.plan`, the lengths in their order, and that order
    (``None`` when the batch is already by decreasing length: its groups are slices)."""
    if all(a >= b for a, b in zip(lengths, lengths[1:])):
        return plan(lengths), lengths, None
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])  # stable: ties keep batch order
    ordered = [lengths[i] for i in order]
    return plan(ordered), ordered, torch.tensor(order)


def _compute_dtype(s: Tensor, n: Tensor, width: int, tau: float) -> torch.dtype:
    """float64 for a group whose log-kernel ``r_i s_j + a_j`` (each term at most ``M = 3·w·max|s|/τ``
    in magnitude) its own dtype resolves worse than :data:`LOG_KERNEL_MAX_ERROR`; else its dtype."""
    if s.dtype == torch.float64:
        return s.dtype
    real = torch.arange(width, device=s.device)[None, :] < n[:, None]
    largest = float(torch.where(real, s.abs(), torch.zeros_like(s)).amax()) if s.numel() else 0.0
    precise = 3 * width * largest / tau * torch.finfo(s.dtype).eps <= LOG_KERNEL_MAX_ERROR
    return s.dtype if precise else torch.float64


def _group(place: Place, ordered: list[int], scores: Tensor, lengths: Tensor, rank_weight: Tensor, gains: Tensor,
           tau: float, transposed: bool, dtype: torch.dtype | None = None) -> _Group:  # fmt: skip
    s, n = place.take(scores), place.take_lists(lengths)
    dtype = dtype or _compute_dtype(s, n, place.width, tau)
    return _Group(
        s.to(dtype), n.to(dtype), place.take(rank_weight).to(dtype), place.take(gains).to(dtype),
        tau, transposed, ordered[place.stop - 1] < place.width,
    )  # fmt: skip


def keeps_kernel(width: int, iters: int, transposed: bool) -> bool:
    """Whether :func:`forward` hands its kernels on to the backward (``[B, N, N]``): while they are
    no bigger than the ``[steps, B, N]`` history, so what lives between the two stays
    ``O(iterations · B · N)``; longer lists rebuild theirs in the backward."""
    return width <= steps(iters, transposed)


def forward(
    scores: Tensor, lengths: Tensor, rank_weight: Tensor, gains: Tensor, tau: float, iters: int, transposed: bool,
    tol: float | None,
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """Smooth DCG ``[B]`` of compact lists (row ``b``'s first ``lengths[b]`` entries are its items),
    and what :func:`backward` needs: ``history [steps, B, N]`` (each step's scaling) and
    ``kernels`` (``[B, N, N]`` where :func:`keeps_kernel`, else ``[0, N, N]``), both for groups run
    with one kernel in ``scores``' dtype, and ``record [B, 3]`` int64 (steps run, kernels used,
    1 where the group ran in float64) per list."""
    batch, width = scores.shape
    like = {"dtype": scores.dtype, "device": scores.device}
    dcg = torch.zeros(batch, **like)
    history = torch.zeros(steps(iters, transposed), batch, width, **like)
    kernels = torch.zeros(batch if keeps_kernel(width, iters, transposed) else 0, width, width, **like)
    record = torch.zeros(batch, 3, dtype=torch.int64, device=scores.device)
    groups, ordered, order = _groups(lengths.tolist())
    order = None if order is None else order.to(scores.device)
    for first, stop, w in groups:
        place = Place(first, stop, w, order)
        g = _group(place, ordered, scores, lengths, rank_weight, gains, tau, transposed)
        g.allocate()
        run = _Run(g, iters, tol)
        m = run.run()
        place.put(dcg, run.value(m)[0].to(dcg.dtype))
        same = g.s.dtype == scores.dtype
        if len(run.segments) == 1 and same:
            place.put_steps(history, run.outs if isinstance(run.outs, Tensor) else torch.stack(run.outs))
            if len(kernels):
                place.put_square(kernels, m[0])
        done = torch.tensor([[len(run.kinds), len(run.segments), int(not same)]], device=scores.device)
        place.put_rows(record, done.expand(stop - first, 3))
    return dcg, history, kernels, record


def backward(
    grad_dcg: Tensor, scores: Tensor, lengths: Tensor, rank_weight: Tensor, gains: Tensor, history: Tensor,
    kernels: Tensor, record: Tensor, tau: float, iters: int, transposed: bool, tol: float | None,
) -> Tensor:
    """Gradient of ``Σ grad_dcg · dcg`` with respect to ``scores`` (0 at padding), from
    :func:`forward`'s ``history``, ``kernels`` and ``record``."""
    grad = torch.zeros_like(scores)
    groups, ordered, order = _groups(lengths.tolist())
    runs = record.tolist()
    order = None if order is None else order.to(scores.device)
    with _subnormals_flushed(scores.device):
        for first, stop, w in groups:
            place = Place(first, stop, w, order)
            done, segments, upcast = runs[first if order is None else int(order[first])]
            dtype = torch.float64 if upcast else scores.dtype
            g = _group(place, ordered, scores, lengths, rank_weight, gains, tau, transposed, dtype)
            if segments == 1 and not upcast:
                run = _Run(g, iters, None)
                del run.kinds[done:]
                if len(kernels):
                    k = place.take_square(kernels)
                    m = g.kept = (k, k.transpose(1, 2).contiguous() if w <= TRANSPOSE_COPY_MAX else k.transpose(1, 2))
                    run.segments = [(0, run.ones, run.ones)]  # one segment; its vectors are not needed again
                else:
                    g.allocate()
                    m = g.kept = run.begin()
                run.outs = place.take_steps(history)[:done]
            else:  # the same absorptions (and dtype) as the forward's, which kept no record of them
                g.allocate()
                run = _Run(g, iters, tol)
                m = run.run()
            mean = run.value(m)[1]
            place.put(grad, backward_group(run, mean, place.take_lists(grad_dcg).to(g.s.dtype)).to(grad.dtype))
    return grad
