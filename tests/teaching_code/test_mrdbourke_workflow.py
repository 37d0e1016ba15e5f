"""Port of Daniel Bourke's "Zero to Mastery: Learn PyTorch", 01. PyTorch Workflow Fundamentals.

Source: github.com/mrdbourke/pytorch-deep-learning, 01_pytorch_workflow.ipynb (commit
baa27b691617461c173ecf3439793cd8cde74e13), sections 1-5: data from `torch.arange(...).unsqueeze(dim=1)`, a
train/test split, a `LinearRegressionModel` with two `nn.Parameter`s, predictions under
`torch.inference_mode()`, `nn.L1Loss` and `torch.optim.SGD(params=..., lr=0.01)`, the training loop with
`model.train()` / `model.eval()` and its printed losses, `state_dict()`, and saving and loading with
`torch.save(obj=..., f=...)` / `torch.load(f=...)`. Code as the notebook's cells, in order. Changes:
- `torch.randn(1, dtype=torch.float)` for the initial weight and bias -> NumPy draws wrapped by the library;
- the matplotlib plots, the notebook's bare expressions and `!ls` -> dropped; "models/" -> a temporary directory;
- the printed losses and learned parameters are held to values recorded from PyTorch 2.13.
"""

from __future__ import annotations

import numpy as np
import teaching_helpers as h

# every decimal the program prints, recorded from PyTorch 2.13 (parameters, predictions, the epochs' float32 losses
# printed in full: held to float32's tolerance, as the mean's summation order may differ in the last bit)
RECORDED = [
    0.3047, -1.04, 0.3047, -1.04, -0.7962, -0.7901, -0.784, -0.7779, -0.7718, -0.7657, -0.7596, -0.7536, -0.7475,
    -0.7414, 1.4941444396972656, 1.6783149242401123, 1.3789345026016235, 1.5436049699783325, 1.263724684715271,
    1.4088952541351318, 1.1485148668289185, 1.2741854190826416, 1.033305048942566, 1.1394755840301514,
    0.9180951118469238, 1.0047657489776611, 0.8028852343559265, 0.8700559735298157, 0.6876753568649292,
    0.7353461384773254, 0.5724654197692871, 0.6006361842155457, 0.45725542306900024, 0.46592625975608826, 0.6947,
    -0.04, 0.7, 0.3,
]


def program(torch, tmp_dir):
    from pathlib import Path

    nn = torch.nn
    draws = iter(np.random.default_rng(42).standard_normal(4).astype(np.float32))  # added (two models)

    # Create *known* parameters
    weight = 0.7
    bias = 0.3

    # Create data
    start = 0
    end = 1
    step = 0.02
    X = torch.arange(start, end, step).unsqueeze(dim=1)
    y = weight * X + bias

    # Create train/test split
    train_split = int(0.8 * len(X))  # 80% of data used for training set, 20% for testing
    X_train, y_train = X[:train_split], y[:train_split]
    X_test, y_test = X[train_split:], y[train_split:]

    # Create a Linear Regression model class
    class LinearRegressionModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.weights = nn.Parameter(torch.tensor([next(draws)], dtype=torch.float),  # was torch.randn(1, ...)
                                        requires_grad=True)
            self.bias = nn.Parameter(torch.tensor([next(draws)], dtype=torch.float),  # was torch.randn(1, ...)
                                     requires_grad=True)

        # Forward defines the computation in the model
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.weights * x + self.bias

    torch.manual_seed(42)
    model_0 = LinearRegressionModel()
    print(list(model_0.parameters()))
    print(model_0.state_dict())

    with torch.inference_mode():
        y_preds = model_0(X_test)
    print(f"Number of testing samples: {len(X_test)}")
    print(f"Number of predictions made: {len(y_preds)}")
    print(f"Predicted values:\n{y_preds}")

    # Create the loss function
    loss_fn = nn.L1Loss()  # MAE loss is same as L1Loss

    # Create the optimizer
    optimizer = torch.optim.SGD(params=model_0.parameters(), lr=0.01)

    torch.manual_seed(42)
    epochs = 100
    train_loss_values = []
    test_loss_values = []
    epoch_count = []

    for epoch in range(epochs):
        model_0.train()
        y_pred = model_0(X_train)
        loss = loss_fn(y_pred, y_train)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

        model_0.eval()
        with torch.inference_mode():
            test_pred = model_0(X_test)
            test_loss = loss_fn(test_pred, y_test.type(torch.float))
            if epoch % 10 == 0:
                epoch_count.append(epoch)
                train_loss_values.append(loss.detach().numpy())
                test_loss_values.append(test_loss.detach().numpy())
                print(f"Epoch: {epoch} | MAE Train Loss: {loss} | MAE Test Loss: {test_loss} ")

    print("The model learned the following values for weights and bias:")
    print(model_0.state_dict())
    print("\nAnd the original values for weights and bias are:")
    print(f"weights: {weight}, bias: {bias}")

    model_0.eval()
    with torch.inference_mode():
        y_preds = model_0(X_test)

    # 1. Create models directory
    MODEL_PATH = Path(tmp_dir) / "models"  # was Path("models")
    MODEL_PATH.mkdir(parents=True, exist_ok=True)
    MODEL_NAME = "01_pytorch_workflow_model_0.pth"
    MODEL_SAVE_PATH = MODEL_PATH / MODEL_NAME
    torch.save(obj=model_0.state_dict(), f=MODEL_SAVE_PATH)

    loaded_model_0 = LinearRegressionModel()
    loaded_model_0.load_state_dict(torch.load(f=MODEL_SAVE_PATH))
    loaded_model_0.eval()
    with torch.inference_mode():
        loaded_model_preds = loaded_model_0(X_test)
    print(y_preds == loaded_model_preds)
    return train_loss_values, test_loss_values


def test_workflow(lib, tmp_path):
    out, (train_losses, test_losses) = h.printed(program, lib, tmp_path)
    text = h.as_torch_text(out)
    assert "Number of predictions made: 10" in text and "Epoch: 90 | MAE Train Loss: " in text
    assert "requires_grad=True" in text and "OrderedDict" in text
    assert text.rstrip().endswith("tensor([" + ",\n        ".join(["[True]"] * 10) + "])")
    np.testing.assert_allclose(h.floats_in(text), RECORDED, rtol=1e-5, atol=1e-4)
    assert len(train_losses) == len(test_losses) == 10 and train_losses[-1] < train_losses[0]
