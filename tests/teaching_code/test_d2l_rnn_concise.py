"""Port of d2l.ai "Concise Implementation of Recurrent Neural Networks" (PyTorch tab), with the concise GRU and
LSTM sections of "Gated Recurrent Units" and "Long Short-Term Memory" that build on it.

Source: github.com/d2l-ai/d2l-en (commit 23d7a5ae), chapter_recurrent-neural-networks/rnn-concise.md (`RNN` over
`nn.RNN`, `RNNLM` over `d2l.RNNLMScratch` with an `nn.LazyLinear` output layer and `d2l.swapaxes`, a prediction
before training, training with `d2l.Trainer(gradient_clip_val=1)`, a prediction after it),
chapter_recurrent-modern/gru.md and lstm.md ("Concise Implementation": `GRU(d2l.RNN)` over `nn.GRU`,
`LSTM(d2l.RNN)` over `nn.LSTM` with its (H, C) state, each trained as `d2l.RNNLM(..., lr=4)`). `d2l` is
d2l_lib.py over the library under test (`RNNLMScratch` there is the chapter's saved class). Changes:
- The Time Machine (downloaded) -> synthetic text (d2l_lib.TimeMachine); `batch_size=1024` -> 128,
  `num_train` 10,000 -> 512, `num_val` 5,000 -> 128, `max_epochs=100` (50 for GRU and LSTM) -> 4 (16 steps);
  the data set is built once per library and shared by the three models (each section builds the same one;
  turning its 40,000 windows into a tensor takes about a second);
- the model's parameters (PyTorch's init of nn.RNN/GRU/LSTM and of the LazyLinear) are overwritten with NumPy
  draws of the same distributions, after one added forward pass that materialises the LazyLinear (the same
  start in both libraries);
- the predictions and training perplexities are the ones recorded from PyTorch 2.13; perplexity must fall.
"""

from __future__ import annotations

import numpy as np
import pytest
import teaching_d2l
import teaching_helpers as h

RECORDED = {  # prediction before training, train perplexity at the first step of each epoch, prediction after
    "RNN": ("it hasyyyyyyyyyyyyyyyyyyyy", [26.9172, 17.9132, 16.9128, 16.4581], "it hase teeeeeeeeeeeeeeeee"),
    "GRU": ("it has" + "<unk><unk><unk>t<unk><unk>t<unk><unk>t<unk><unk><unk>t<unk><unk>t<unk><unk>t",
            [27.0468, 18.1598, 16.5467, 17.7488], "it haseeeeeeeeeeeeeeeeeeee"),
    "LSTM": ("it hasuuuuuuuuuuuuuuuuuuuu", [27.4886, 18.2347, 17.3823, 17.155], "it has                    "),
}


def concise_classes(torch, d2l):
    nn = torch.nn

    class RNN(d2l.Module):  #@save
        """The RNN model implemented with high-level APIs."""
        def __init__(self, num_inputs, num_hiddens):
            super().__init__()
            self.save_hyperparameters()
            self.rnn = nn.RNN(num_inputs, num_hiddens)

        def forward(self, inputs, H=None):
            return self.rnn(inputs, H)

    class RNNLM(d2l.RNNLMScratch):  #@save
        """The RNN-based language model implemented with high-level APIs."""
        def init_params(self):
            self.linear = nn.LazyLinear(self.vocab_size)

        def output_layer(self, hiddens):
            return d2l.swapaxes(self.linear(hiddens), 0, 1)

    class GRU(RNN):  # gru.md: `class GRU(d2l.RNN)`
        def __init__(self, num_inputs, num_hiddens):
            d2l.Module.__init__(self)
            self.save_hyperparameters()
            self.rnn = nn.GRU(num_inputs, num_hiddens)

    class LSTM(RNN):  # lstm.md: `class LSTM(d2l.RNN)`
        def __init__(self, num_inputs, num_hiddens):
            d2l.Module.__init__(self)
            self.save_hyperparameters()
            self.rnn = nn.LSTM(num_inputs, num_hiddens)

        def forward(self, inputs, H_C=None):
            return self.rnn(inputs, H_C)

    return {"RNN": RNN, "GRU": GRU, "LSTM": LSTM}, RNNLM


_DATA: dict = {}


def time_machine(lib, d2l):
    """`d2l.TimeMachine(batch_size=128, num_steps=32, num_train=512, num_val=128)`, built once per library."""
    if lib.__name__ not in _DATA:
        _DATA[lib.__name__] = d2l.TimeMachine(batch_size=128, num_steps=32, num_train=512, num_val=128)
    return _DATA[lib.__name__]


def numpy_params(lib, d2l, model, seed):
    model(d2l.zeros((1, 1), dtype=d2l.int64))  # added: materialises the LazyLinear
    h.numpy_init(lib, model, seed=seed)


@pytest.mark.parametrize("kind", ["RNN", "GRU", "LSTM"])
def test_concise_language_model_predicts_and_trains(lib, kind):
    d2l = teaching_d2l.make_d2l(lib)
    classes, RNNLM = concise_classes(lib, d2l)

    data = time_machine(lib, d2l)  # was d2l.TimeMachine(batch_size=1024, num_steps=32)
    rnn = classes[kind](num_inputs=len(data.vocab), num_hiddens=32)
    model = RNNLM(rnn, vocab_size=len(data.vocab), lr=1 if kind == "RNN" else 4)
    numpy_params(lib, d2l, model, seed=1)  # added
    before = model.predict('it has', 20, data.vocab)

    trainer = d2l.Trainer(max_epochs=4, gradient_clip_val=1, num_gpus=1)
    trainer.fit(model, data)
    after = model.predict('it has', 20, data.vocab, d2l.try_gpu())

    ppl = np.array(model.board["train_ppl"])
    assert len(ppl) == 16 and len(model.board["val_ppl"]) == 4
    want_before, want_ppl, want_after = RECORDED[kind]
    assert before == want_before
    np.testing.assert_allclose(ppl[::4], want_ppl, rtol=1e-4)
    assert ppl[-4:].mean() < ppl[:4].mean()
    assert after == want_after and len(after) == 26
