"""Port of Karpathy's makemore.py: CharDataset, the InfiniteDataLoader, Bigram and MLP models, evaluate, sampling.

Source: github.com/karpathy/makemore, makemore.py (commit 988aa59e4d8fefa526d06f3b453ad116258398d4).
The program's classes and functions are the original's (CharDataset, create_datasets, InfiniteDataLoader
over `RandomSampler(replacement=True, num_samples=int(1e10))`, Bigram, MLP with `torch.roll`, generate,
print_samples, evaluate under `@torch.inference_mode()`), and the training loop of its `__main__`.
Changes:
- command-line arguments -> a namespace with the defaults, except `--type` (bigram / mlp),
  `--max-steps` 300, learning rate 5e-4 -> 1e-2 (300 steps instead of ~100,000), `--num-workers` 0,
  `--n-embd`/`--n-embd2` 16; the TensorBoard writer is dropped; evaluation every 100 steps (was 500),
  samples every 100 (was 200), logging every 50 (was 10); timing prints are kept;
- names.txt -> 600 synthetic names written to a temporary input file; `torch.randperm` in the train/test
  split -> a NumPy permutation (the same split in both libraries); the MLP's initial weights -> NumPy
  draws from PyTorch's default distributions;
- the InfiniteDataLoader's RandomSampler and evaluate's `shuffle=True` draw from each library's own
  random stream, so the two libraries see different batches: the test checks what the program's
  printout shows (the loss starts at log(vocab) for the zero-initialised Bigram, falls, the saved
  checkpoint loads back, samples decode) rather than equal numbers.
"""

from __future__ import annotations

import math
import os
import re
import time
import types
import warnings

import numpy as np
import pytest
import teaching_helpers as h


def program(torch, input_file, work_dir, model_type):
    nn = torch.nn
    F = torch.nn.functional
    Dataset = torch.utils.data.Dataset
    DataLoader = torch.utils.data.DataLoader

    args = types.SimpleNamespace(input_file=input_file, work_dir=work_dir, resume=False, sample_only=False,
                                 num_workers=0, max_steps=300, device='cpu', seed=3407, top_k=-1,
                                 type=model_type, n_layer=4, n_head=4, n_embd=16, n_embd2=16, batch_size=32,
                                 learning_rate=1e-2, weight_decay=0.01)

    class ModelConfig:
        def __init__(self, block_size=None, vocab_size=None, n_layer=4, n_embd=64, n_embd2=64, n_head=4):
            self.block_size = block_size
            self.vocab_size = vocab_size
            self.n_layer = n_layer
            self.n_embd = n_embd
            self.n_embd2 = n_embd2
            self.n_head = n_head

    class MLP(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.block_size = config.block_size
            self.vocab_size = config.vocab_size
            self.wte = nn.Embedding(config.vocab_size + 1, config.n_embd)  # token embeddings table
            # +1 in the line above for a special <BLANK> token that gets inserted if encoding a token
            # before the beginning of the input sequence
            self.mlp = nn.Sequential(
                nn.Linear(self.block_size * config.n_embd, config.n_embd2),
                nn.Tanh(),
                nn.Linear(config.n_embd2, self.vocab_size)
            )

        def get_block_size(self):
            return self.block_size

        def forward(self, idx, targets=None):
            # gather the word embeddings of the previous 3 words
            embs = []
            for k in range(self.block_size):
                tok_emb = self.wte(idx)  # token embeddings of shape (b, t, n_embd)
                idx = torch.roll(idx, 1, 1)
                idx[:, 0] = self.vocab_size  # special <BLANK> token
                embs.append(tok_emb)

            # concat all of the embeddings together and pass through an MLP
            x = torch.cat(embs, -1)  # (b, t, n_embd * block_size)
            logits = self.mlp(x)

            # if we are given some desired targets also calculate the loss
            loss = None
            if targets is not None:
                loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)

            return logits, loss

    class Bigram(nn.Module):
        def __init__(self, config):
            super().__init__()
            n = config.vocab_size
            self.logits = nn.Parameter(torch.zeros((n, n)))

        def get_block_size(self):
            return 1  # this model only needs one previous character to predict the next

        def forward(self, idx, targets=None):
            # 'forward pass', lol
            logits = self.logits[idx]

            # if we are given some desired targets also calculate the loss
            loss = None
            if targets is not None:
                loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)

            return logits, loss

    @torch.no_grad()
    def generate(model, idx, max_new_tokens, temperature=1.0, do_sample=False, top_k=None):
        block_size = model.get_block_size()
        for _ in range(max_new_tokens):
            # if the sequence context is growing too long we must crop it at block_size
            idx_cond = idx if idx.size(1) <= block_size else idx[:, -block_size:]
            # forward the model to get the logits for the index in the sequence
            logits, _ = model(idx_cond)
            # pluck the logits at the final step and scale by desired temperature
            logits = logits[:, -1, :] / temperature
            # optionally crop the logits to only the top k options
            if top_k is not None:
                v, _ = torch.topk(logits, top_k)
                logits[logits < v[:, [-1]]] = -float('Inf')
            # apply softmax to convert logits to (normalized) probabilities
            probs = F.softmax(logits, dim=-1)
            # either sample from the distribution or take the most likely element
            if do_sample:
                idx_next = torch.multinomial(probs, num_samples=1)
            else:
                _, idx_next = torch.topk(probs, k=1, dim=-1)
            # append sampled index to the running sequence and continue
            idx = torch.cat((idx, idx_next), dim=1)

        return idx

    def print_samples(num=10):
        """ samples from the model and pretty prints the decoded samples """
        X_init = torch.zeros(num, 1, dtype=torch.long).to(args.device)
        top_k = args.top_k if args.top_k != -1 else None
        steps = train_dataset.get_output_length() - 1  # -1 because we already start with <START> token (index 0)
        X_samp = generate(model, X_init, steps, top_k=top_k, do_sample=True).to('cpu')
        train_samples, test_samples, new_samples = [], [], []
        for i in range(X_samp.size(0)):
            # get the i'th row of sampled integers, as python list
            row = X_samp[i, 1:].tolist()  # note: we need to crop out the first <START> token
            # token 0 is the <STOP> token, so we crop the output sequence at that point
            crop_index = row.index(0) if 0 in row else len(row)
            row = row[:crop_index]
            word_samp = train_dataset.decode(row)
            # separately track samples that we have and have not seen before
            if train_dataset.contains(word_samp):
                train_samples.append(word_samp)
            elif test_dataset.contains(word_samp):
                test_samples.append(word_samp)
            else:
                new_samples.append(word_samp)
        print('-' * 80)
        for lst, desc in [(train_samples, 'in train'), (test_samples, 'in test'), (new_samples, 'new')]:
            print(f"{len(lst)} samples that are {desc}:")
            for word in lst:
                print(word)
        print('-' * 80)

    @torch.inference_mode()
    def evaluate(model, dataset, batch_size=50, max_batches=None):
        model.eval()
        loader = DataLoader(dataset, shuffle=True, batch_size=batch_size, num_workers=0)
        losses = []
        for i, batch in enumerate(loader):
            batch = [t.to(args.device) for t in batch]
            X, Y = batch
            logits, loss = model(X, Y)
            losses.append(loss.item())
            if max_batches is not None and i >= max_batches:
                break
        mean_loss = torch.tensor(losses).mean().item()
        model.train()  # reset model back to training mode
        return mean_loss

    class CharDataset(Dataset):

        def __init__(self, words, chars, max_word_length):
            self.words = words
            self.chars = chars
            self.max_word_length = max_word_length
            self.stoi = {ch: i + 1 for i, ch in enumerate(chars)}
            self.itos = {i: s for s, i in self.stoi.items()}  # inverse mapping

        def __len__(self):
            return len(self.words)

        def contains(self, word):
            return word in self.words

        def get_vocab_size(self):
            return len(self.chars) + 1  # all the possible characters and special 0 token

        def get_output_length(self):
            return self.max_word_length + 1  # <START> token followed by words

        def encode(self, word):
            ix = torch.tensor([self.stoi[w] for w in word], dtype=torch.long)
            return ix

        def decode(self, ix):
            word = ''.join(self.itos[i] for i in ix)
            return word

        def __getitem__(self, idx):
            word = self.words[idx]
            ix = self.encode(word)
            x = torch.zeros(self.max_word_length + 1, dtype=torch.long)
            y = torch.zeros(self.max_word_length + 1, dtype=torch.long)
            x[1:1 + len(ix)] = ix
            y[:len(ix)] = ix
            y[len(ix) + 1:] = -1  # index -1 will mask the loss at the inactive locations
            return x, y

    def create_datasets(input_file):
        # preprocessing of the input text file
        with open(input_file, 'r') as f:
            data = f.read()
        words = data.splitlines()
        words = [w.strip() for w in words]  # get rid of any leading or trailing white space
        words = [w for w in words if w]  # get rid of any empty strings
        chars = sorted(list(set(''.join(words))))  # all the possible characters
        max_word_length = max(len(w) for w in words)
        print(f"number of examples in the dataset: {len(words)}")
        print(f"max word length: {max_word_length}")
        print(f"number of unique characters in the vocabulary: {len(chars)}")
        print("vocabulary:")
        print(''.join(chars))

        # partition the input data into a training and the test set
        test_set_size = min(1000, int(len(words) * 0.1))  # 10% of the training set, or up to 1000 examples
        rp = np.random.default_rng(0).permutation(len(words)).tolist()  # was torch.randperm(len(words)).tolist()
        train_words = [words[i] for i in rp[:-test_set_size]]
        test_words = [words[i] for i in rp[-test_set_size:]]
        print(f"split up the dataset into {len(train_words)} training examples and {len(test_words)} test examples")

        # wrap in dataset objects
        train_dataset = CharDataset(train_words, chars, max_word_length)
        test_dataset = CharDataset(test_words, chars, max_word_length)

        return train_dataset, test_dataset

    class InfiniteDataLoader:
        """
        this is really hacky and I'm not proud of it, but there doesn't seem to be
        a better way in PyTorch to just create an infinite dataloader?
        """

        def __init__(self, dataset, **kwargs):
            train_sampler = torch.utils.data.RandomSampler(dataset, replacement=True, num_samples=int(1e10))
            self.train_loader = DataLoader(dataset, sampler=train_sampler, **kwargs)
            self.data_iter = iter(self.train_loader)

        def next(self):
            try:
                batch = next(self.data_iter)
            except StopIteration:  # this will technically only happen after 1e10 samples... (i.e. basically never)
                self.data_iter = iter(self.train_loader)
                batch = next(self.data_iter)
            return batch

    # ---- the original's __main__ ----
    print(vars(args))

    # system inits
    torch.manual_seed(args.seed)
    os.makedirs(args.work_dir, exist_ok=True)

    # init datasets
    train_dataset, test_dataset = create_datasets(args.input_file)
    vocab_size = train_dataset.get_vocab_size()
    block_size = train_dataset.get_output_length()
    print(f"dataset determined that: {vocab_size=}, {block_size=}")

    # init model
    config = ModelConfig(vocab_size=vocab_size, block_size=block_size,
                         n_layer=args.n_layer, n_head=args.n_head,
                         n_embd=args.n_embd, n_embd2=args.n_embd2)
    if args.type == 'bigram':
        model = Bigram(config)
    elif args.type == 'mlp':
        model = MLP(config)
        h.numpy_init(torch, model, seed=args.seed)  # added
    else:
        raise ValueError(f'model type {args.type} is not recognized')
    model.to(args.device)
    print(f"model #params: {sum(p.numel() for p in model.parameters())}")

    # init optimizer
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate, weight_decay=args.weight_decay,
                                  betas=(0.9, 0.99), eps=1e-8)

    # init dataloader
    batch_loader = InfiniteDataLoader(train_dataset, batch_size=args.batch_size, pin_memory=True,
                                      num_workers=args.num_workers)

    # training loop
    best_loss = None
    step = 0
    while True:

        t0 = time.time()

        # get the next batch, ship to device, and unpack it to input and target
        batch = batch_loader.next()
        batch = [t.to(args.device) for t in batch]
        X, Y = batch

        # feed into the model
        logits, loss = model(X, Y)

        # calculate the gradient, update the weights
        model.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()

        t1 = time.time()

        # logging
        if step % 50 == 0:
            print(f"step {step} | loss {loss.item():.4f} | step time {(t1 - t0) * 1000:.2f}ms")

        # evaluate the model
        if step > 0 and step % 100 == 0:
            train_loss = evaluate(model, train_dataset, batch_size=100, max_batches=10)
            test_loss = evaluate(model, test_dataset, batch_size=100, max_batches=10)
            print(f"step {step} train loss: {train_loss} test loss: {test_loss}")
            # save the model to disk if it has improved
            if best_loss is None or test_loss < best_loss:
                out_path = os.path.join(args.work_dir, "model.pt")
                print(f"test loss {test_loss} is the best so far, saving model to {out_path}")
                torch.save(model.state_dict(), out_path)
                best_loss = test_loss

        # sample from the model
        if step > 0 and step % 100 == 0:
            print_samples(num=10)

        step += 1
        # termination conditions
        if args.max_steps >= 0 and step >= args.max_steps:
            break

    # (the original's --resume / --sample-only path) load the best checkpoint back and sample
    model.load_state_dict(torch.load(os.path.join(args.work_dir, 'model.pt')))
    print_samples(num=5)
    return model, vocab_size, evaluate(model, test_dataset, batch_size=30)


def run(lib, tmp_path, model_type):
    words = h.synthetic_names(600, seed=5)
    input_file = tmp_path / "names.txt"
    input_file.write_text("\n".join(words) + "\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = h.printed(program, lib, str(input_file), str(tmp_path / "out"), model_type)
    # InfiniteDataLoader passes pin_memory=True: PyTorch (and minigrad) warn that there is nothing to pin for
    assert any("'pin_memory' argument is set as true but no accelerator is found" in str(w.message) for w in caught)
    return result


def check_printout(out: str, vocab_size: int, final_test_loss: float, threshold: float) -> list[float]:
    losses = [float(x) for x in re.findall(r"^step \d+ \| loss (\d+\.\d+) \| step time", out, re.M)]
    assert len(losses) == 6  # steps 0, 50, ..., 250
    evals = re.findall(r"^step (\d+) train loss: (\S+) test loss: (\S+)$", out, re.M)
    assert [int(s) for s, _, _ in evals] == [100, 200]
    assert "number of examples in the dataset: 600" in out and "split up the dataset into 540 training" in out
    assert "is the best so far, saving model to" in out
    assert len(re.findall(r"^\d+ samples that are (?:in train|in test|new):$", out, re.M)) == 9
    assert final_test_loss < threshold < losses[0]
    assert float(evals[-1][2]) < threshold
    return losses


def test_bigram_trains_with_the_infinite_loader(lib, tmp_path):
    out, (model, vocab_size, final_test_loss) = run(lib, tmp_path, 'bigram')
    losses = check_printout(out, vocab_size, final_test_loss, threshold=2.75)
    assert losses[0] == pytest.approx(math.log(vocab_size), abs=1e-4)  # zero logits: a uniform first guess
    assert f"model #params: {vocab_size * vocab_size}" in out


def test_mlp_trains_with_the_infinite_loader(lib, tmp_path):
    out, (model, vocab_size, final_test_loss) = run(lib, tmp_path, 'mlp')
    check_printout(out, vocab_size, final_test_loss, threshold=2.75)
