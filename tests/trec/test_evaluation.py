"""torch_ndcg.trec.evaluate agrees with pytrec_eval (trec_eval 9) on every measure, per query, to 1e-6."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch

import torch_ndcg as tn
from torch_ndcg import trec
from torch_ndcg.trec import evaluation
import peak_memory
from trec_files import MEASURES, iprec_at_trec_eval_9_counts, random_case, write_qrels, write_run

pytrec_eval = pytest.importorskip("pytrec_eval")

DATA = Path(__file__).parent / "data"
TOLERANCE = 1e-6


def _pytrec(qrels: dict, run: dict, level: int = 1) -> dict[str, dict[str, float]]:
    return pytrec_eval.RelevanceEvaluator(qrels, set(MEASURES), relevance_level=level).evaluate(run)


def _assert_agrees(ours: trec.Evaluation, reference: dict[str, dict[str, float]]) -> None:
    assert ours.qids == sorted(reference, key=lambda q: q.encode())
    names = set(ours.per_query)
    assert names == set(next(iter(reference.values())))
    for i, qid in enumerate(ours.qids):
        for name in names:
            mine, theirs = float(ours.per_query[name][i]), reference[qid][name]
            assert abs(mine - theirs) <= TOLERANCE, (qid, name, mine, theirs)
    for name in names - {"gm_map", "num_ret", "num_rel", "num_rel_ret"}:
        mean = sum(values[name] for values in reference.values()) / len(reference)
        assert abs(ours.summary[name] - mean) <= TOLERANCE, name


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("level", [1, 2])
def test_generated_runs_agree_with_pytrec_eval(tmp_path, seed, level):
    rng = np.random.default_rng(seed)
    qrels, run = random_case(rng)
    ours = trec.evaluate(write_qrels(tmp_path / "q", qrels), write_run(tmp_path / "r", run, rng=rng),
                         list(MEASURES), relevance_level=level)
    _assert_agrees(ours, _pytrec(qrels, run, level))


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("level", [1, 2])
def test_interpolated_precision_agrees_with_pytrec_eval_at_its_counts(tmp_path, seed, level):
    rng = np.random.default_rng(seed)
    qrels, run = random_case(rng)
    files = write_qrels(tmp_path / "q", qrels), write_run(tmp_path / "r", run, rng=rng)
    ours = iprec_at_trec_eval_9_counts(*files, level)
    reference = pytrec_eval.RelevanceEvaluator(qrels, {"iprec_at_recall"}, relevance_level=level).evaluate(run)
    qids = trec.evaluate(*files, ["num_q"], relevance_level=level).qids
    assert qids == sorted(reference, key=lambda q: q.encode())
    for i, qid in enumerate(qids):
        assert {name: float(values[i]) for name, values in ours.items()} == pytest.approx(reference[qid], abs=TOLERANCE)


def test_iprec_at_recall_rounds_levels_to_counts_as_trec_eval_10(tmp_path):
    """R = 3 relevant at ranks 1, 5, 6: level 0.4 is round(1.2) = 1 document (precision 1), 0.5 is
    round(1.5) = 2 (best precision from the 2nd on: 3/6); trec_eval 9 took int(1.2 + 0.9) = 2 for 0.4."""
    qrels = write_qrels(tmp_path / "q", {"q": {"a": 1, "b": 1, "c": 1, "x": 0}})
    run = write_run(tmp_path / "r", {"q": {"a": 6.0, "x": 5.0, "y": 4.0, "z": 3.0, "b": 2.0, "c": 1.0}})
    result = trec.evaluate(qrels, run, ["iprec_at_recall.0.4,0.5,1", "bpref"])
    assert {name: values.item() for name, values in result.per_query.items()} == {
        "bpref": 1 / 3,  # a has nothing non-relevant above it; b and c have x, N = 1
        "iprec_at_recall_0.40": 1.0, "iprec_at_recall_0.50": 0.5, "iprec_at_recall_1.00": 0.5,
    }


@pytest.mark.parametrize("seed", range(4))
def test_sorting_path_gives_the_counting_path_ranks(tmp_path, seed, monkeypatch):
    rng = np.random.default_rng(100 + seed)
    qrels, run = random_case(rng, queries=20, docs=60)
    files = write_qrels(tmp_path / "q", qrels), write_run(tmp_path / "r", run)
    counted = trec.evaluate(*files, list(MEASURES))
    monkeypatch.setattr(evaluation, "COUNT_UP_TO", 0)
    sorted_ = trec.evaluate(*files, list(MEASURES))
    for name, values in counted.per_query.items():
        torch.testing.assert_close(sorted_.per_query[name], values, rtol=0, atol=0, msg=name)
    _assert_agrees(sorted_, _pytrec(qrels, run))


@pytest.mark.parametrize("seed", range(4))
def test_complete_averages_over_qrels_queries_missing_ones_scoring_zero(tmp_path, seed):
    rng = np.random.default_rng(200 + seed)
    qrels, run = random_case(rng)
    files = write_qrels(tmp_path / "q", qrels), write_run(tmp_path / "r", run)
    ours = trec.evaluate(*files, [*MEASURES, "num_q"], complete=True)
    reference = _pytrec(qrels, run)
    assert ours.qids == sorted(qrels, key=lambda q: q.encode())
    for i, qid in enumerate(ours.qids):
        for name, values in ours.per_query.items():
            if qid in reference:
                expected = reference[qid][name]
            elif name == "num_rel":
                expected = sum(rel >= 1 for rel in qrels[qid].values())
            else:
                expected = math.log(1e-5) if name == "gm_map" else 0.0
            assert abs(float(values[i]) - expected) <= TOLERANCE, (qid, name)
    assert ours.summary["num_q"] == len(qrels)


def test_trec_eval_test_files_agree_with_pytrec_eval():
    for qrels_file, run_file, level in [("qrels.test", "results.test", 1), ("qrels.rel_level", "results.test", 2)]:
        with open(DATA / qrels_file) as q, open(DATA / run_file) as r:
            qrels, run = pytrec_eval.parse_qrel(q), pytrec_eval.parse_run(r)
        ours = trec.evaluate(DATA / qrels_file, DATA / run_file, list(MEASURES), relevance_level=level)
        _assert_agrees(ours, _pytrec(qrels, run, level))
        iprec = iprec_at_trec_eval_9_counts(DATA / qrels_file, DATA / run_file, level)
        reference = pytrec_eval.RelevanceEvaluator(qrels, {"iprec_at_recall"}, relevance_level=level).evaluate(run)
        for i, qid in enumerate(ours.qids):
            assert {name: float(values[i]) for name, values in iprec.items()} == pytest.approx(reference[qid], abs=TOLERANCE)


def test_exp2_gain_matches_the_dense_ranked_engine(tmp_path):
    """With gain="exp2" the sparse slots give what tn.ranked.ndcg gives on the full ranked lists."""
    rng = np.random.default_rng(7)
    qrels, run = random_case(rng, queries=10)
    result = trec.evaluate(write_qrels(tmp_path / "q", qrels), write_run(tmp_path / "r", run),
                           ["ndcg_cut.3,10"], gain="exp2")
    ranked, truth = [], []
    for qid in result.qids:
        docs = sorted(run[qid], key=lambda d: (run[qid][d], d.encode()), reverse=True)
        ranked.append(docs)
        truth.append({d: max(r, 0) for d, r in qrels[qid].items()})
    ids, target, relevance = tn.from_lists(ranked, truth)
    expected = tn.ranked.ndcg(ids, target, relevance, k=[3, 10], gain="exp2", reduction="none")
    torch.testing.assert_close(torch.stack([result.per_query["ndcg_cut_3"], result.per_query["ndcg_cut_10"]], -1),
                               expected)


def test_a_query_judged_only_negatively_has_nothing_to_find(tmp_path):
    """trec_eval's own result here depends on the query before (its level counts stay unset)."""
    qrels = write_qrels(tmp_path / "q", {"a": {"x": -1, "y": -2}, "b": {"x": 1}})
    run = write_run(tmp_path / "r", {"a": {"x": 2.0, "z": 1.0}, "b": {"x": 1.0}})
    result = trec.evaluate(qrels, run, ["num_ret", "num_rel", "map", "ndcg", "P.1", "recip_rank"])
    assert [values[0].item() for values in result.per_query.values()] == [2, 0, 0, 0, 0, 0]


def test_scores_are_compared_as_float64(tmp_path):
    """trec_eval reads scores with atof into doubles: 1 + 1e-9 ranks above 1. (pytrec_eval-terrier
    rounds them to float32, which ties the two and lets the docno decide.)"""
    qrels = write_qrels(tmp_path / "q", {"x": {"c": 1}})
    run = write_run(tmp_path / "r", {"x": {"c": 1.0, "b": 1.0 + 1e-9}})
    assert trec.evaluate(qrels, run, ["recip_rank"]).per_query["recip_rank"].item() == 0.5


def test_a_judged_docno_longer_than_every_retrieved_one_is_not_retrieved(tmp_path):
    qrels = write_qrels(tmp_path / "q", {"q": {"abcdef": 1, "ab": 1}})
    run = write_run(tmp_path / "r", {"q": {"abc": 2.0, "ab": 1.0}})
    result = trec.evaluate(qrels, run, ["num_rel_ret", "recip_rank"])
    assert result.summary == {"num_rel_ret": 1, "recip_rank": 0.5}


def test_only_a_shared_query_set_is_evaluated(tmp_path):
    qrels = write_qrels(tmp_path / "q", {"a": {"x": 1}, "b": {"y": 1}})
    run = write_run(tmp_path / "r", {"b": {"y": 1.0}, "c": {"z": 1.0}})
    result = trec.evaluate(qrels, run, ["map", "num_q"])
    assert result.qids == ["b"] and result.summary == {"num_q": 1, "map": 1.0}


@pytest.mark.parametrize(
    "kwargs, error",
    [
        ({"relevance_level": -1}, ValueError),
        ({"relevance_level": 1.5}, ValueError),
        ({"relevance_level": True}, ValueError),
        ({"complete": 1}, TypeError),
        ({"gain": "log"}, ValueError),
        ({"measures": ["ndcg_cut.0"]}, ValueError),
        ({"measures": ["ndcg_cut.x"]}, ValueError),
        ({"measures": ["infAP"]}, ValueError),
        ({"measures": ["bpref.5"]}, ValueError),
        ({"measures": ["iprec_at_recall.1.5"]}, ValueError),
        ({"measures": ["iprec_at_recall.nan"]}, ValueError),
        ({"measures": ["map.5"]}, ValueError),
        ({"measures": [5]}, TypeError),
    ],
)
def test_bad_arguments_are_refused_by_name(kwargs, error):
    with pytest.raises(error, match=next(iter(kwargs)) if "measures" not in kwargs else "measure|cutoff"):
        trec.evaluate(DATA / "small.qrels", DATA / "small.run", **kwargs)


def test_a_run_sharing_no_query_with_the_qrels_is_refused(tmp_path):
    qrels = write_qrels(tmp_path / "q", {"301": {"x": 1}})
    run = write_run(tmp_path / "r", {"q301": {"x": 1.0}})
    with pytest.raises(ValueError, match="no query of run .*r is in qrels .*q"):
        trec.evaluate(qrels, run)


def test_bad_inputs_are_refused_by_type():
    with pytest.raises(TypeError, match="qrels must be a path"):
        trec.evaluate({"q": {"d": 1}}, DATA / "small.run")
    with pytest.raises(TypeError, match="run must be a path"):
        trec.evaluate(DATA / "small.qrels", 3)


@pytest.mark.parametrize("qrels, run", [
    ({"q1": {"Россия": 1, "Франция": 0}}, {"q1": {"Россия": 2.5, "Франция": 1.0}}),
    ({"q1": {"Россия": 1, "Франция": 0}, "Πq": {"Šx": 2, "à": 1, "х": 0}},
     {"q1": {"Россия": 2.5, "Франция": 1.0}, "Πq": {"х": 3.0, "Šx": 2.0, "à": 1.0, "Å\xa0b": 0.5}}),
])
def test_non_ascii_ids_agree_with_pytrec_eval(tmp_path, qrels, run):
    files = write_qrels(tmp_path / "q", qrels), write_run(tmp_path / "r", run)
    ours = trec.evaluate(*files, ["P.1", "map", "ndcg", "num_ret"])
    reference = pytrec_eval.RelevanceEvaluator(qrels, {"P.1", "map", "ndcg", "num_ret"}).evaluate(run)
    assert ours.qids == sorted(qrels, key=str.encode)
    for i, qid in enumerate(ours.qids):
        for name, values in ours.per_query.items():
            assert abs(float(values[i]) - reference[qid][name]) <= TOLERANCE, (qid, name)
    assert ours.per_query["P_1"][0] == 1.0 and ours.per_query["map"][0] == 1.0


def test_ids_that_are_not_utf8_come_back_with_surrogates(tmp_path):
    (tmp_path / "q").write_bytes(b"q\xff 0 d\xe9 1\n")
    (tmp_path / "r").write_bytes(b"q\xff Q0 d\xe9 1 1 run\xfe\n")
    result = trec.evaluate(tmp_path / "q", tmp_path / "r", ["map", "runid"])
    assert result.qids == ["q\udcff"] and result.qids[0].encode("utf-8", "surrogateescape") == b"q\xff"
    assert result.runid == "run\udcfe" and result.summary["map"] == 1.0


def test_exp2_overflow_is_refused_as_in_the_library(tmp_path):
    files = write_qrels(tmp_path / "q", {"q": {"a": 1100, "b": 0}}), write_run(tmp_path / "r", {"q": {"a": 1.0, "b": 2.0}})
    with pytest.raises(ValueError, match=r"/q: relevance labels above 1022 overflow gain='exp2'.*--gain linear"):
        trec.evaluate(*files, ["ndcg"], gain="exp2")
    with pytest.raises(ValueError, match="overflow gain='exp2'"):  # the library's own rule
        tn.ndcg(torch.tensor([[1.0, 2.0]], dtype=torch.float64), torch.tensor([[1100.0, 0.0]], dtype=torch.float64),
                gain="exp2")
    linear = trec.evaluate(*files, ["ndcg"])  # the judged value as gain stays finite
    assert math.isfinite(linear.summary["ndcg"])
    exp2 = trec.evaluate(write_qrels(tmp_path / "q2", {"q": {"a": 1000, "b": 0}}), files[1], ["ndcg"], gain="exp2")
    assert math.isfinite(exp2.summary["ndcg"])


def test_ideal_gains_cost_follows_the_judged_documents(tmp_path):
    # A [queries, largest R] table of ideal gains took 9 GiB for this case (pytrec_eval: 28 MiB).
    qrels = {f"q{i}": {f"d{i}": 1} for i in range(20_000)} | {"big": {f"b{j}": 1 + j % 3 for j in range(20_000)}}
    run = {f"q{i}": {f"d{i}": 1.0} for i in range(20_000)} | {"big": {f"b{j}": float(-j) for j in range(0, 20_000, 2)}}
    files = write_qrels(tmp_path / "q", qrels), write_run(tmp_path / "r", run)
    setup = f"import torch_ndcg.trec as trec\nq, r = trec.read_qrels({str(files[0])!r}), trec.read_run({str(files[1])!r})"
    growth = peak_memory.peak_growth(setup, "trec.evaluate(q, r, ['ndcg', 'ndcg_cut.10,1000', 'map', 'bpref'])")
    assert growth < 512 << 20, f"{growth / 2**20:.0f} MiB"
    ours = trec.evaluate(*files, ["ndcg", "ndcg_cut.10,1000"])
    reference = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg", "ndcg_cut.10,1000"}).evaluate(run)
    for i, qid in enumerate(ours.qids):
        for name, values in ours.per_query.items():
            assert abs(float(values[i]) - reference[qid][name]) <= TOLERANCE, (qid, name)
