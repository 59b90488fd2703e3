"""Train a sentence-transformers CrossEncoder reranker with NeuralNDCG and evaluate it with torch_ndcg.

    pip install 'sentence-transformers[train]'
    python examples/cross_encoder_reranker.py                 # a tiny random model, built here
    python examples/cross_encoder_reranker.py --model cross-encoder/ms-marco-MiniLM-L6-v2 --epochs 1

The loss is :class:`torch_ndcg.integrations.sentence_transformers.NeuralNDCGLoss`, passed to
``CrossEncoderTrainer`` as any of its own losses; the evaluator is the library's drop-in
``CrossEncoderRerankingEvaluator``, run before and after training. The toy data set pairs each
question with its answer among a few distractors. ``--model tiny`` (the default) builds a
2-layer BERT with a word-level tokenizer from the data's own words, so nothing is downloaded;
any other value is a CrossEncoder name or folder.
"""

from __future__ import annotations

import argparse
import random
import tempfile
from pathlib import Path

import torch

QUESTIONS = {
    "what are pandas": "pandas are a kind of bear",
    "what is the capital of france": "paris is the capital of france",
    "how tall is everest": "everest is a very high mountain",
    "how long is the nile": "the nile is a very long river",
    "what do bees make": "bees make honey in a hive",
    "where do penguins live": "penguins live in the cold south",
}
WORDS = sorted({word for pair in QUESTIONS.items() for text in pair for word in text.split()} | {"[UNK]"})


def tiny_bert(path: Path, *, words: list[str] = WORDS, seed: int = 0) -> Path:
    """Save a randomly initialised 2-layer, 16-wide ``BertForSequenceClassification`` (one output)
    and a word-level tokenizer of ``words`` under ``path``; nothing is downloaded."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors
    from transformers import BertConfig, BertForSequenceClassification, PreTrainedTokenizerFast

    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    vocab = {word: i for i, word in enumerate(specials + [w for w in words if w not in specials])}
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])],
    )
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]", sep_token="[SEP]",
        mask_token="[MASK]", model_max_length=64,
    )
    torch.manual_seed(seed)
    config = BertConfig(
        vocab_size=len(vocab), hidden_size=16, num_hidden_layers=2, num_attention_heads=2, intermediate_size=32,
        max_position_embeddings=64, num_labels=1,
    )
    BertForSequenceClassification(config).save_pretrained(path)
    fast.save_pretrained(path)
    return path


def toy_lists() -> tuple[list[str], list[list[str]], list[list[int]]]:
    """Each question with every answer, in a shuffled order; label 1 for its own answer."""
    documents = [random.Random(i).sample(list(QUESTIONS.values()), len(QUESTIONS)) for i in range(len(QUESTIONS))]
    labels = [[int(doc == QUESTIONS[question]) for doc in docs] for question, docs in zip(QUESTIONS, documents)]
    return list(QUESTIONS), documents, labels


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="tiny", help="'tiny' (built here, random) or a CrossEncoder name or folder")
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--output-dir", default="runs/cross_encoder")
    args = parser.parse_args(argv)

    from datasets import Dataset
    from sentence_transformers.cross_encoder import CrossEncoder, CrossEncoderTrainer, CrossEncoderTrainingArguments

    from torch_ndcg.integrations.sentence_transformers import CrossEncoderRerankingEvaluator, NeuralNDCGLoss

    with tempfile.TemporaryDirectory() as folder:
        name = str(tiny_bert(Path(folder))) if args.model == "tiny" else args.model
        model = CrossEncoder(name, local_files_only=args.model == "tiny")
    questions, documents, labels = toy_lists()
    samples = [
        {"query": q, "positive": [QUESTIONS[q]], "negative": [d for d in docs if d != QUESTIONS[q]]}
        for q, docs in zip(questions, documents)
    ]
    evaluator = CrossEncoderRerankingEvaluator(samples, at_k=3, name="toy")
    before = evaluator(model)
    training = CrossEncoderTrainingArguments(
        output_dir=args.output_dir, num_train_epochs=args.epochs, per_device_train_batch_size=3, learning_rate=5e-3,
        report_to="none", save_strategy="no", logging_strategy="no", disable_tqdm=True, seed=0,
    )
    dataset = Dataset.from_dict({"query": questions, "docs": documents, "labels": labels})
    loss = NeuralNDCGLoss(model, k=3)  # 1 - NeuralNDCG@3 of each question's list
    CrossEncoderTrainer(model=model, args=training, train_dataset=dataset, loss=loss).train()
    after = evaluator(model)
    for key in before:
        print(f"{key:<14} {before[key]:.4f} -> {after[key]:.4f}")
    return after


if __name__ == "__main__":
    main()
