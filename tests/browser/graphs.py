"""The browser tests' catalogue of graphs: each builder takes the autograd library (minigrad or
torch) and returns ``(loss, params)``. The same source runs in a notebook cell (``CELL``)."""

from __future__ import annotations


def mlp18(T):
    """The issue's projector case: a 3-Linear-layer MLP with CrossEntropyLoss (18 nodes)."""
    T.manual_seed(0)
    nn = T.nn
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 3))
    x = T.randn(5, 4)
    target = T.tensor([0, 1, 2, 0, 1])
    return nn.CrossEntropyLoss()(model(x), target), model


def projector_mlp(T):
    """The projector issue's MLP: Linear(4, 16), ReLU, Linear(16, 16), ReLU, Linear(16, 3), CrossEntropyLoss on a
    batch of 8 (18 nodes)."""
    T.manual_seed(0)
    nn = T.nn
    model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 3))
    x = T.randn(8, 4)
    target = T.tensor([0, 1, 2, 0, 1, 2, 0, 1])
    return nn.CrossEntropyLoss()(model(x), target), model


def chain25(T):
    """25 nodes: chain40's pattern, shorter (the most the projector test promises 18 px text for)."""
    x = T.tensor([0.5, -0.25], requires_grad=True)
    w = T.tensor([1.5, 0.5], requires_grad=True)
    y = x
    for i in range(9):
        y = (y * w).tanh() if i % 2 else y + x
    return y.sum(), {"x": x, "w": w}


def chain40(T):
    """About 40 nodes: a long chain with a leaf joining every few steps."""
    x = T.tensor([0.5, -0.25], requires_grad=True)
    w = T.tensor([1.5, 0.5], requires_grad=True)
    y = x
    for i in range(12):
        y = (y * w).tanh() if i % 2 else y + x
    return y.sum(), {"x": x, "w": w}


def tiny(T):
    """Two nodes: a leaf and its sum."""
    x = T.tensor([1.0, 2.0], requires_grad=True)
    return x.sum(), {"x": x}


def fan_out(T):
    """One leaf used by eight branches: a wide graph."""
    x = T.tensor([0.1, 0.2, 0.3], requires_grad=True)
    parts = [(x * (k + 1)).exp() for k in range(8)]
    total = parts[0]
    for p in parts[1:]:
        total = total + p
    return total.sum(), {"x": x}


def lesson5(T):
    """Lesson 5: a clipping tensor hook on h = x * w."""
    x = T.tensor([0.5, -1.0, 2.0], requires_grad=True)
    w = T.tensor([3.0, 1.0, -2.0], requires_grad=True)
    h = x * w
    h.register_hook(lambda grad: grad.clamp(-2, 2))
    lesson5.keep = h  # the learner's code holds h
    return (h**2).sum(), {"x": x, "w": w}


def transformer(torch, layers: int = 6, squares: bool = False):
    """PyTorch's TransformerEncoder between two Linear layers, tagged by viz.tag_modules (the loss: the sum, or
    the mean of squares of the projector issue)."""
    import viz

    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64, dropout=0.0,
                                             batch_first=True)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32),
                                torch.nn.TransformerEncoder(layer, num_layers=layers, enable_nested_tensor=False),
                                torch.nn.Linear(32, 4))
    with viz.tag_modules(model):
        out = model(torch.randn(2, 5, 16))
        loss = (out**2).mean() if squares else out.sum()
    return loss, model


CATALOGUE = {"mlp18": mlp18, "chain40": chain40, "tiny": tiny, "fan_out": fan_out, "lesson5": lesson5}
