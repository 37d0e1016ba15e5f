"""Port of d2l.ai "Recurrent Neural Network Implementation from Scratch" (PyTorch tab).

Source: github.com/d2l-ai/d2l-en, chapter_recurrent-neural-networks/rnn-scratch.md (commit 23d7a5ae),
published as d2l.ai/chapter_recurrent-neural-networks/rnn-scratch.html: `RNNScratch` (parameters,
a Python loop over time steps), `RNNLMScratch` (one-hot inputs with `F.one_hot(X.T, ...).type(...)`,
an output layer, perplexity), gradient clipping with `param.grad[:] *= ...`, training with
`d2l.Trainer`, and greedy prediction with `d2l.argmax(Y, axis=2)`. `d2l` is d2l_lib.py over the
library under test. Changes:
- The Time Machine (downloaded) -> synthetic text (d2l_lib.TimeMachine); `batch_size=1024` -> 128,
  `num_train` 10,000 -> 1,024, `num_val` 5,000 -> 256, `max_epochs=100` -> 8 (so 64 steps);
- the parameters `d2l.randn(...) * sigma` are overwritten after construction with NumPy draws of the
  same distribution (the same start in both libraries);
- `require_stack_of_many` is called first: before the core redesign minigrad built a stack/cat node over
  all 2**n subsets of its inputs and hung in `d2l.stack(outputs, 1)` over 100 time steps; the guard turns
  such a hang into an error within 2 s instead of a stalled CI run;
- the shape checks the chapter runs are kept; the training perplexities (recorded from PyTorch 2.13)
  must fall, and the greedy prediction is the one PyTorch makes.
"""

from __future__ import annotations

import numpy as np
import teaching_d2l
import teaching_helpers as h

RECORDED_TRAIN_PPL = [27.0003, 21.2313, 19.3251, 18.5361, 18.1017, 17.3242, 16.7456, 15.7063]  # step 1 of each epoch
RECORDED_PREDICTION = 'it has t t t t t t t t t t'  # greedy decoding after 64 steps: the most frequent bigrams


def rnn_classes(torch, d2l):
    nn = torch.nn
    F = torch.nn.functional

    class RNNScratch(d2l.Module):  #@save
        """The RNN model implemented from scratch."""
        def __init__(self, num_inputs, num_hiddens, sigma=0.01):
            super().__init__()
            self.save_hyperparameters()
            self.W_xh = nn.Parameter(
                d2l.randn(num_inputs, num_hiddens) * sigma)
            self.W_hh = nn.Parameter(
                d2l.randn(num_hiddens, num_hiddens) * sigma)
            self.b_h = nn.Parameter(d2l.zeros(num_hiddens))

    @d2l.add_to_class(RNNScratch)  #@save
    def forward(self, inputs, state=None):
        if state is None:
            # Initial state with shape: (batch_size, num_hiddens)
            state = d2l.zeros((inputs.shape[1], self.num_hiddens),
                              device=inputs.device)
        else:
            state, = state
        outputs = []
        for X in inputs:  # Shape of inputs: (num_steps, batch_size, num_inputs)
            state = d2l.tanh(d2l.matmul(X, self.W_xh) +
                             d2l.matmul(state, self.W_hh) + self.b_h)
            outputs.append(state)
        return outputs, state

    class RNNLMScratch(d2l.Classifier):  #@save
        """The RNN-based language model implemented from scratch."""
        def __init__(self, rnn, vocab_size, lr=0.01):
            super().__init__()
            self.save_hyperparameters()
            self.init_params()

        def init_params(self):
            self.W_hq = nn.Parameter(
                d2l.randn(
                    self.rnn.num_hiddens, self.vocab_size) * self.rnn.sigma)
            self.b_q = nn.Parameter(d2l.zeros(self.vocab_size))

        def training_step(self, batch):
            l = self.loss(self(*batch[:-1]), batch[-1])
            self.plot('ppl', d2l.exp(l), train=True)
            return l

        def validation_step(self, batch):
            l = self.loss(self(*batch[:-1]), batch[-1])
            self.plot('ppl', d2l.exp(l), train=False)

    @d2l.add_to_class(RNNLMScratch)  #@save
    def one_hot(self, X):
        # Output shape: (num_steps, batch_size, vocab_size)
        return F.one_hot(X.T, self.vocab_size).type(torch.float32)

    @d2l.add_to_class(RNNLMScratch)  #@save
    def output_layer(self, rnn_outputs):
        outputs = [d2l.matmul(H, self.W_hq) + self.b_q for H in rnn_outputs]
        return d2l.stack(outputs, 1)

    @d2l.add_to_class(RNNLMScratch)  #@save
    def forward(self, X, state=None):
        embs = self.one_hot(X)
        rnn_outputs, _ = self.rnn(embs, state)
        return self.output_layer(rnn_outputs)

    @d2l.add_to_class(RNNLMScratch)  #@save
    def predict(self, prefix, num_preds, vocab, device=None):
        state, outputs = None, [vocab[prefix[0]]]
        for i in range(len(prefix) + num_preds - 1):
            X = d2l.tensor([[outputs[-1]]], device=device)
            embs = self.one_hot(X)
            rnn_outputs, state = self.rnn(embs, state)
            if i < len(prefix) - 1:  # Warm-up period
                outputs.append(vocab[prefix[i + 1]])
            else:  # Predict num_preds steps
                Y = self.output_layer(rnn_outputs)
                outputs.append(int(d2l.reshape(d2l.argmax(Y, axis=2), 1)))
        return ''.join([vocab.idx_to_token[i] for i in outputs])

    return RNNScratch, RNNLMScratch


def numpy_params(torch, model, seed, sigma=0.01):
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.split(".")[-1].startswith("W"):  # W_hq, rnn.W_xh, rnn.W_hh (biases start at zero)
                p.copy_(torch.tensor((rng.standard_normal(tuple(p.shape)) * sigma).astype(np.float32)))


def test_rnn_shapes_and_one_hot(lib):
    torch, F = lib, lib.nn.functional
    h.require_stack_of_many(lib)  # added: a guard against `d2l.stack(outputs, 1)` hanging (see docstring)
    d2l = teaching_d2l.make_d2l(lib)
    RNNScratch, RNNLMScratch = rnn_classes(lib, d2l)

    batch_size, num_inputs, num_hiddens, num_steps = 2, 16, 32, 100
    rnn = RNNScratch(num_inputs, num_hiddens)
    X = d2l.ones((num_steps, batch_size, num_inputs))
    outputs, state = rnn(X)

    d2l.check_len(outputs, num_steps)
    d2l.check_shape(outputs[0], (batch_size, num_hiddens))
    d2l.check_shape(state, (batch_size, num_hiddens))

    assert h.as_torch_text(repr(F.one_hot(torch.tensor([0, 2]), 5))) == \
        "tensor([[1, 0, 0, 0, 0],\n        [0, 0, 1, 0, 0]])"

    model = RNNLMScratch(rnn, num_inputs)
    outputs = model(d2l.ones((batch_size, num_steps), dtype=d2l.int64))
    d2l.check_shape(outputs, (batch_size, num_steps, num_inputs))


def test_rnn_language_model_trains_with_gradient_clipping(lib):
    h.require_stack_of_many(lib)  # added: a guard against `d2l.stack(outputs, 1)` hanging (see docstring)
    d2l = teaching_d2l.make_d2l(lib)
    RNNScratch, RNNLMScratch = rnn_classes(lib, d2l)

    data = d2l.TimeMachine(batch_size=128, num_steps=32, num_train=1024, num_val=256)
    rnn = RNNScratch(num_inputs=len(data.vocab), num_hiddens=32)
    model = RNNLMScratch(rnn, vocab_size=len(data.vocab), lr=1)
    numpy_params(lib, model, seed=0)  # added
    trainer = d2l.Trainer(max_epochs=8, gradient_clip_val=1, num_gpus=1)
    trainer.fit(model, data)

    ppl = np.array(model.board["train_ppl"])
    assert len(ppl) == 64 and len(model.board["val_ppl"]) == 16
    prediction = model.predict('it has', 20, data.vocab, d2l.try_gpu())
    np.testing.assert_allclose(ppl[::8], RECORDED_TRAIN_PPL, atol=2e-3)
    assert ppl[-8:].mean() < ppl[:8].mean() - 5
    assert prediction == RECORDED_PREDICTION
    assert prediction.startswith('it has') and len(prediction) == 26
