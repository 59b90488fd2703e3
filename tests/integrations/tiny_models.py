"""A tiny randomly initialised BERT and its word-level tokenizer, built locally (nothing downloaded)."""

from __future__ import annotations

from pathlib import Path

import torch

WORDS = (
    "what are pandas a kind of bear fish is the capital france paris berlin quite large "
    "how tall everest mountain high low river long short city"
).split()


def tiny_bert(path: Path, *, num_labels: int = 1) -> Path:
    """Save a 2-layer, 16-wide ``BertForSequenceClassification`` and a fast tokenizer under ``path``."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors
    from transformers import BertConfig, BertForSequenceClassification, PreTrainedTokenizerFast

    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    vocab = {word: i for i, word in enumerate(specials + WORDS)}
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])],
    )  # fmt: skip
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]", sep_token="[SEP]",
        mask_token="[MASK]", model_max_length=64,
    )  # fmt: skip
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=len(vocab), hidden_size=16, num_hidden_layers=2, num_attention_heads=2, intermediate_size=32,
        max_position_embeddings=64, num_labels=num_labels,
    )  # fmt: skip
    BertForSequenceClassification(config).save_pretrained(path)
    fast.save_pretrained(path)
    return path
