"""Test models of the PyTorch frontend (random init, built here; nothing is downloaded)."""

from __future__ import annotations

from typing import Any

import torch
from torch import nn


class MLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.l1 = nn.Linear(16, 32)
        self.l2 = nn.Linear(32, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.l2(torch.relu(self.l1(x)))


class CNN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.c = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.c2 = nn.Conv2d(8, 8, 3, stride=2, groups=2, bias=False)
        self.pool = nn.MaxPool2d(2)
        self.avg = nn.AvgPool2d(2, padding=1, count_include_pad=False)
        self.gap = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(8, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.pool(torch.relu(self.bn(self.c(x))))
        y = self.avg(torch.sigmoid(self.c2(y)))
        return self.fc(torch.flatten(self.gap(y), 1))


class Block(nn.Module):
    def __init__(self, d: int, heads: int, t: int) -> None:
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc = nn.Linear(d, 4 * d)
        self.fc2 = nn.Linear(4 * d, d)
        self.register_buffer("mask", torch.tril(torch.ones(t, t, dtype=torch.bool)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        hd = d // self.heads
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q = q.view(b, t, self.heads, hd).transpose(1, 2)
        k = k.view(b, t, self.heads, hd).transpose(1, 2)
        v = v.view(b, t, self.heads, hd).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (hd**-0.5)
        att = att.masked_fill(~self.mask[:t, :t], float("-inf")).softmax(-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, d)
        x = x + self.proj(y)
        return x + self.fc2(nn.functional.gelu(self.fc(self.ln2(x))))


class GPT(nn.Module):
    """A small GPT-style decoder: token and position embeddings, causal blocks, a head."""

    def __init__(self, vocab: int = 50, d: int = 32, heads: int = 4, layers: int = 2,
                 t: int = 16) -> None:
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(t, d)
        self.blocks = nn.ModuleList([Block(d, heads, t) for _ in range(layers)])
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        t = idx.shape[1]
        x = self.tok(idx) + self.pos(torch.arange(t))
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.ln(x))


def randomize_norms(m: nn.Module) -> nn.Module:
    """Give BatchNorm layers random statistics and affine parameters (eval mode uses them)."""
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for mod in m.modules():
            if isinstance(mod, nn.BatchNorm2d):
                c = mod.num_features
                mod.running_mean.copy_(torch.randn(c, generator=g) * 0.1)
                mod.running_var.copy_(torch.rand(c, generator=g) + 0.5)
                mod.weight.copy_(torch.rand(c, generator=g) + 0.5)
                mod.bias.copy_(torch.randn(c, generator=g) * 0.1)
            if isinstance(mod, nn.Linear) and mod.weight.abs().max() < 0.05:
                # torchvision's classifiers start at std 0.01: make the logits measurable.
                mod.weight.copy_(torch.randn(mod.weight.shape, generator=g) * 0.2)
    return m


def build(name: str) -> tuple[nn.Module, Any, str]:
    """``(model in eval mode, a function of the batch size giving inputs, input kind)``."""
    import torchvision

    torch.manual_seed(0)
    if name == "mlp":
        return MLP().eval(), (16,), "float"
    if name == "cnn":
        return randomize_norms(CNN()).eval(), (3, 16, 16), "float"
    if name == "resnet18":
        return randomize_norms(torchvision.models.resnet18()).eval(), (3, 64, 64), "float"
    if name == "mobilenet_v3_small":
        m = torchvision.models.mobilenet_v3_small()
        return randomize_norms(m).eval(), (3, 64, 64), "float"
    if name == "transformer_encoder_layer":
        layer = nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, batch_first=True)
        return layer.eval(), (10, 32), "float"
    if name == "gpt":
        return GPT().eval(), (16,), "tokens"
    raise KeyError(name)


MODELS = ["mlp", "cnn", "resnet18", "mobilenet_v3_small", "transformer_encoder_layer", "gpt"]


def example(rest: tuple[int, ...], kind: str, batch: int, seed: int) -> torch.Tensor:
    """A random input of batch size ``batch``."""
    g = torch.Generator().manual_seed(seed)
    if kind == "tokens":
        return torch.randint(0, 50, (batch, *rest), generator=g)
    return torch.randn((batch, *rest), generator=g)


class LSTMNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lstm = nn.LSTM(8, 16, num_layers=2, batch_first=True)
        self.fc = nn.Linear(16, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y, _ = self.lstm(x)
        return self.fc(y[:, -1])


class Bert(nn.Module):
    """A Hugging Face-style BERT layer: three embeddings, an extended attention mask, a
    post-norm attention block and a pooler."""

    def __init__(self, vocab: int = 100, d: int = 32, heads: int = 4) -> None:
        super().__init__()
        self.heads = heads
        self.word = nn.Embedding(vocab, d)
        self.position = nn.Embedding(64, d)
        self.token_type = nn.Embedding(2, d)
        self.ln = nn.LayerNorm(d, eps=1e-12)
        self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))
        self.ln1 = nn.LayerNorm(d, eps=1e-12)
        self.inter = nn.Linear(d, 4 * d)
        self.out = nn.Linear(4 * d, d)
        self.ln2 = nn.LayerNorm(d, eps=1e-12)
        self.pool = nn.Linear(d, d)

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        b, t = ids.shape
        d = self.word.embedding_dim
        hd = d // self.heads
        pos = torch.arange(t).unsqueeze(0).expand(b, t)
        x = self.ln(self.word(ids) + self.position(pos) + self.token_type(torch.zeros_like(ids)))
        ext = (1.0 - mask[:, None, None, :].to(torch.float32)) * torch.finfo(torch.float32).min

        def heads(v: torch.Tensor) -> torch.Tensor:
            return v.view(b, t, self.heads, hd).permute(0, 2, 1, 3)

        att = torch.matmul(heads(self.q(x)), heads(self.k(x)).transpose(-1, -2)) / hd**0.5
        att = nn.functional.softmax(att + ext, dim=-1)
        ctx = torch.matmul(att, heads(self.v(x))).permute(0, 2, 1, 3).contiguous().view(b, t, d)
        x = self.ln1(x + self.o(ctx))
        x = self.ln2(x + self.out(nn.functional.gelu(self.inter(x))))
        return torch.tanh(self.pool(x[:, 0]))


MORE = ["lstm", "vit", "bert"]


def build_more(name: str) -> tuple[nn.Module, Any, Any]:
    """``(model, inputs(batch) -> tuple, dynamic_shapes)`` of the further architectures."""
    import torchvision
    from torch.export import Dim

    torch.manual_seed(0)
    b = Dim("batch", min=1, max=64)
    if name == "lstm":
        return (LSTMNet().eval(), lambda n: (torch.randn(n, 5, 8),), ({0: b},))
    if name == "vit":
        vit = torchvision.models.VisionTransformer(image_size=32, patch_size=8, num_layers=2,
                                                   num_heads=2, hidden_dim=32, mlp_dim=64)
        return (randomize_norms(vit).eval(), lambda n: (torch.randn(n, 3, 32, 32),), ({0: b},))
    if name == "bert":
        t = Dim("seq", min=2, max=64)

        def inputs(n: int) -> tuple[torch.Tensor, torch.Tensor]:
            g = torch.Generator().manual_seed(n)
            ids = torch.randint(0, 100, (n, n + 3), generator=g)
            return ids, (torch.rand(n, n + 3, generator=g) > 0.3).long()

        return Bert().eval(), inputs, ({0: b, 1: t}, {0: b, 1: t})
    raise KeyError(name)


def small_bert() -> tuple[nn.Module, torch.Tensor]:
    """Hugging Face BERT built from its config class (random init, seed 0: 2 layers, hidden 32,
    2 heads) in eval mode, and token ids ``[2, 8]``."""
    import transformers

    torch.manual_seed(0)
    cfg = transformers.BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2,
                                  num_attention_heads=2, intermediate_size=64)
    return transformers.BertModel(cfg).eval(), torch.randint(0, 100, (2, 8))
