"""ERR@k, nERR@k, RBP, RBP's residual and Judged@k of the TREC evaluator: against ir_measures (gdeval,
cwl_eval and its judged provider) on generated runs, and against plain references written here."""

import numpy as np
import pytest

from torch_ndcg.trec import evaluate, read_qrels, read_run


def _files(tmp_path, seed=0, queries=12):
    """Numeric topics (gdeval's rule), grades -1..4, distinct scores, unjudged documents, an empty query."""
    rng = np.random.default_rng(seed)
    qrels, run = [], []
    for q in range(1, queries + 1):
        docs = [f"d{i:03d}" for i in range(60)]
        judged = rng.choice(60, size=int(rng.integers(0, 40)), replace=False)
        for i in judged:
            grade = 0 if q == queries else int(rng.choice([-1, 0, 0, 1, 2, 3, 4]))
            qrels.append((str(q), docs[i], grade))
        retrieved = rng.choice(60, size=int(rng.integers(1, 50)), replace=False)
        scores = rng.permutation(len(retrieved)) + rng.random()
        for rank, (i, score) in enumerate(sorted(zip(retrieved, scores), key=lambda x: -x[1])):
            run.append((str(q), docs[i], rank + 1, float(score)))
    (tmp_path / "qrels").write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in qrels))
    (tmp_path / "run").write_text("".join(f"{q} Q0 {d} {r} {s!r} gen\n" for q, d, r, s in run))
    return qrels, run


def _ours(tmp_path, measures):
    result = evaluate(read_qrels(tmp_path / "qrels"), read_run(tmp_path / "run"), measures)
    return {name: dict(zip(result.qids, values.tolist())) for name, values in result.per_query.items()}


def _by_query(qrels, run):
    judgements, ranking = {}, {}
    for q, d, g in qrels:
        judgements.setdefault(q, {})[d] = g
    for q, d, _, s in run:
        ranking.setdefault(q, []).append((s, d))
    ranking = {q: [d for _, d in sorted(pairs, key=lambda x: (-x[0], [-ord(c) for c in x[1]]))]
               for q, pairs in ranking.items()}
    return judgements, ranking


def _err(grades, k):
    value, reach = 0.0, 1.0
    for i, g in enumerate(grades[:k]):
        stop = (2 ** min(max(g, 0), 4) - 1) / 16
        value += reach * stop / (i + 1)
        reach *= 1 - stop
    return value


def test_err_and_nerr_and_residual_against_references_written_here(tmp_path):
    qrels, run = _files(tmp_path, seed=1)
    ours = _ours(tmp_path, ["err_cut.5,20", "nerr_cut.10", "rbp_residual.0.5,0.9", "judged.10"])
    judgements, ranking = _by_query(qrels, run)
    for q in ours["err_cut_5"]:
        grades = [judgements[q].get(d, 0) for d in ranking[q]]
        ideal = sorted((g for g in judgements[q].values() if g > 0), reverse=True)
        assert ours["err_cut_5"][q] == pytest.approx(_err(grades, 5), abs=1e-12)
        assert ours["err_cut_20"][q] == pytest.approx(_err(grades, 20), abs=1e-12)
        expected = _err(grades, 10) / _err(ideal, 10) if _err(ideal, 10) > 0 else 0.0
        assert ours["nerr_cut_10"][q] == pytest.approx(expected, abs=1e-12)
        for p in (0.5, 0.9):
            unjudged = sum((1 - p) * p**i for i, d in enumerate(ranking[q]) if d not in judgements[q])
            assert ours[f"rbp_residual_{p:.2f}"][q] == pytest.approx(unjudged + p ** len(ranking[q]), abs=1e-12)
        top = ranking[q][:10]
        assert ours["judged_10"][q] == pytest.approx(sum(d in judgements[q] for d in top) / len(top), abs=1e-12)


def _ir_measures(qrels, run, measures, provider):
    ir_measures = pytest.importorskip("ir_measures")
    qrels_records = [ir_measures.Qrel(q, d, g) for q, d, g in qrels]
    run_records = [ir_measures.ScoredDoc(q, d, s) for q, d, _, s in run]
    evaluator = ir_measures.providers.registry[provider].evaluator(measures, qrels_records)
    values = {}
    for metric in evaluator.iter_calc(run_records):
        values.setdefault(str(metric.measure), {})[metric.query_id] = metric.value
    return values


def test_judged_at_k_equals_ir_measures(tmp_path):
    ir_measures = pytest.importorskip("ir_measures")
    qrels, run = _files(tmp_path, seed=2)
    theirs = _ir_measures(qrels, run, [ir_measures.Judged @ 5, ir_measures.Judged @ 10], "judged")
    ours = _ours(tmp_path, ["judged.5,10"])
    for k in (5, 10):
        for q, value in theirs[f"Judged@{k}"].items():
            assert ours[f"judged_{k}"][q] == pytest.approx(value, abs=1e-9)


def test_rbp_equals_ir_measures_cwl_eval(tmp_path):
    ir_measures = pytest.importorskip("ir_measures")
    pytest.importorskip("cwl")
    qrels, run = _files(tmp_path, seed=3)
    theirs = _ir_measures(qrels, run, [ir_measures.RBP(rel=1, p=0.8), ir_measures.RBP(rel=2, p=0.5)], "cwl_eval")
    for level, p in ((1, 0.8), (2, 0.5)):
        result = evaluate(read_qrels(tmp_path / "qrels"), read_run(tmp_path / "run"), [f"rbp.{p}"],
                          relevance_level=level)
        ours = dict(zip(result.qids, result.per_query[f"rbp_{p:.2f}"].tolist()))
        column = theirs[str(ir_measures.RBP(rel=level, p=p))]
        assert column
        for q, value in column.items():
            assert ours[q] == pytest.approx(value, abs=1e-9)


def test_err_equals_ir_measures_gdeval(tmp_path):
    ir_measures = pytest.importorskip("ir_measures")
    import shutil

    if shutil.which("perl") is None:
        pytest.skip("gdeval needs perl")
    qrels, run = _files(tmp_path, seed=4)
    theirs = _ir_measures(qrels, run, [ir_measures.ERR @ 10, ir_measures.ERR @ 20], "gdeval")
    ours = _ours(tmp_path, ["err_cut.10,20"])
    for k in (10, 20):
        column = theirs[f"ERR@{k}"]
        assert column
        for q, value in column.items():
            assert ours[f"err_cut_{k}"][q] == pytest.approx(value, abs=5.0001e-6)  # gdeval prints 5 decimals


def test_rbp_names_every_persistence_exactly(tmp_path):
    _files(tmp_path, seed=2)
    ours = _ours(tmp_path, ["rbp.0.95,0.951", "rbp.0.999", "rbp.0.5"])
    assert set(ours) == {"rbp_0.50", "rbp_0.95", "rbp_0.951", "rbp_0.999"}
    assert ours["rbp_0.95"] != ours["rbp_0.951"]
