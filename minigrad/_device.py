"""Devices as tutorials write them. Only the CPU exists; anything else is a clear error."""

from __future__ import annotations


class device:
    __slots__ = ("type", "index")

    def __init__(self, type="cpu", index: int | None = None):  # noqa: A002 - PyTorch's name
        if isinstance(type, device):
            type, index = type.type, type.index
        kind = str(type).split(":")[0]
        if kind != "cpu":
            raise RuntimeError(
                f"minigrad runs on the CPU only, so device '{type}' is not available.\n"
                "hint: drop the device argument or use device('cpu'); minigrad.cuda.is_available() is False."
            )
        self.type = "cpu"
        self.index = index

    def __repr__(self) -> str:
        return "device(type='cpu')" if self.index is None else f"device(type='cpu', index={self.index})"

    def __str__(self) -> str:
        return "cpu" if self.index is None else f"cpu:{self.index}"

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            try:
                other = device(other)
            except RuntimeError:
                return False
        return isinstance(other, device) and other.type == self.type

    def __hash__(self) -> int:
        return hash(self.type)


CPU = device("cpu")


def check(dev) -> None:
    """Validate a `device=` argument (None, 'cpu', device('cpu'))."""
    if dev is not None and not isinstance(dev, device):
        device(dev)


class _Cuda:
    """`minigrad.cuda`: answers the questions tutorials ask, and says no."""

    @staticmethod
    def is_available() -> bool:
        return False

    @staticmethod
    def device_count() -> int:
        return 0

    @staticmethod
    def manual_seed(seed: int) -> None:
        pass

    manual_seed_all = manual_seed

    @staticmethod
    def synchronize(device=None) -> None:
        pass


cuda = _Cuda()


class _Accelerator:
    """`minigrad.accelerator`: PyTorch's device-agnostic questions, answered as on a CPU-only machine."""

    @staticmethod
    def is_available() -> bool:
        return False

    @staticmethod
    def current_accelerator(check_available: bool = False) -> None:
        return None

    @staticmethod
    def device_count() -> int:
        return 0


accelerator = _Accelerator()


class _Flags:
    """A backend's switches: settable attributes (`cudnn.deterministic = True` is accepted and read back, as
    PyTorch accepts it on a CPU-only machine) and `is_available()`, which is False."""

    def __init__(self, name: str, **flags) -> None:
        self.__dict__.update(flags)
        self._name = name

    @staticmethod
    def is_available() -> bool:
        return False

    @staticmethod
    def is_built() -> bool:
        return False

    def __repr__(self) -> str:
        return f"<minigrad.backends.{self._name} (CPU only)>"


class _Backends:
    """`minigrad.backends`: cudnn's and the CUDA matmul's flags, mps's questions (nothing there but the CPU)."""

    def __init__(self) -> None:
        self.cudnn = _Flags("cudnn", enabled=True, benchmark=False, deterministic=False, allow_tf32=True)
        self.mps = _Flags("mps")
        self.cuda = _Flags("cuda", matmul=_Flags("cuda.matmul", allow_tf32=False,
                                                 allow_fp16_reduced_precision_reduction=True))


backends = _Backends()
