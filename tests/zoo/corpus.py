"""The real-architecture corpus: models from the libraries people use, built at test time.

Every model comes from its library's own code (``transformers`` config classes, ``timm``,
``torchvision``) with random weights and shrunk sizes; nothing is downloaded. Each entry
builds ``(module, args, dynamic_shapes)``: the module in eval mode, example inputs and the
``torch.export`` dynamic-shape spec that makes the batch dim symbolic.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

SEQ = 8
VOCAB = 100


@dataclass(frozen=True)
class Entry:
    """One corpus model: its name, family and builder."""

    name: str
    family: str
    build: Callable[[], tuple[torch.nn.Module, tuple[Any, ...]]]
    batch_dims: tuple[int | None, ...] = (0,)
    """Per positional input, the axis that is the batch (None: no batch axis)."""


def _seed() -> torch.Generator:
    torch.manual_seed(0)
    return torch.Generator().manual_seed(0)


def _ids(batch: int = 2, seq: int = SEQ) -> torch.Tensor:
    g = _seed()
    return torch.randint(0, VOCAB, (batch, seq), generator=g)


def _hf(cls_name: str, model_name: str, attn: str | None = "sdpa", **cfg: Any):
    def build() -> tuple[torch.nn.Module, tuple[Any, ...]]:
        import transformers

        _seed()
        config = getattr(transformers, cls_name)(**cfg)
        if attn is not None:
            config._attn_implementation = attn
        model = getattr(transformers, model_name)(config).eval()
        return model, (_ids(),)

    return build


_TEXT = dict(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
             intermediate_size=64, max_position_embeddings=64)
_DEC = dict(_TEXT, num_key_value_heads=1, use_cache=False)


def _hf_seq2seq(cls_name: str, model_name: str, **cfg: Any):
    def build() -> tuple[torch.nn.Module, tuple[Any, ...]]:
        import transformers

        _seed()
        config = getattr(transformers, cls_name)(**cfg)
        model = getattr(transformers, model_name)(config).eval()

        class Wrap(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.m = model

            def forward(self, ids: torch.Tensor, dec: torch.Tensor) -> torch.Tensor:
                return self.m(input_ids=ids, decoder_input_ids=dec,
                              use_cache=False).last_hidden_state

        return Wrap().eval(), (_ids(), _ids(seq=4))

    return build


def _audio(cls_name: str, model_name: str, length: int, **cfg: Any):
    def build() -> tuple[torch.nn.Module, tuple[Any, ...]]:
        import transformers

        _seed()
        config = getattr(transformers, cls_name)(**cfg)
        model = getattr(transformers, model_name)(config).eval()
        return model, (torch.randn(2, length),)

    return build


def _whisper_encoder() -> tuple[torch.nn.Module, tuple[Any, ...]]:
    import transformers

    _seed()
    cfg = transformers.WhisperConfig(
        vocab_size=VOCAB, num_mel_bins=8, encoder_layers=2, encoder_attention_heads=2,
        decoder_layers=1, decoder_attention_heads=2, d_model=32, encoder_ffn_dim=64,
        decoder_ffn_dim=64, max_source_positions=16, max_target_positions=16, pad_token_id=0,
        bos_token_id=1, eos_token_id=2, decoder_start_token_id=1)
    enc = transformers.WhisperModel(cfg).get_encoder().eval()
    return enc, (torch.randn(2, 8, 32),)


def _vision(cls_name: str, model_name: str, size: int = 32, **cfg: Any):
    def build() -> tuple[torch.nn.Module, tuple[Any, ...]]:
        import transformers

        _seed()
        config = getattr(transformers, cls_name)(**cfg)
        model = getattr(transformers, model_name)(config).eval()
        return model, (torch.randn(2, 3, size, size),)

    return build


def _timm(name: str, size: int = 32, **kw: Any):
    def build() -> tuple[torch.nn.Module, tuple[Any, ...]]:
        import timm

        _seed()
        model = timm.create_model(name, pretrained=False, **kw).eval()
        return model, (torch.randn(2, 3, size, size),)

    return build


def _mixer(embed_dim: int = 32, num_blocks: int = 2) -> tuple[torch.nn.Module, tuple[Any, ...]]:
    from timm.models.mlp_mixer import MlpMixer

    _seed()
    model = MlpMixer(img_size=32, patch_size=8, num_blocks=num_blocks, embed_dim=embed_dim,
                     num_classes=10).eval()
    return model, (torch.randn(2, 3, 32, 32),)


def _tv(name: str, size: int = 32, **kw: Any):
    def build() -> tuple[torch.nn.Module, tuple[Any, ...]]:
        import torchvision

        _seed()
        model = getattr(torchvision.models, name)(weights=None, **kw).eval()
        return model, (torch.randn(2, 3, size, size),)

    return build


_VIT = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
            image_size=32, patch_size=8)

ENTRIES: list[Entry] = [
    # Encoders.
    Entry("bert", "encoder", _hf("BertConfig", "BertModel", **_TEXT)),
    Entry("roberta", "encoder", _hf("RobertaConfig", "RobertaModel", **_TEXT, pad_token_id=1)),
    Entry("distilbert", "encoder", _hf("DistilBertConfig", "DistilBertModel", vocab_size=VOCAB,
                                       dim=32, n_layers=2, n_heads=2, hidden_dim=64,
                                       max_position_embeddings=64)),
    Entry("albert", "encoder", _hf("AlbertConfig", "AlbertModel", **_TEXT, embedding_size=16)),
    Entry("electra", "encoder", _hf("ElectraConfig", "ElectraModel", **_TEXT,
                                    embedding_size=16)),
    Entry("deberta-v2", "encoder", _hf("DebertaV2Config", "DebertaV2Model", attn=None,
                                       **_TEXT)),
    Entry("mobilebert", "encoder", _hf("MobileBertConfig", "MobileBertModel", attn=None,
                                       vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2,
                                       num_attention_heads=2, intermediate_size=32,
                                       embedding_size=16, intra_bottleneck_size=16,
                                       true_hidden_size=16, num_feedforward_networks=1,
                                       max_position_embeddings=64)),
    # Decoders (causal attention; RoPE in all but GPT-2).
    Entry("gpt2", "decoder", _hf("GPT2Config", "GPT2Model", vocab_size=VOCAB, n_embd=32,
                                 n_layer=2, n_head=2, n_positions=64, use_cache=False,
                                 bos_token_id=0, eos_token_id=0)),
    Entry("gpt-neox", "decoder", _hf("GPTNeoXConfig", "GPTNeoXModel", **_TEXT,
                                     use_cache=False)),
    Entry("llama", "decoder", _hf("LlamaConfig", "LlamaModel", **_DEC)),
    Entry("llama-eager", "decoder", _hf("LlamaConfig", "LlamaModel", attn="eager", **_DEC)),
    Entry("mistral", "decoder", _hf("MistralConfig", "MistralModel", **_DEC)),
    Entry("qwen2", "decoder", _hf("Qwen2Config", "Qwen2Model", **_DEC)),
    Entry("qwen3", "decoder", _hf("Qwen3Config", "Qwen3Model", **_DEC, head_dim=16)),
    Entry("phi3", "decoder", _hf("Phi3Config", "Phi3Model", **_DEC, pad_token_id=0,
                                 bos_token_id=1, eos_token_id=2)),
    Entry("gemma", "decoder", _hf("GemmaConfig", "GemmaModel", **_DEC, head_dim=16)),
    Entry("opt", "decoder", _hf("OPTConfig", "OPTModel", vocab_size=VOCAB, hidden_size=32,
                                num_hidden_layers=2, num_attention_heads=2, ffn_dim=64,
                                max_position_embeddings=64, word_embed_proj_dim=32,
                                use_cache=False)),
    # Encoder-decoders.
    Entry("t5", "encoder-decoder", _hf_seq2seq("T5Config", "T5Model", vocab_size=VOCAB,
                                               d_model=32, d_kv=16, d_ff=64, num_layers=2,
                                               num_heads=2, decoder_start_token_id=0),
          batch_dims=(0, 0)),
    Entry("bart", "encoder-decoder", _hf_seq2seq("BartConfig", "BartModel", vocab_size=VOCAB,
                                                 d_model=32, encoder_layers=2,
                                                 decoder_layers=2, encoder_attention_heads=2,
                                                 decoder_attention_heads=2,
                                                 encoder_ffn_dim=64, decoder_ffn_dim=64,
                                                 max_position_embeddings=64),
          batch_dims=(0, 0)),
    # Audio front ends.
    Entry("wav2vec2", "audio", _audio("Wav2Vec2Config", "Wav2Vec2Model", 400,
                                      hidden_size=32, num_hidden_layers=2,
                                      num_attention_heads=2, intermediate_size=64,
                                      conv_dim=(16, 16), conv_stride=(5, 2),
                                      conv_kernel=(10, 3), num_conv_pos_embeddings=16,
                                      num_conv_pos_embedding_groups=2, do_stable_layer_norm=False)),
    Entry("whisper-encoder", "audio", _whisper_encoder),
    # Vision transformers and CNNs from transformers.
    Entry("vit", "vision-transformer", _vision("ViTConfig", "ViTModel", **_VIT)),
    Entry("deit", "vision-transformer", _vision("DeiTConfig", "DeiTModel", **_VIT)),
    Entry("swin", "vision-transformer", _vision("SwinConfig", "SwinModel", embed_dim=16,
                                                depths=(1, 1), num_heads=(2, 2),
                                                window_size=2, image_size=32, patch_size=4)),
    Entry("convnext-hf", "cnn", _vision("ConvNextConfig", "ConvNextModel",
                                        hidden_sizes=(16, 32), depths=(1, 1),
                                        num_stages=2)),
    Entry("clip-vision", "vision-transformer", _vision("CLIPVisionConfig", "CLIPVisionModel",
                                                       **_VIT)),
    # timm.
    Entry("timm-resnet18", "cnn", _timm("resnet18", num_classes=10)),
    Entry("timm-mobilenetv3", "cnn", _timm("mobilenetv3_small_050", num_classes=10)),
    Entry("timm-efficientnet", "cnn", _timm("efficientnet_b0", num_classes=10)),
    Entry("timm-mixer", "mlp-mixer", _mixer),
    Entry("timm-vit", "vision-transformer", _timm("vit_tiny_patch16_224", img_size=32,
                                                  patch_size=8, depth=2, embed_dim=32,
                                                  num_heads=2, num_classes=10)),
    Entry("timm-convnext", "cnn", _timm("convnext_atto", num_classes=10)),
    # torchvision.
    Entry("tv-resnet18", "cnn", _tv("resnet18", num_classes=10)),
    Entry("tv-mobilenet-v2", "cnn", _tv("mobilenet_v2", num_classes=10)),
    Entry("tv-squeezenet", "cnn", _tv("squeezenet1_1", size=64, num_classes=10)),
    Entry("tv-shufflenet", "cnn", _tv("shufflenet_v2_x0_5", num_classes=10)),
]

BY_NAME = {e.name: e for e in ENTRIES}

# The compile stage again at the widths real models have (one layer each), so the limits of
# the Unified Buffer show: norms and softmax over rows of 768 to 4096 elements.
REAL_WIDTH: list[Entry] = [
    Entry("bert@768", "encoder", _hf("BertConfig", "BertModel", vocab_size=VOCAB,
                                     hidden_size=768, num_hidden_layers=1,
                                     num_attention_heads=12, intermediate_size=3072,
                                     max_position_embeddings=64)),
    Entry("gpt2@1024", "decoder", _hf("GPT2Config", "GPT2Model", vocab_size=VOCAB, n_embd=1024,
                                      n_layer=1, n_head=16, n_positions=64, use_cache=False,
                                      bos_token_id=0, eos_token_id=0)),
    Entry("llama@4096", "decoder", _hf("LlamaConfig", "LlamaModel", vocab_size=VOCAB,
                                       hidden_size=4096, num_hidden_layers=1,
                                       num_attention_heads=32, num_key_value_heads=8,
                                       intermediate_size=512, max_position_embeddings=64,
                                       use_cache=False)),
    Entry("vit@768", "vision-transformer", _vision("ViTConfig", "ViTModel", hidden_size=768,
                                                   num_hidden_layers=1, num_attention_heads=12,
                                                   intermediate_size=3072, image_size=32,
                                                   patch_size=8)),
    Entry("timm-mixer@768", "mlp-mixer", lambda: _mixer(embed_dim=768, num_blocks=1)),
]


def build(name: str) -> tuple[torch.nn.Module, tuple[Any, ...]]:
    """The module (eval mode, random weights) and example inputs of one corpus model."""
    return BY_NAME[name].build()


def dynamic_shapes(entry: Entry, args: tuple[Any, ...]) -> tuple[Any, ...]:
    """``torch.export`` dynamic shapes with one symbolic batch dim shared by every input."""
    batch = torch.export.Dim("batch", min=1, max=64)
    return tuple({ax: batch} if ax is not None else None
                 for ax, _ in zip(entry.batch_dims, args, strict=True))


def with_batch(args: tuple[Any, ...], entry: Entry, batch: int) -> tuple[Any, ...]:
    """The example inputs at another batch size (same generator, same dtypes)."""
    g = torch.Generator().manual_seed(1)
    out = []
    for ax, a in zip(entry.batch_dims, args, strict=True):
        shape = list(a.shape)
        if ax is not None:
            shape[ax] = batch
        if a.dtype.is_floating_point:
            out.append(torch.randn(*shape, generator=g, dtype=a.dtype))
        else:
            out.append(torch.randint(0, VOCAB, shape, generator=g, dtype=a.dtype))
    return tuple(out)
