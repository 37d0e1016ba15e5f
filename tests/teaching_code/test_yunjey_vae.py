"""Port of yunjey's "PyTorch Tutorial": 03-advanced, variational autoencoder.

Source: github.com/yunjey/pytorch-tutorial, tutorials/03-advanced/variational_autoencoder/main.py (commit
78c6afe681c4ff5095ef13662c02a7e369b1bcbd): a fully connected VAE (encode to mu and log_var, the
reparameterisation `mu + eps * std` with `torch.randn_like`, a sigmoid decoder), the loss
`F.binary_cross_entropy(..., size_average=False)` plus the closed-form KL divergence, Adam, losses printed
every 10 steps, then under `no_grad` images decoded from random codes and reconstructions concatenated with
their inputs. Code as the tutorial. Changes:
- MNIST -> synthetic 28x28 images in [0, 1] (`helpers.class_images`); `shuffle=True` -> a NumPy permutation
  sampler (the same order in both libraries);
- `torch.randn_like`, `torch.randn` and the initial weights -> NumPy draws (PyTorch's distributions);
- sizes shrunk (h_dim 64, z_dim 8, 2 epochs of 8 batches of 32); `save_image` (torchvision) -> dropped, the
  images it would save are returned; the printed losses are held to values recorded from PyTorch 2.13.
"""

from __future__ import annotations

import os
import warnings

import numpy as np
import teaching_helpers as h

# the printed (reconstruction, KL) losses, recorded from PyTorch 2.13
RECORDED = [17253.6562, 8.3289, 16834.2188, 15.6347, 16389.4961, 34.6981, 15626.6533, 79.8666]


def program(torch, sample_dir):
    nn = torch.nn
    F = torch.nn.functional
    rng = np.random.default_rng(5)  # added: the NumPy stream of the random draws

    # Device configuration
    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')

    # Create a directory if not exists
    if not os.path.exists(sample_dir):
        os.makedirs(sample_dir)

    # Hyper-parameters
    image_size = 784
    h_dim = 64  # was 400
    z_dim = 8  # was 20
    num_epochs = 2  # was 15
    batch_size = 32  # was 128
    learning_rate = 1e-3

    # MNIST dataset (synthetic images here)
    images, labels = h.class_images(256, 1, 28, 10, seed=4)
    dataset = torch.utils.data.TensorDataset(torch.tensor(images), torch.tensor(labels))

    # Data loader
    data_loader = torch.utils.data.DataLoader(dataset=dataset,
                                              batch_size=batch_size,
                                              sampler=h.NumpyShuffle(len(dataset), seed=6))  # was shuffle=True

    # VAE model
    class VAE(nn.Module):
        def __init__(self, image_size=784, h_dim=400, z_dim=20):
            super(VAE, self).__init__()
            self.fc1 = nn.Linear(image_size, h_dim)
            self.fc2 = nn.Linear(h_dim, z_dim)
            self.fc3 = nn.Linear(h_dim, z_dim)
            self.fc4 = nn.Linear(z_dim, h_dim)
            self.fc5 = nn.Linear(h_dim, image_size)

        def encode(self, x):
            h = F.relu(self.fc1(x))
            return self.fc2(h), self.fc3(h)

        def reparameterize(self, mu, log_var):
            std = torch.exp(log_var/2)
            eps = torch.tensor(rng.standard_normal(std.shape, dtype=np.float32))  # was torch.randn_like(std)
            return mu + eps * std

        def decode(self, z):
            h = F.relu(self.fc4(z))
            return F.sigmoid(self.fc5(h))

        def forward(self, x):
            mu, log_var = self.encode(x)
            z = self.reparameterize(mu, log_var)
            x_reconst = self.decode(z)
            return x_reconst, mu, log_var

    model = VAE(h_dim=h_dim, z_dim=z_dim).to(device)  # the sizes as keywords (the defaults were the sizes)
    h.numpy_init(torch, model, seed=8)  # added
    optimizer = torch.optim.Adam(model.parameters(), lr=learning_rate)

    # Start training
    saved = []
    for epoch in range(num_epochs):
        for i, (x, _) in enumerate(data_loader):
            # Forward pass
            x = x.to(device).view(-1, image_size)
            x_reconst, mu, log_var = model(x)

            # Compute reconstruction loss and kl divergence
            # For KL divergence, see Appendix B in VAE paper or http://yunjey47.tistory.com/43
            reconst_loss = F.binary_cross_entropy(x_reconst, x, size_average=False)
            kl_div = - 0.5 * torch.sum(1 + log_var - mu.pow(2) - log_var.exp())

            # Backprop and optimize
            loss = reconst_loss + kl_div
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

            if (i+1) % 4 == 0:  # was 10
                print("Epoch[{}/{}], Step [{}/{}], Reconst Loss: {:.4f}, KL Div: {:.4f}"
                      .format(epoch+1, num_epochs, i+1, len(data_loader), reconst_loss.item(), kl_div.item()))

        with torch.no_grad():
            # Save the sampled images
            z = torch.tensor(rng.standard_normal((batch_size, z_dim), dtype=np.float32)).to(device)  # was randn
            out = model.decode(z).view(-1, 1, 28, 28)
            saved.append(out)  # was save_image(out, os.path.join(sample_dir, 'sampled-{}.png'.format(epoch+1)))

            # Save the reconstructed images
            out, _, _ = model(x)
            x_concat = torch.cat([x.view(-1, 1, 28, 28), out.view(-1, 1, 28, 28)], dim=3)
            saved.append(x_concat)  # was save_image(x_concat, ...'reconst-{}.png'...)
    return saved


def test_variational_autoencoder(lib, tmp_path):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out, saved = h.printed(program, lib, str(tmp_path / "samples"))
    assert any("size_average and reduce args will be deprecated" in str(w.message) for w in caught)
    lines = out.splitlines()
    assert len(lines) == 4 and lines[0].startswith("Epoch[1/2], Step [4/8], Reconst Loss: ")
    np.testing.assert_allclose(h.floats_in(out), RECORDED, rtol=2e-4)
    assert [tuple(s.shape) for s in saved] == [(32, 1, 28, 28), (32, 1, 28, 56)] * 2
    assert all(0.0 <= s.min().item() and s.max().item() <= 1.0 for s in saved)
