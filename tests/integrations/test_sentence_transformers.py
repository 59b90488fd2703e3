"""The sentence-transformers adapters: our losses in a real CrossEncoderTrainer run on a tiny local
model, and the reranking evaluator against sentence-transformers' own."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

pytest.importorskip("sentence_transformers", reason="the sentence-transformers extra")
pytest.importorskip("datasets", reason="the sentence-transformers extra (its [train] part)")

from sentence_transformers.cross_encoder import CrossEncoder, CrossEncoderTrainer  # noqa: E402
from sentence_transformers.cross_encoder import CrossEncoderTrainingArguments  # noqa: E402
from sentence_transformers.cross_encoder import losses as peer  # noqa: E402
from sentence_transformers.cross_encoder.evaluation import (  # noqa: E402
    CrossEncoderRerankingEvaluator as ReferenceEvaluator,
)

import torch_ndcg as tn  # noqa: E402
from torch_ndcg.integrations import sentence_transformers as st  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
from cross_encoder_reranker import main as example_main, tiny_bert  # noqa: E402


@pytest.fixture(scope="module")
def model_path(tmp_path_factory):
    words = sorted({word for text in QUERIES + [d for docs in DOCUMENTS for d in docs] for word in text.split()})
    return tiny_bert(tmp_path_factory.mktemp("tiny-cross-encoder"), words=words)


@pytest.fixture
def model(model_path):
    return CrossEncoder(str(model_path), local_files_only=True, device="cpu")


QUERIES = ["what are pandas", "what is the capital of france", "how tall is everest"]
DOCUMENTS = [
    ["pandas are a kind of bear", "pandas are a kind of fish", "the river is long"],
    ["the capital of france is paris", "paris is quite large", "berlin is a city", "the river is short"],
    ["everest is a high mountain", "the mountain is low"],
]
LABELS = [[2, 0, 0], [2, 1, 0, 0], [1, 0]]


def _loss_value(loss, inputs, labels):
    value = loss(inputs, labels)
    assert value.shape == () and torch.isfinite(value)
    return value


def test_listwise_loss_equals_our_function_on_the_model_scores(model):
    loss = st.NeuralNDCGLoss(model, k=3, temperature=0.5)
    value = _loss_value(loss, [QUERIES, DOCUMENTS], [torch.tensor(row, dtype=torch.float) for row in LABELS])
    # the same scores, padded by hand
    with torch.no_grad():
        scores = torch.zeros(3, 4)
        mask = torch.zeros(3, 4, dtype=torch.bool)
        relevance = torch.zeros(3, 4)
        for i, (query, documents) in enumerate(zip(QUERIES, DOCUMENTS)):
            tokens = model.preprocess([(query, document) for document in documents])
            scores[i, : len(documents)] = model(tokens)["scores"].view(-1)
            mask[i, : len(documents)] = True
            relevance[i, : len(documents)] = torch.tensor(LABELS[i], dtype=torch.float)
    expected = tn.neural_ndcg_loss(scores, relevance, 3, mask=mask, temperature=0.5)
    assert value.item() == pytest.approx(expected.item(), abs=1e-6)
    value.backward()
    assert any(p.grad is not None and p.grad.abs().sum() > 0 for p in model.parameters())


def test_columns_layout_and_mini_batches_give_the_same_loss(model):
    labels = [torch.tensor(row[:2], dtype=torch.float) for row in LABELS]
    columns = [QUERIES, [docs[0] for docs in DOCUMENTS], [docs[1] for docs in DOCUMENTS]]
    lists = [QUERIES, [docs[:2] for docs in DOCUMENTS]]
    whole = st.LambdaLoss(model, k=2)(lists, labels)
    assert st.LambdaLoss(model, k=2)(columns, labels).item() == pytest.approx(whole.item(), abs=1e-6)
    assert st.LambdaLoss(model, k=2, mini_batch_size=1)(lists, labels).item() == pytest.approx(whole.item(), abs=1e-6)


def test_margin_labels_equal_teacher_scores(model):
    teacher = torch.tensor([[3.0, 1.0, -0.5], [2.0, 2.5, 0.0], [0.3, 0.1, -1.0]])
    inputs = [QUERIES, [docs[0] for docs in DOCUMENTS], [docs[1] for docs in DOCUMENTS], [docs[-1] for docs in DOCUMENTS]]
    loss = st.MarginMSELoss(model)
    from_scores = loss(inputs, list(teacher))
    from_margins = loss(inputs, list(teacher[:, :1] - teacher[:, 1:]))
    assert from_margins.item() == pytest.approx(from_scores.item(), rel=1e-6)
    # a scalar margin per (query, first, second) row, as sentence-transformers' MarginMSELoss takes
    two = inputs[:3]
    assert loss(two, teacher[:, 0] - teacher[:, 1]).item() == pytest.approx(loss(two, list(teacher[:, :2])).item(), rel=1e-6)


def test_bad_inputs_are_named(model):
    loss = st.ListNetLoss(model)
    with pytest.raises(ValueError, match="one label per document"):
        loss([QUERIES, [docs[0] for docs in DOCUMENTS], [docs[1] for docs in DOCUMENTS]], torch.tensor([1.0, 0.0, 1.0]))
    with pytest.raises(ValueError, match="ranks lists"):
        loss([QUERIES, [docs[0] for docs in DOCUMENTS]], torch.tensor([1.0, 0.0, 1.0]))
    with pytest.raises(ValueError, match="number of labels per query"):
        loss([QUERIES, DOCUMENTS], [torch.tensor([1.0, 0.0])] * 3)
    with pytest.raises(TypeError, match="temprature"):
        st.NeuralNDCGLoss(model, temprature=0.5)
    with pytest.raises(TypeError, match="mini_batch_size"):
        st.ListNetLoss(model, mini_batch_size=2.5)


def test_config_and_citation(model):
    loss = st.NeuralNDCGLoss(model, k=5, gain="exp2")
    config = loss.get_config_dict()
    assert config["k"] == 5 and config["gain"] == "exp2" and config["mini_batch_size"] is None
    assert config["activation_fn"] == "torch.nn.modules.linear.Identity"
    for name in [*LIST_LOSSES, *DISTILL_LOSSES]:
        assert getattr(st, name)(model).citation.strip().startswith("@")


LIST_LOSSES = {"NeuralNDCGLoss": {"k": 3}, "ApproxNDCGLoss": {"k": 3}, "LambdaLoss": {"k": 3}, "ListNetLoss": {}}
DISTILL_LOSSES = {name: {} for name in ("DistillListNetLoss", "DistillListMLELoss", "DistillRankNetLoss", "MarginMSELoss", "ADRMSELoss")}


def _train_one_epoch(model, loss, dataset, tmp_path):
    args = CrossEncoderTrainingArguments(
        output_dir=str(tmp_path), num_train_epochs=1, per_device_train_batch_size=2, learning_rate=1e-3,
        report_to="none", save_strategy="no", use_cpu=True, logging_steps=1, disable_tqdm=True, seed=0,
    )  # fmt: skip
    before = [p.detach().clone() for p in model.parameters()]
    result = CrossEncoderTrainer(model=model, args=args, train_dataset=dataset, loss=loss).train()
    assert np.isfinite(result.training_loss)
    assert any(not torch.equal(a, b) for a, b in zip(before, model.parameters()))  # it learned something
    return result


@pytest.mark.slow
@pytest.mark.parametrize("name", [*LIST_LOSSES, *DISTILL_LOSSES])
def test_one_epoch_of_cross_encoder_trainer(name, model, tmp_path):
    from datasets import Dataset

    loss = getattr(st, name)(model, **{**LIST_LOSSES, **DISTILL_LOSSES}[name])
    # a teacher's scores (distinct, real-valued) or graded labels
    labels = [[x + 0.25 * i for i, x in enumerate(row)] for row in LABELS] if name in DISTILL_LOSSES else LABELS
    dataset = Dataset.from_dict({"query": QUERIES * 2, "docs": DOCUMENTS * 2, "labels": labels * 2})
    _train_one_epoch(model, loss, dataset, tmp_path)


@pytest.mark.slow
def test_margin_mse_trains_on_its_triplet_layout(model, tmp_path):
    from datasets import Dataset

    dataset = Dataset.from_dict({
        "query": QUERIES * 2, "positive": [docs[0] for docs in DOCUMENTS] * 2,
        "negative": [docs[1] for docs in DOCUMENTS] * 2, "label": [1.5, 0.5, 2.0] * 2,
    })  # fmt: skip
    _train_one_epoch(model, st.MarginMSELoss(model), dataset, tmp_path)


class StubModel:
    """A model whose ``predict`` returns precomputed scores of (query, document) pairs."""

    def __init__(self, scores):
        self.scores = scores
        self.model_card_data = self
        self.card = []

    def predict(self, pairs, **options):
        return np.array([self.scores[tuple(pair)] for pair in pairs], dtype=np.float32)

    def set_evaluation_metrics(self, evaluator, metrics, epoch, step):
        self.card.append(metrics)


def _samples(layout, queries, rng):
    """Samples with tie-free scores: lists of 1 to 30 documents, some positives missed by the first stage."""
    samples, scores = [], {}
    values = rng.permutation(queries * 40).astype(float) / (queries * 40)  # distinct scores
    drawn = iter(values)
    for q in range(queries):
        documents = [f"d{q}-{i}" for i in range(int(rng.integers(2, 31)))]
        positive = [d for d in documents if rng.random() < 0.2]
        if rng.random() < 0.3:
            positive.append(f"missed{q}")
        if q % 7 == 0:
            positive = []
        for document in documents + positive:
            scores[(f"q{q}", document)] = next(drawn)
        sample = {"query": f"q{q}", "positive": positive}
        if layout == "documents":
            sample["documents"] = documents
        else:
            sample["negative"] = [d for d in documents if d not in positive]
        samples.append(sample)
    return samples, scores


@pytest.mark.parametrize(("layout", "always_rerank_positives"), [("documents", True), ("documents", False), ("negative", True)])
@pytest.mark.parametrize("at_k", [1, 10])
def test_evaluator_equals_sentence_transformers(layout, always_rerank_positives, at_k, tmp_path):
    samples, scores = _samples(layout, 50, np.random.default_rng(at_k))
    options = dict(at_k=at_k, always_rerank_positives=always_rerank_positives, name="dev")
    reference_model, our_model = StubModel(scores), StubModel(scores)
    reference = ReferenceEvaluator(samples, **options)
    ours = st.CrossEncoderRerankingEvaluator(samples, **options)
    expected = reference(reference_model, output_path=str(tmp_path / "reference"), epoch=1, steps=5)
    got = ours(our_model, output_path=str(tmp_path / "ours"), epoch=1, steps=5)
    keys = {"dev_map", f"dev_mrr@{at_k}", f"dev_ndcg@{at_k}"}
    if layout == "documents":
        keys |= {"dev_base_map", f"dev_base_mrr@{at_k}", f"dev_base_ndcg@{at_k}"}
    assert set(got) == set(expected) == keys
    for key in keys:
        assert got[key] == pytest.approx(expected[key], abs=1e-9), key
    assert 0 < got[f"dev_ndcg@{at_k}"] < 1
    assert ours.primary_metric == reference.primary_metric == f"dev_ndcg@{at_k}"
    assert ours.get_config_dict() == reference.get_config_dict()
    assert our_model.card[0].keys() == reference_model.card[0].keys()
    ours_csv = (tmp_path / "ours" / ours.csv_file).read_text().splitlines()
    reference_csv = (tmp_path / "reference" / reference.csv_file).read_text().splitlines()
    assert ours_csv[0] == reference_csv[0]
    np.testing.assert_allclose(
        [float(x) for x in ours_csv[1].split(",")], [float(x) for x in reference_csv[1].split(",")], atol=1e-9
    )


def test_evaluator_ndcg_agrees_on_tied_scores():
    # scikit-learn averages NDCG over tied orders, as ties="average" does
    samples = [{"query": "q", "positive": ["a", "c"], "negative": ["b", "d", "e"]}]
    scores = {("q", d): s for d, s in zip("abcde", [0.5, 0.5, 0.5, 0.9, 0.1])}
    expected = ReferenceEvaluator(samples, at_k=3)(StubModel(scores))
    got = st.CrossEncoderRerankingEvaluator(samples, at_k=3)(StubModel(scores))
    assert got["ndcg@3"] == pytest.approx(expected["ndcg@3"], abs=1e-9)


def test_evaluator_refuses_a_sample_without_its_keys():
    with pytest.raises(ValueError, match="'positive'"):
        st.CrossEncoderRerankingEvaluator([{"query": "q", "negative": ["a"]}])(StubModel({}))
    with pytest.raises(ValueError, match="exactly one of 'negative' and 'documents'"):
        st.CrossEncoderRerankingEvaluator([{"query": "q", "positive": ["a"]}])(StubModel({}))


def test_evaluator_logs_like_sentence_transformers(caplog):
    samples, scores = _samples("documents", 10, np.random.default_rng(0))
    with caplog.at_level(logging.INFO):
        st.CrossEncoderRerankingEvaluator(samples)(StubModel(scores))
    assert "Base  -> Reranked" in caplog.text and "NDCG@10:" in caplog.text


@pytest.mark.slow
def test_the_example_trains_and_evaluates(tmp_path, capsys):
    results = example_main(["--epochs", "2", "--output-dir", str(tmp_path)])
    assert set(results) == {"toy_map", "toy_mrr@3", "toy_ndcg@3"}
    assert "toy_ndcg@3" in capsys.readouterr().out


def test_evaluator_without_a_positive_to_rerank_scores_zero_as_sentence_transformers():
    samples = [
        {"query": "q", "positive": [], "documents": ["a", "b"]},
        {"query": "r", "positive": ["z"], "documents": ["a", "b"]},  # the first stage missed it
    ]
    options = dict(at_k=5, always_rerank_positives=False)
    expected = ReferenceEvaluator(samples, **options)(StubModel({}))
    got = st.CrossEncoderRerankingEvaluator(samples, **options)(StubModel({}))
    assert got == pytest.approx(expected, abs=0) and set(got.values()) == {0.0}


def test_every_loss_has_the_name_of_its_sentence_transformers_peer():
    # The import swap: each of our losses that sentence-transformers also has is spelled as there.
    peers = {name for name in dir(peer) if name.endswith("Loss")}
    ours = {name for name in st.__all__ if name.endswith("Loss")}
    assert {"ADRMSELoss", "LambdaLoss", "ListNetLoss", "MarginMSELoss"} <= ours & peers
    spelled_there = {name.lower(): name for name in peers}
    assert [name for name in ours if spelled_there.get(name.lower(), name) != name] == []


def test_a_batch_whose_queries_have_no_documents_gives_zero_with_a_warning(model):
    for name in [*LIST_LOSSES, *DISTILL_LOSSES]:
        with pytest.warns(UserWarning, match="no query in this batch has a document"):
            value = getattr(st, name)(model)([QUERIES[:2], [[], []]], [torch.zeros(0), torch.zeros(0)])
        assert value.item() == 0.0, name
        value.backward()  # a training step on it still runs


def test_evaluator_refuses_a_model_that_returns_too_few_scores():
    samples = [{"query": "q", "positive": ["a"], "negative": ["b", "c"]}]

    class ShortModel(StubModel):
        def predict(self, pairs, **options):
            return super().predict(pairs, **options)[:-1]

    model = ShortModel({("q", d): s for d, s in zip("abc", [0.3, 0.2, 0.1])})
    with pytest.raises(ValueError, match=r"returned 2 scores for 3 \(query, document\) pairs"):
        st.CrossEncoderRerankingEvaluator(samples)(model)


class ScoreLookup(torch.nn.Module):
    """A stand-in CrossEncoder whose score of the document named ``"d<i>"`` is ``flat[i]``, so
    both libraries' losses run their own ``forward`` on known scores."""

    num_labels = 1
    device = torch.device("cpu")

    def __init__(self, flat):
        super().__init__()
        self.flat = flat

    def preprocess(self, pairs, prompt=None, task=None):
        return {"index": torch.tensor([int(document[1:]) for _, document in pairs])}

    def forward(self, tokens):
        return {"scores": self.flat[tokens["index"]]}


def _graded_batch(lengths, seed=0):
    """Ragged lists of distinct scores and grades 0..3, as ``(model, inputs, labels)``."""
    gen = torch.Generator().manual_seed(seed)
    flat = torch.randperm(sum(lengths), generator=gen).double() / 7
    starts = np.cumsum([0, *lengths[:-1]]).tolist()
    documents = [[f"d{start + i}" for i in range(n)] for start, n in zip(starts, lengths)]
    labels = [torch.randint(0, 4, (n,), generator=gen).float() for n in lengths]
    return ScoreLookup(flat), [[f"q{b}" for b in range(len(lengths))], documents], labels


SCHEMES = [peer.NoWeightingScheme(), peer.LambdaRankScheme(), peer.NDCGLoss2Scheme(), peer.NDCGLoss2PPScheme(mu=3.0)]


@pytest.mark.parametrize("scheme", SCHEMES, ids=lambda scheme: type(scheme).__name__)
def test_lambda_loss_takes_their_weighting_scheme_and_differs_by_the_documented_scale(scheme):
    model, inputs, labels = _graded_batch([8, 5, 8, 3])
    theirs = peer.LambdaLoss(model, weighting_scheme=scheme)(inputs, labels).item()
    # Without a cutoff, with their gain and a sum: theirs (a mean over the batch's pairs) times the pairs.
    summed = st.LambdaLoss(model, weighting_scheme=scheme, gain="exp2", reduction="sum")(inputs, labels).item()
    pairs = sum(int((row[:, None] > row[None, :]).sum()) for row in labels)
    assert summed == pytest.approx(theirs * pairs, rel=1e-5)
    # Their positional order and the natural log give theirs in nats, scaled the same way.
    nats = st.LambdaLoss(model, scheme, None, gain="exp2", reduction="sum", reduction_log="natural")(inputs, labels)
    natural = peer.LambdaLoss(model, scheme, reduction_log="natural")(inputs, labels).item()
    assert nats.item() == pytest.approx(natural * pairs, rel=1e-5)
    # By default (linear gain, mean over lists) the scale differs by a factor of the batch.
    default = st.LambdaLoss(model, weighting_scheme=scheme)(inputs, labels).item()
    assert not default == pytest.approx(theirs, rel=0.5)


def test_lambda_loss_maps_each_scheme_form_to_the_same_weighting(model):
    for scheme in (peer.NDCGLoss2PPScheme(), peer.NDCGLoss2PPScheme, "NDCGLoss2PPScheme"):
        config = st.LambdaLoss(model, weighting_scheme=scheme).get_config_dict()
        assert (config["weighting"], config["mu"]) == ("ndcg_loss2pp", peer.NDCGLoss2PPScheme().mu)
    assert st.LambdaLoss(model, weighting_scheme=None).get_config_dict()["weighting"] == "none"
    assert st.LambdaLoss(model, peer.LambdaRankScheme(), 3).get_config_dict()["k"] == 3


def test_lambda_loss_refuses_their_options_it_cannot_honour(model):
    with pytest.raises(ValueError, match="weighting_scheme must be one of .*NDCGLoss1Scheme and custom"):
        st.LambdaLoss(model, weighting_scheme=peer.NDCGLoss1Scheme())
    with pytest.raises(ValueError, match="weighting_scheme must be one of"):
        st.LambdaLoss(model, weighting_scheme="lambdarank")
    with pytest.raises(TypeError, match="weighting= or sentence-transformers' weighting_scheme=, not both"):
        st.LambdaLoss(model, weighting="none", weighting_scheme=None)
    with pytest.raises(ValueError, match="reduction_log must be one of"):
        st.LambdaLoss(model, reduction_log="ten")
    with pytest.raises(ValueError, match="eps must be a finite number > 0"):
        st.LambdaLoss(model, eps=0.0)


def _teacher_batch(lengths, seed=1):
    """Ragged lists of distinct scores and distinct real-valued teacher scores."""
    model, inputs, _ = _graded_batch(lengths, seed)
    gen = torch.Generator().manual_seed(seed + 1)
    teacher = [torch.randperm(n, generator=gen).double() * 0.7 - 3.1 for n in lengths]
    return model, inputs, teacher


@pytest.mark.parametrize("alpha", [1.0, 4.0])
def test_adr_mse_takes_their_alpha_and_equals_theirs_on_equal_lengths(alpha):
    model, inputs, teacher = _teacher_batch([6, 6, 6])
    theirs = peer.ADRMSELoss(model, alpha=alpha)(inputs, teacher).item()
    assert st.ADRMSELoss(model, alpha=alpha)(inputs, teacher).item() == pytest.approx(theirs, rel=1e-5)
    assert st.ADRMSELoss(model, alpha)(inputs, teacher).item() == pytest.approx(theirs, rel=1e-5)
    assert st.ADRMSELoss(model, temperature=1 / alpha)(inputs, teacher).item() == pytest.approx(theirs, rel=1e-5)


def test_adr_mse_refuses_alpha_with_temperature_or_out_of_range(model):
    with pytest.raises(TypeError, match="temperature= or sentence-transformers' alpha="):
        st.ADRMSELoss(model, alpha=2.0, temperature=0.5)
    with pytest.raises(ValueError, match="alpha must be a finite number > 0"):
        st.ADRMSELoss(model, alpha=0.0)
