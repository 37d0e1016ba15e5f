"""Port of yunjey's "PyTorch Tutorial": 01-basics, linear regression.

Source: github.com/yunjey/pytorch-tutorial, tutorials/01-basics/linear_regression/main.py (commit
0500d3df5a2a8080ccfccbc00aca0eacc21818db): a one-feature `nn.Linear` fitted to a toy dataset with
`nn.MSELoss` and `torch.optim.SGD`, inputs from `torch.from_numpy`, the loss printed every 5 epochs, a
prediction through `.detach().numpy()`, and `torch.save(model.state_dict(), ...)`. Code as the tutorial.
Changes:
- initial weights -> NumPy draws from PyTorch's default distributions;
- the matplotlib plot -> dropped (the fitted line is checked instead); 'model.ckpt' -> a temporary directory;
- the printed losses are held to values recorded from PyTorch 2.13, and the saved checkpoint loads back.
"""

from __future__ import annotations

import numpy as np
import teaching_helpers as h

# the printed losses, recorded from PyTorch 2.13
RECORDED = [0.8766, 0.5645, 0.4378, 0.3862, 0.365, 0.3561, 0.3523, 0.3504, 0.3494, 0.3487, 0.3482, 0.3477]


def program(torch, tmp_dir):
    nn = torch.nn

    # Hyper-parameters
    input_size = 1
    output_size = 1
    num_epochs = 60
    learning_rate = 0.001

    # Toy dataset
    x_train = np.array([[3.3], [4.4], [5.5], [6.71], [6.93], [4.168],
                        [9.779], [6.182], [7.59], [2.167], [7.042],
                        [10.791], [5.313], [7.997], [3.1]], dtype=np.float32)

    y_train = np.array([[1.7], [2.76], [2.09], [3.19], [1.694], [1.573],
                        [3.366], [2.596], [2.53], [1.221], [2.827],
                        [3.465], [1.65], [2.904], [1.3]], dtype=np.float32)

    # Linear regression model
    model = nn.Linear(input_size, output_size)
    h.numpy_init(torch, model, seed=0)  # added

    # Loss and optimizer
    criterion = nn.MSELoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=learning_rate)

    # Train the model
    for epoch in range(num_epochs):
        # Convert numpy arrays to torch tensors
        inputs = torch.from_numpy(x_train)
        targets = torch.from_numpy(y_train)

        # Forward pass
        outputs = model(inputs)
        loss = criterion(outputs, targets)

        # Backward and optimize
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

        if (epoch+1) % 5 == 0:
            print('Epoch [{}/{}], Loss: {:.4f}'.format(epoch+1, num_epochs, loss.item()))

    # Plot the graph (the plot is dropped)
    predicted = model(torch.from_numpy(x_train)).detach().numpy()

    # Save the model checkpoint
    torch.save(model.state_dict(), f"{tmp_dir}/model.ckpt")  # was 'model.ckpt'
    return predicted, model


def test_linear_regression(lib, tmp_path):
    out, (predicted, model) = h.printed(program, lib, tmp_path)
    losses = [float(line.rsplit(" ", 1)[1]) for line in out.splitlines()]
    assert out.splitlines()[0].startswith("Epoch [5/60], Loss: ")
    np.testing.assert_allclose(losses, RECORDED, atol=1e-4)
    assert predicted.dtype == np.float32 and predicted.shape == (15, 1)
    state = lib.load(f"{tmp_path}/model.ckpt")
    assert list(state) == ["weight", "bias"]
    x = np.array([3.3, 4.4, 5.5, 6.71, 6.93, 4.168, 9.779, 6.182, 7.59, 2.167, 7.042, 10.791, 5.313, 7.997, 3.1])
    np.testing.assert_allclose(predicted[:, 0], x * state["weight"].item() + state["bias"].item(), rtol=1e-5)
