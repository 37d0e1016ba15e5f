"""The parts of d2l.ai's `d2l` package (PyTorch flavour) the d2l ports use, built over either library.

Source: github.com/d2l-ai/d2l-en, d2l/torch.py (commit 23d7a5ae; sample code under MIT-0): the tensor
aliases (`d2l.zeros`, `d2l.reduce_sum`, ...), `HyperParameters.save_hyperparameters`, `add_to_class`,
`Module`, `DataModule.get_tensorloader`, `Trainer` (fit, fit_epoch, clip_gradients), `Classifier`
(loss, accuracy, layer_summary), `SGD`, `SyntheticRegressionData`, `Vocab`, `TimeMachine`,
`check_len`, `check_shape`, `RNNLMScratch` (the language model of the RNN-from-scratch chapter, which the
concise RNN, GRU and LSTM sections subclass), `swapaxes`. Changes, so that a test runs offline and both
libraries see the same numbers:
- plotting (ProgressBoard, matplotlib) -> `Module.plot` appends the value to `model.board[key]`;
- `get_tensorloader`'s `shuffle=train` -> a NumPy-driven sampler (the same order in both libraries);
- random data (`d2l.randn` in SyntheticRegressionData) -> NumPy draws; downloads (The Time Machine,
  Fashion-MNIST) -> synthetic text and images made with NumPy (see helpers.py);
- GPUs: `num_gpus` is accepted and there is none.
"""

from __future__ import annotations

import collections
import inspect
import re
import types

import numpy as np
import teaching_helpers as h


def make_d2l(torch) -> types.SimpleNamespace:
    """A `d2l` namespace whose tensors, modules and optimizers come from `torch` (the library under test)."""
    nn = torch.nn
    F = torch.nn.functional
    d2l = types.SimpleNamespace()

    for name in ["ones_like", "ones", "zeros_like", "zeros", "tensor", "arange", "sin", "cos", "tanh", "linspace",
                 "exp", "log", "normal", "rand", "randn", "matmul", "int32", "int64", "float32", "stack", "abs",
                 "eye", "sigmoid"]:
        setattr(d2l, name, getattr(torch, name))
    d2l.concat = torch.cat
    d2l.batch_matmul = torch.bmm
    d2l.numpy = lambda x, *args, **kwargs: x.detach().numpy(*args, **kwargs)
    d2l.size = lambda x, *args, **kwargs: x.numel(*args, **kwargs)
    d2l.reshape = lambda x, *args, **kwargs: x.reshape(*args, **kwargs)
    d2l.to = lambda x, *args, **kwargs: x.to(*args, **kwargs)
    d2l.reduce_sum = lambda x, *args, **kwargs: x.sum(*args, **kwargs)
    d2l.argmax = lambda x, *args, **kwargs: x.argmax(*args, **kwargs)
    d2l.astype = lambda x, *args, **kwargs: x.type(*args, **kwargs)
    d2l.transpose = lambda x, *args, **kwargs: x.t(*args, **kwargs)
    d2l.reduce_mean = lambda x, *args, **kwargs: x.mean(*args, **kwargs)
    d2l.expand_dims = lambda x, *args, **kwargs: x.unsqueeze(*args, **kwargs)
    d2l.swapaxes = lambda x, *args, **kwargs: x.swapaxes(*args, **kwargs)

    def add_to_class(Class):
        def wrapper(obj):
            setattr(Class, obj.__name__, obj)
        return wrapper

    class HyperParameters:
        def save_hyperparameters(self, ignore=[]):
            frame = inspect.currentframe().f_back
            _, _, _, local_vars = inspect.getargvalues(frame)
            self.hparams = {k: v for k, v in local_vars.items()
                            if k not in set(ignore + ['self']) and not k.startswith('_')}
            for k, v in self.hparams.items():
                setattr(self, k, v)

    class Module(nn.Module, HyperParameters):
        def __init__(self, plot_train_per_epoch=2, plot_valid_per_epoch=1):
            super().__init__()
            self.save_hyperparameters()
            self.board = {}

        def loss(self, y_hat, y):
            raise NotImplementedError

        def forward(self, X):
            assert hasattr(self, 'net'), 'Neural network is defined'
            return self.net(X)

        def plot(self, key, value, train):
            self.board.setdefault(("train_" if train else "val_") + key, []).append(float(d2l.numpy(value)))

        def training_step(self, batch):
            l = self.loss(self(*batch[:-1]), batch[-1])
            self.plot('loss', l, train=True)
            return l

        def validation_step(self, batch):
            l = self.loss(self(*batch[:-1]), batch[-1])
            self.plot('loss', l, train=False)

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=self.lr)

        def apply_init(self, inputs, init=None):
            self.forward(*inputs)
            if init is not None:
                self.net.apply(init)

    class DataModule(HyperParameters):
        def __init__(self, root='../data', num_workers=4):
            self.save_hyperparameters()

        def get_dataloader(self, train):
            raise NotImplementedError

        def train_dataloader(self):
            return self.get_dataloader(train=True)

        def val_dataloader(self):
            return self.get_dataloader(train=False)

        def get_tensorloader(self, tensors, train, indices=slice(0, None)):
            tensors = tuple(a[indices] for a in tensors)
            dataset = torch.utils.data.TensorDataset(*tensors)
            sampler = h.NumpyShuffle(len(dataset), seed=len(dataset)) if train else None  # was shuffle=train
            return torch.utils.data.DataLoader(dataset, self.batch_size, sampler=sampler)

    class Trainer(HyperParameters):
        def __init__(self, max_epochs, num_gpus=0, gradient_clip_val=0):
            self.save_hyperparameters()
            self.gpus = []

        def prepare_data(self, data):
            self.train_dataloader = data.train_dataloader()
            self.val_dataloader = data.val_dataloader()
            self.num_train_batches = len(self.train_dataloader)
            self.num_val_batches = (len(self.val_dataloader) if self.val_dataloader is not None else 0)

        def prepare_model(self, model):
            model.trainer = self
            self.model = model

        def fit(self, model, data):
            self.prepare_data(data)
            self.prepare_model(model)
            self.optim = model.configure_optimizers()
            self.epoch = 0
            self.train_batch_idx = 0
            self.val_batch_idx = 0
            for self.epoch in range(self.max_epochs):
                self.fit_epoch()

        def prepare_batch(self, batch):
            return batch

        def fit_epoch(self):
            self.model.train()
            for batch in self.train_dataloader:
                loss = self.model.training_step(self.prepare_batch(batch))
                self.optim.zero_grad()
                with torch.no_grad():
                    loss.backward()
                    if self.gradient_clip_val > 0:
                        self.clip_gradients(self.gradient_clip_val, self.model)
                    self.optim.step()
                self.train_batch_idx += 1
            if self.val_dataloader is None:
                return
            self.model.eval()
            for batch in self.val_dataloader:
                with torch.no_grad():
                    self.model.validation_step(self.prepare_batch(batch))
                self.val_batch_idx += 1

        def clip_gradients(self, grad_clip_val, model):
            params = [p for p in model.parameters() if p.requires_grad]
            norm = torch.sqrt(sum(torch.sum((p.grad ** 2)) for p in params))
            if norm > grad_clip_val:
                for param in params:
                    param.grad[:] *= grad_clip_val / norm

    class Classifier(Module):
        def validation_step(self, batch):
            Y_hat = self(*batch[:-1])
            self.plot('loss', self.loss(Y_hat, batch[-1]), train=False)
            self.plot('acc', self.accuracy(Y_hat, batch[-1]), train=False)

        def accuracy(self, Y_hat, Y, averaged=True):
            Y_hat = d2l.reshape(Y_hat, (-1, Y_hat.shape[-1]))
            preds = d2l.astype(d2l.argmax(Y_hat, axis=1), Y.dtype)
            compare = d2l.astype(preds == d2l.reshape(Y, -1), d2l.float32)
            return d2l.reduce_mean(compare) if averaged else compare

        def loss(self, Y_hat, Y, averaged=True):
            Y_hat = d2l.reshape(Y_hat, (-1, Y_hat.shape[-1]))
            Y = d2l.reshape(Y, (-1,))
            return F.cross_entropy(Y_hat, Y, reduction='mean' if averaged else 'none')

        def layer_summary(self, X_shape):
            X = d2l.randn(*X_shape)
            for layer in self.net:
                X = layer(X)
                print(layer.__class__.__name__, 'output shape:\t', X.shape)

    class SGD(HyperParameters):
        def __init__(self, params, lr):
            self.save_hyperparameters()

        def step(self):
            for param in self.params:
                param -= self.lr * param.grad

        def zero_grad(self):
            for param in self.params:
                if param.grad is not None:
                    param.grad.zero_()

    class SyntheticRegressionData(DataModule):
        def __init__(self, w, b, noise=0.01, num_train=1000, num_val=1000, batch_size=32):
            super().__init__()
            self.save_hyperparameters()
            n = num_train + num_val
            rng = np.random.default_rng(0)
            self.X = d2l.tensor(rng.standard_normal((n, len(w))).astype(np.float32))  # was d2l.randn(n, len(w))
            noise = d2l.tensor(rng.standard_normal((n, 1)).astype(np.float32)) * noise  # was d2l.randn(n, 1)
            self.y = d2l.matmul(self.X, d2l.reshape(w, (-1, 1))) + b + noise

        def get_dataloader(self, train):
            i = slice(0, self.num_train) if train else slice(self.num_train, None)
            return self.get_tensorloader((self.X, self.y), train, i)

    class Vocab:
        def __init__(self, tokens=[], min_freq=0, reserved_tokens=[]):
            if tokens and isinstance(tokens[0], list):
                tokens = [token for line in tokens for token in line]
            counter = collections.Counter(tokens)
            self.token_freqs = sorted(counter.items(), key=lambda x: x[1], reverse=True)
            self.idx_to_token = list(sorted(set(['<unk>'] + reserved_tokens + [
                token for token, freq in self.token_freqs if freq >= min_freq])))
            self.token_to_idx = {token: idx for idx, token in enumerate(self.idx_to_token)}

        def __len__(self):
            return len(self.idx_to_token)

        def __getitem__(self, tokens):
            if not isinstance(tokens, (list, tuple)):
                return self.token_to_idx.get(tokens, self.unk)
            return [self.__getitem__(token) for token in tokens]

        def to_tokens(self, indices):
            if hasattr(indices, '__len__') and len(indices) > 1:
                return [self.idx_to_token[int(index)] for index in indices]
            return self.idx_to_token[indices]

        @property
        def unk(self):
            return self.token_to_idx['<unk>']

    class TimeMachine(DataModule):
        def _download(self):  # was a download of timemachine.txt
            return h.synthetic_text(40_000, seed=7)

        def _preprocess(self, text):
            return re.sub('[^A-Za-z]+', ' ', text).lower()

        def _tokenize(self, text):
            return list(text)

        def build(self, raw_text, vocab=None):
            tokens = self._tokenize(self._preprocess(raw_text))
            if vocab is None:
                vocab = Vocab(tokens)
            corpus = [vocab[token] for token in tokens]
            return corpus, vocab

        def __init__(self, batch_size, num_steps, num_train=10000, num_val=5000):
            super().__init__()
            self.save_hyperparameters()
            corpus, self.vocab = self.build(self._download())
            array = d2l.tensor([corpus[i:i + num_steps + 1] for i in range(len(corpus) - num_steps)])
            self.X, self.Y = array[:, :-1], array[:, 1:]

        def get_dataloader(self, train):
            idx = slice(0, self.num_train) if train else slice(self.num_train, self.num_train + self.num_val)
            return self.get_tensorloader([self.X, self.Y], train, idx)

    def check_len(a, n):
        assert len(a) == n, f'list\'s length {len(a)} != expected length {n}'

    def check_shape(a, shape):
        assert a.shape == shape, f'tensor\'s shape {a.shape} != expected shape {shape}'

    class RNNLMScratch(Classifier):
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

        def one_hot(self, X):
            # Output shape: (num_steps, batch_size, vocab_size)
            return F.one_hot(X.T, self.vocab_size).type(torch.float32)

        def output_layer(self, rnn_outputs):
            outputs = [d2l.matmul(H, self.W_hq) + self.b_q for H in rnn_outputs]
            return d2l.stack(outputs, 1)

        def forward(self, X, state=None):
            embs = self.one_hot(X)
            rnn_outputs, _ = self.rnn(embs, state)
            return self.output_layer(rnn_outputs)

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

    for obj in (add_to_class, HyperParameters, Module, DataModule, Trainer, Classifier, SGD,
                SyntheticRegressionData, Vocab, TimeMachine, check_len, check_shape, RNNLMScratch):
        setattr(d2l, obj.__name__, obj)
    d2l.try_gpu = lambda i=0: torch.device('cpu')
    return d2l


def add_fashion_mnist(d2l, torch) -> None:
    """d2l.FashionMNIST over NumPy-made 1x28x28 images in 10 classes (the original downloads the data set
    through torchvision and resizes it with its transforms)."""

    class FashionMNIST(d2l.DataModule):
        def __init__(self, batch_size=64, resize=(28, 28), num_train=1024, num_val=256):
            super().__init__()
            self.save_hyperparameters()
            x, y = h.class_images(num_train + num_val, 1, resize[0], 10, seed=3)
            self.train = (torch.tensor(x[:num_train]), torch.tensor(y[:num_train]))
            self.val = (torch.tensor(x[num_train:]), torch.tensor(y[num_train:]))

        def text_labels(self, indices):
            labels = ['t-shirt', 'trouser', 'pullover', 'dress', 'coat',
                      'sandal', 'shirt', 'sneaker', 'bag', 'ankle boot']
            return [labels[int(i)] for i in indices]

        def get_dataloader(self, train):
            data = self.train if train else self.val
            return self.get_tensorloader(data, train)

    d2l.FashionMNIST = FashionMNIST
