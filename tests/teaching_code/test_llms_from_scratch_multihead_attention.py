"""Port of Sebastian Raschka's "Build a Large Language Model From Scratch", chapter 3: Multi-head Attention Plus
Data Loading.

Source: github.com/rasbt/LLMs-from-scratch, ch03/01_main-chapter-code/multihead-attention.ipynb (commit
081487a3a251e34f0fc903578d68899b6c09cca5): chapter 2's sliding-window `GPTDatasetV1` and `DataLoader`, token
plus position embeddings, then causal self-attention two ways: a `ModuleList` of heads (a `triu` mask buffer,
`masked_fill_` with `-torch.inf`, softmax, dropout, `cat`) and one module splitting the heads with
`view`/`transpose` (`contiguous().view` to merge them). Code cells as the notebook, in order. Changes:
- tiktoken's GPT-2 encoding and "small-text-sample.txt" -> a character-level tokenizer over synthetic text
  (tiktoken is not installed here and the text is a download);
- sizes shrunk: a vocabulary of the text's characters (was 50257), output_dim 16 (was 256);
- the embeddings' and layers' initial weights -> NumPy draws (PyTorch's distributions), so the context vectors
  are held to values recorded from PyTorch 2.13.
"""

from __future__ import annotations

import numpy as np
import teaching_helpers as h

TEXT = h.synthetic_text(600, seed=3)
# context_vecs[0, :, :3] and context_vecs.sum() of each variant, recorded from PyTorch 2.13
RECORDED_A = ([[0.01004, 0.24432, -0.15444], [-0.06531, 0.11445, 0.0034], [0.20278, 0.22092, 0.0893],
               [-0.29912, -0.3762, 0.10529]], 2.0347)
RECORDED_B = ([[0.25407, -1.0394, -1.31795], [0.23414, -0.29516, -0.78655], [0.20434, -0.55634, -0.31124],
               [0.13192, -0.30393, -0.30247]], -27.6615)


class CharTokenizer:
    """The stand-in for tiktoken's encoding: one id per character of the text."""

    def __init__(self, text):
        self.vocab = {c: i for i, c in enumerate(sorted(set(text)))}

    def encode(self, text):
        return [self.vocab[c] for c in text]


def program(torch):
    Dataset, DataLoader = torch.utils.data.Dataset, torch.utils.data.DataLoader

    class GPTDatasetV1(Dataset):
        def __init__(self, txt, tokenizer, max_length, stride):
            self.tokenizer = tokenizer
            self.input_ids = []
            self.target_ids = []

            # Tokenize the entire text
            token_ids = tokenizer.encode(txt)

            # Use a sliding window to chunk the book into overlapping sequences of max_length
            for i in range(0, len(token_ids) - max_length, stride):
                input_chunk = token_ids[i:i + max_length]
                target_chunk = token_ids[i + 1: i + max_length + 1]
                self.input_ids.append(torch.tensor(input_chunk))
                self.target_ids.append(torch.tensor(target_chunk))

        def __len__(self):
            return len(self.input_ids)

        def __getitem__(self, idx):
            return self.input_ids[idx], self.target_ids[idx]

    def create_dataloader(txt, batch_size=4, max_length=256, stride=128):
        # Initialize the tokenizer
        tokenizer = CharTokenizer(TEXT)  # was tiktoken.get_encoding("gpt2")

        # Create dataset
        dataset = GPTDatasetV1(txt, tokenizer, max_length, stride)

        # Create dataloader
        dataloader = DataLoader(dataset, batch_size=batch_size)

        return dataloader

    raw_text = TEXT  # was read from "small-text-sample.txt"

    tokenizer = CharTokenizer(TEXT)  # was tiktoken.get_encoding("gpt2")
    encoded_text = tokenizer.encode(raw_text)

    vocab_size = len(tokenizer.vocab)  # was 50257
    output_dim = 16  # was 256
    token_embedding_layer = torch.nn.Embedding(vocab_size, output_dim)
    pos_embedding_layer = torch.nn.Embedding(vocab_size, output_dim)
    h.numpy_init(torch, token_embedding_layer, seed=1)  # added
    h.numpy_init(torch, pos_embedding_layer, seed=2)  # added

    max_length = 4
    dataloader = create_dataloader(raw_text, batch_size=8, max_length=max_length, stride=5)

    for batch in dataloader:
        x, y = batch

        token_embeddings = token_embedding_layer(x)
        pos_embeddings = pos_embedding_layer(torch.arange(max_length))

        input_embeddings = token_embeddings + pos_embeddings

        break

    print(input_embeddings.shape)

    # Variant A: Simple implementation
    class CausalSelfAttention(torch.nn.Module):

        def __init__(self, d_in, d_out, block_size, dropout):
            super().__init__()
            self.d_out = d_out
            self.W_query = torch.nn.Linear(d_in, d_out, bias=False)
            self.W_key   = torch.nn.Linear(d_in, d_out, bias=False)  # noqa: E221 - as the notebook
            self.W_value = torch.nn.Linear(d_in, d_out, bias=False)
            self.dropout = torch.nn.Dropout(dropout)  # New
            self.register_buffer('mask', torch.triu(torch.ones(block_size, block_size), diagonal=1))  # New

        def forward(self, x):
            b, n_tokens, d_in = x.shape  # New batch dimension b
            keys = self.W_key(x)
            queries = self.W_query(x)
            values = self.W_value(x)

            attn_scores = queries @ keys.transpose(1, 2)  # Changed transpose
            attn_scores.masked_fill_(  # New, _ ops are in-place
                self.mask.bool()[:n_tokens, :n_tokens], -torch.inf)
            attn_weights = torch.softmax(attn_scores / self.d_out**0.5, dim=1)
            attn_weights = self.dropout(attn_weights)  # New

            context_vec = attn_weights @ values
            return context_vec

    class MultiHeadAttentionWrapper(torch.nn.Module):
        def __init__(self, d_in, d_out, block_size, dropout, num_heads):
            super().__init__()
            self.heads = torch.nn.ModuleList(
                [CausalSelfAttention(d_in, d_out, block_size, dropout)
                 for _ in range(num_heads)]
            )
            self.out_proj = torch.nn.Linear(d_out*num_heads, d_out*num_heads)

        def forward(self, x):
            context_vec = torch.cat([head(x) for head in self.heads], dim=-1)
            return self.out_proj(context_vec)

    torch.manual_seed(123)

    block_size = max_length
    d_in = output_dim

    num_heads = 2
    d_out = d_in // num_heads

    mha = MultiHeadAttentionWrapper(d_in, d_out, block_size, 0.0, num_heads)
    h.numpy_init(torch, mha, seed=3)  # added

    batch = input_embeddings
    context_vecs = mha(batch)

    print("context_vecs.shape:", context_vecs.shape)
    variant_a = context_vecs

    # Variant B: Alternative implementation
    class MultiHeadAttention(torch.nn.Module):
        def __init__(self, d_in, d_out, block_size, dropout, num_heads):
            super().__init__()
            assert d_out % num_heads == 0, "d_out must be divisible by n_heads"

            self.d_out = d_out
            self.num_heads = num_heads
            self.head_dim = d_out // num_heads  # Reduce the projection dim to match desired output dim

            self.W_query = torch.nn.Linear(d_in, d_out, bias=False)
            self.W_key = torch.nn.Linear(d_in, d_out, bias=False)
            self.W_value = torch.nn.Linear(d_in, d_out, bias=False)
            self.out_proj = torch.nn.Linear(d_out, d_out)  # Linear layer to combine head outputs
            self.dropout = torch.nn.Dropout(dropout)
            self.register_buffer('mask', torch.triu(torch.ones(block_size, block_size), diagonal=1))

        def forward(self, x):
            b, n_tokens, d_in = x.shape

            # Split into multiple heads
            keys = self.W_key(x).view(b, n_tokens, self.num_heads, self.head_dim).transpose(1, 2)
            queries = self.W_query(x).view(b, n_tokens, self.num_heads, self.head_dim).transpose(1, 2)
            values = self.W_value(x).view(b, n_tokens, self.num_heads, self.head_dim).transpose(1, 2)

            # Compute scaled dot-product attention for each head
            attn_scores = queries @ keys.transpose(2, 3)  # Dot product for each head
            attn_scores.masked_fill_(self.mask.bool()[:n_tokens, :n_tokens].unsqueeze(0).unsqueeze(0), -torch.inf)
            attn_weights = torch.softmax(attn_scores / self.head_dim**0.5, dim=-1)
            attn_weights = self.dropout(attn_weights)
            context_vec = (attn_weights @ values).transpose(1, 2)  # Shape: (b, T, n_heads, head_dim)

            # Combine heads, where self.d_out = self.num_heads * self.head_dim
            context_vec = context_vec.contiguous().view(b, n_tokens, self.d_out)
            context_vec = self.out_proj(context_vec)  # optional projection

            return context_vec

    torch.manual_seed(123)

    block_size = max_length
    d_in = output_dim
    d_out = d_in

    mha = MultiHeadAttention(d_in, d_out, block_size, 0.0, num_heads=2)
    h.numpy_init(torch, mha, seed=4)  # added

    batch = input_embeddings
    context_vecs = mha(batch)

    print("context_vecs.shape:", context_vecs.shape)
    return encoded_text, variant_a, context_vecs


def test_multihead_attention(lib):
    out, (encoded, variant_a, variant_b) = h.printed(program, lib)
    assert h.as_torch_text(out) == ("torch.Size([8, 4, 16])\ncontext_vecs.shape: torch.Size([8, 4, 16])\n"
                                    "context_vecs.shape: torch.Size([8, 4, 16])\n")
    assert len(encoded) == len(TEXT)
    for got, (rows, total) in ((variant_a, RECORDED_A), (variant_b, RECORDED_B)):
        np.testing.assert_allclose(got[0, :, :3].detach().numpy(), rows, atol=1e-4)
        np.testing.assert_allclose(got.sum().item(), total, atol=1e-3)
    assert type(variant_b.grad_fn).__name__ == "ViewBackward0"
