"""Port of d2l.ai "Padding and Stride" (PyTorch tab): output shapes of convolutions.

Source: github.com/d2l-ai/d2l-en, chapter_convolutional-neural-networks/padding-and-strides.md (commit
23d7a5ae), published as d2l.ai/chapter_convolutional-neural-networks/padding-and-strides.html.
The chapter's four cells, verbatim (`torch.rand(size=(8, 8))` included: only shapes are shown); the
shapes the chapter prints are asserted. No changes.
"""

from __future__ import annotations


def test_output_shapes_with_padding_and_stride(lib):
    torch, nn = lib, lib.nn

    def comp_conv2d(conv2d, X):
        # (1, 1) indicates that batch size and the number of channels are both 1
        X = X.reshape((1, 1) + X.shape)
        Y = conv2d(X)
        # Strip the first two dimensions: examples and channels
        return Y.reshape(Y.shape[2:])

    # 1 row and column is padded on either side, so a total of 2 rows or columns are added
    conv2d = nn.LazyConv2d(1, kernel_size=3, padding=1)
    X = torch.rand(size=(8, 8))
    assert comp_conv2d(conv2d, X).shape == (8, 8)

    conv2d = nn.LazyConv2d(1, kernel_size=(5, 3), padding=(2, 1))
    assert comp_conv2d(conv2d, X).shape == (8, 8)

    conv2d = nn.LazyConv2d(1, kernel_size=3, padding=1, stride=2)
    assert comp_conv2d(conv2d, X).shape == (4, 4)

    conv2d = nn.LazyConv2d(1, kernel_size=(3, 5), padding=(0, 1), stride=(3, 4))
    assert comp_conv2d(conv2d, X).shape == (2, 2)
    assert str(comp_conv2d(conv2d, X).shape).endswith("Size([2, 2])")
