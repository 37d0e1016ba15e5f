"""Port of Sebastian Raschka's "Build a Large Language Model From Scratch", Appendix A: Introduction to PyTorch
(part 1).

Source: github.com/rasbt/LLMs-from-scratch, appendix-A/01_main-chapter-code/code-part1.ipynb (commit
28f4c831f38685e9be1a4673b639c4dd954d5926): tensors from lists and NumPy (`tensor` copies, `from_numpy` shares),
dtypes, reshape/view/.T/matmul, a logistic unit with `F.binary_cross_entropy`, `autograd.grad` with
`retain_graph` then `backward`, a `Sequential` MLP (its printout, parameter count, outputs with and without
`no_grad`, softmax), a `Dataset` and `DataLoader`s (shuffled, `drop_last`), the training loop with
`F.cross_entropy` and SGD, `set_printoptions(sci_mode=False)`, argmax, accuracy, and saving/loading the
state_dict (`weights_only=True`). Code cells as the notebook, in order; an expression a cell shows is printed.
Changes:
- `torch.rand((1, 50))` and the layers' initial weights -> NumPy draws (PyTorch's distributions);
- `print(torch.__version__)` is kept but not compared (minigrad has its own version); "model.pth" -> a temporary
  directory;
- the shuffled loaders draw from each library's own stream: what is printed before them is compared with the
  text recorded from PyTorch 2.13; after them, what the program shows (batches partition the data set, the
  loss falls, accuracy 1.0 on both sets, every key matched).
"""

from __future__ import annotations

import numpy as np
import teaching_helpers as h

RECORDED = """False
tensor([[[1, 2],
         [3, 4]],

        [[5, 6],
         [7, 8]]])
tensor([[[999,   2],
         [  3,   4]],

        [[  5,   6],
         [  7,   8]]])
torch.int64
torch.float32
torch.float32
tensor([[1, 2, 3],
        [4, 5, 6]])
torch.Size([2, 3])
tensor([[1, 2],
        [3, 4],
        [5, 6]])
tensor([[1, 2],
        [3, 4],
        [5, 6]])
tensor([[1, 4],
        [2, 5],
        [3, 6]])
tensor([[14, 32],
        [32, 77]])
tensor([[14, 32],
        [32, 77]])
tensor(0.0852)
(tensor([-0.0898]),)
(tensor([-0.0817]),)
tensor([-0.0898])
tensor([-0.0817])
NeuralNetwork(
  (layers): Sequential(
    (0): Linear(in_features=50, out_features=30, bias=True)
    (1): ReLU()
    (2): Linear(in_features=30, out_features=20, bias=True)
    (3): ReLU()
    (4): Linear(in_features=20, out_features=3, bias=True)
  )
)
Total number of trainable model parameters: 2213
"""


RECORDED_INIT = """
tensor([[ 0.0516, -0.1262, -0.0791,  ..., -0.1322, -0.0009, -0.0090],
        [-0.1053, -0.0686, -0.1405,  ...,  0.1056, -0.0908, -0.1329],
        [ 0.0168, -0.0201,  0.1014,  ..., -0.0111, -0.1305, -0.0522],
        ...,
        [-0.0594, -0.0926, -0.0683,  ...,  0.0495,  0.0948, -0.0578],
        [ 0.1060, -0.1061,  0.0076,  ..., -0.0015, -0.1398, -0.0721],
        [ 0.0337,  0.1345, -0.1247,  ...,  0.0300,  0.0690,  0.0521]],
       requires_grad=True)
torch.Size([30, 50])
tensor([[-0.0188, -0.1127, -0.2130]], grad_fn=<AddmmBackward0>)
tensor([[-0.0188, -0.1127, -0.2130]])
tensor([[0.3658, 0.3330, 0.3012]])"""


def program(torch, tmp_dir):
    print(torch.__version__)
    print(torch.cuda.is_available())

    # A.2.1 Scalars, vectors, matrices, and tensors
    tensor0d = torch.tensor(1)  # noqa: F841 - as the notebook
    tensor1d = torch.tensor([1, 2, 3])
    tensor2d = torch.tensor([[1, 2],
                             [3, 4]])
    tensor3d_1 = torch.tensor([[[1, 2], [3, 4]],  # noqa: F841 - as the notebook
                               [[5, 6], [7, 8]]])
    ary3d = np.array([[[1, 2], [3, 4]],
                      [[5, 6], [7, 8]]])
    tensor3d_2 = torch.tensor(ary3d)  # Copies NumPy array
    tensor3d_3 = torch.from_numpy(ary3d)  # Shares memory with NumPy array
    ary3d[0, 0, 0] = 999
    print(tensor3d_2)  # remains unchanged
    print(tensor3d_3)  # changes because of memory sharing

    # A.2.2 Tensor data types
    tensor1d = torch.tensor([1, 2, 3])
    print(tensor1d.dtype)
    floatvec = torch.tensor([1.0, 2.0, 3.0])
    print(floatvec.dtype)
    floatvec = tensor1d.to(torch.float32)
    print(floatvec.dtype)

    # A.2.3 Common PyTorch tensor operations (each cell's shown value is printed)
    tensor2d = torch.tensor([[1, 2, 3],
                             [4, 5, 6]])
    print(tensor2d)
    print(tensor2d.shape)
    print(tensor2d.reshape(3, 2))
    print(tensor2d.view(3, 2))
    print(tensor2d.T)
    print(tensor2d.matmul(tensor2d.T))
    print(tensor2d @ tensor2d.T)

    # A.3 Seeing models as computation graphs
    F = torch.nn.functional
    y = torch.tensor([1.0])  # true label
    x1 = torch.tensor([1.1])  # input feature
    w1 = torch.tensor([2.2])  # weight parameter
    b = torch.tensor([0.0])  # bias unit
    z = x1 * w1 + b  # net input
    a = torch.sigmoid(z)  # activation & output
    loss = F.binary_cross_entropy(a, y)
    print(loss)

    # A.4 Automatic differentiation made easy
    grad = torch.autograd.grad
    y = torch.tensor([1.0])
    x1 = torch.tensor([1.1])
    w1 = torch.tensor([2.2], requires_grad=True)
    b = torch.tensor([0.0], requires_grad=True)
    z = x1 * w1 + b
    a = torch.sigmoid(z)
    loss = F.binary_cross_entropy(a, y)
    grad_L_w1 = grad(loss, w1, retain_graph=True)
    grad_L_b = grad(loss, b, retain_graph=True)
    print(grad_L_w1)
    print(grad_L_b)
    loss.backward()
    print(w1.grad)
    print(b.grad)

    # A.5 Implementing multilayer neural networks
    class NeuralNetwork(torch.nn.Module):
        def __init__(self, num_inputs, num_outputs):
            super().__init__()

            self.layers = torch.nn.Sequential(

                # 1st hidden layer
                torch.nn.Linear(num_inputs, 30),
                torch.nn.ReLU(),

                # 2nd hidden layer
                torch.nn.Linear(30, 20),
                torch.nn.ReLU(),

                # output layer
                torch.nn.Linear(20, num_outputs),
            )

        def forward(self, x):
            logits = self.layers(x)
            return logits

    model = NeuralNetwork(50, 3)
    print(model)
    num_params = sum(p.numel() for p in model.parameters() if p.requires_grad)
    print("Total number of trainable model parameters:", num_params)
    print(model.layers[0].weight)

    torch.manual_seed(123)
    model = NeuralNetwork(50, 3)
    h.numpy_init(torch, model, seed=123)  # added
    print(model.layers[0].weight)
    print(model.layers[0].weight.shape)

    torch.manual_seed(123)
    X = torch.tensor(np.random.default_rng(1).random((1, 50), dtype=np.float32))  # was torch.rand((1, 50))
    out = model(X)
    print(out)
    with torch.no_grad():
        out = model(X)
    print(out)
    with torch.no_grad():
        out = torch.softmax(model(X), dim=1)
    print(out)

    # A.6 Setting up efficient data loaders
    X_train = torch.tensor([
        [-1.2, 3.1],
        [-0.9, 2.9],
        [-0.5, 2.6],
        [2.3, -1.1],
        [2.7, -1.5]
    ])
    y_train = torch.tensor([0, 0, 0, 1, 1])
    X_test = torch.tensor([
        [-0.8, 2.8],
        [2.6, -1.6],
    ])
    y_test = torch.tensor([0, 1])

    Dataset = torch.utils.data.Dataset

    class ToyDataset(Dataset):
        def __init__(self, X, y):
            self.features = X
            self.labels = y

        def __getitem__(self, index):
            one_x = self.features[index]
            one_y = self.labels[index]
            return one_x, one_y

        def __len__(self):
            return self.labels.shape[0]

    train_ds = ToyDataset(X_train, y_train)
    test_ds = ToyDataset(X_test, y_test)
    print(len(train_ds))

    DataLoader = torch.utils.data.DataLoader
    torch.manual_seed(123)
    train_loader = DataLoader(
        dataset=train_ds,
        batch_size=2,
        shuffle=True,
        num_workers=0
    )
    test_ds = ToyDataset(X_test, y_test)
    test_loader = DataLoader(
        dataset=test_ds,
        batch_size=2,
        shuffle=False,
        num_workers=0
    )
    for idx, (x, y) in enumerate(train_loader):
        print(f"Batch {idx+1}:", x, y)
    train_loader = DataLoader(
        dataset=train_ds,
        batch_size=2,
        shuffle=True,
        num_workers=0,
        drop_last=True
    )
    for idx, (x, y) in enumerate(train_loader):
        print(f"Batch {idx+1}:", x, y)

    # A.7 A typical training loop
    torch.manual_seed(123)
    model = NeuralNetwork(num_inputs=2, num_outputs=2)
    h.numpy_init(torch, model, seed=7)  # added
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    num_epochs = 3
    for epoch in range(num_epochs):

        model.train()
        for batch_idx, (features, labels) in enumerate(train_loader):

            logits = model(features)

            loss = F.cross_entropy(logits, labels)  # Loss function

            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

            ### LOGGING
            print(f"Epoch: {epoch+1:03d}/{num_epochs:03d}"
                  f" | Batch {batch_idx+1:03d}/{len(train_loader):03d}"
                  f" | Train/Val Loss: {loss:.2f}")

        model.eval()
        # Optional model evaluation

    model.eval()
    with torch.no_grad():
        outputs = model(X_train)
    print(outputs)
    torch.set_printoptions(sci_mode=False)
    probas = torch.softmax(outputs, dim=1)
    print(probas)
    predictions = torch.argmax(probas, dim=1)
    print(predictions)
    predictions = torch.argmax(outputs, dim=1)
    print(predictions)
    print(predictions == y_train)
    print(torch.sum(predictions == y_train))

    def compute_accuracy(model, dataloader):

        model.eval()
        correct = 0.0
        total_examples = 0

        for idx, (features, labels) in enumerate(dataloader):

            with torch.no_grad():
                logits = model(features)

            predictions = torch.argmax(logits, dim=1)
            compare = labels == predictions
            correct += torch.sum(compare)
            total_examples += len(compare)

        return (correct / total_examples).item()

    print(compute_accuracy(model, train_loader))
    print(compute_accuracy(model, test_loader))

    # A.8 Saving and loading models
    torch.save(model.state_dict(), f"{tmp_dir}/model.pth")  # was "model.pth"
    model = NeuralNetwork(2, 2)  # needs to match the original model exactly
    print(model.load_state_dict(torch.load(f"{tmp_dir}/model.pth", weights_only=True)))
    torch.set_printoptions(profile="default")  # added: leave the print options as they were
    return outputs


def test_appendix_a_part1(lib, tmp_path):
    out, outputs = h.printed(program, lib, tmp_path)
    text = h.as_torch_text(out)
    body = text.split("\n", 1)[1]  # the version line differs
    assert body.startswith(RECORDED)
    rest = body[len(RECORDED):]
    # the first printed weight is the library's own init; the second is the NumPy init, recorded from PyTorch
    assert rest.split("Parameter containing:")[2].split("\n5\n")[0] == RECORDED_INIT
    batches = rest.split("\n5\n")[1].split("Epoch:")[0]
    assert batches.count("Batch ") == 5 and batches.count("Batch 3:") == 1  # 2+2+1, then 2+2 with drop_last
    losses = [float(line.rsplit(" ", 1)[1]) for line in rest.splitlines() if line.startswith("Epoch:")]
    assert len(losses) == 6 and losses[-1] < losses[0]
    assert rest.splitlines()[-3:] == ["1.0", "1.0", "<All keys matched successfully>"]
    assert outputs.argmax(dim=1).tolist() == [0, 0, 0, 1, 1]
