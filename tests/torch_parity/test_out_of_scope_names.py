"""Census names that cannot apply to a CPU NumPy library (CUDA, GPU backends, distributed, AMP, compilation,
quantization, profiling, graph capture, C++ extensions, RPC futures): each one either gets what a CPU-only PyTorch
2.13 gives (a value, or its error) or raises minigrad's clear "does not implement" error. The names are the census's
out-of-scope rows (tests/teaching_code/CENSUS.md), listed here literally."""

from __future__ import annotations

import pytest

import minigrad

# called (or read) in both libraries: the same value, or the same exception type and message
CPU_ANSWERS = {
    "torch.cuda.is_available": (), "torch.cuda.device_count": (), "torch.cuda.synchronize": (),
    "torch.cuda.manual_seed": (0,), "torch.cuda.manual_seed_all": (0,), "torch.cuda.empty_cache": (),
    "torch.cuda.memory_allocated": (), "torch.cuda.memory_reserved": (), "torch.cuda.max_memory_allocated": (),
    "torch.cuda.is_bf16_supported": (), "torch.cuda.current_device": (), "torch.cuda.get_device_name": (),
    "torch.cuda.get_device_capability": (), "torch.accelerator.is_available": (),
    "torch.accelerator.current_accelerator": (), "torch.accelerator.device_count": (),
    "torch.backends.mps.is_available": (), "torch.version.cuda": None, "torch.backends.cudnn.allow_tf32": None,
    "torch.backends.cudnn.benchmark": None, "torch.backends.cudnn.deterministic": None,
}
NOT_IMPLEMENTED = (
    "Tensor.bfloat16", "Tensor.pin_memory", "Tensor.record_stream", "nn.DataParallel",
    "nn.parallel.DistributedDataParallel", "nn.parallel.data_parallel", "nn.parallel.scatter",
    "torch._dynamo.config.suppress_errors", "torch.accelerator.device_index", "torch.accelerator.set_device_index",
    "torch.amp.GradScaler", "torch.amp.autocast", "torch.bfloat16", "torch.cuda.Event", "torch.cuda.Stream",
    "torch.cuda.amp.GradScaler", "torch.cuda.amp.autocast", "torch.cuda.amp.grad_scaler.GradScaler",
    "torch.cuda.current_stream", "torch.cuda.memory_summary", "torch.cuda.nccl.version",
    "torch.cuda.reset_peak_memory_stats", "torch.cuda.stream", "torch.distributed.ReduceOp.SUM",
    "torch.distributed.all_gather", "torch.distributed.all_reduce", "torch.distributed.autograd.backward",
    "torch.distributed.autograd.context", "torch.distributed.autograd.get_gradients", "torch.distributed.barrier",
    "torch.distributed.broadcast", "torch.distributed.destroy_process_group",
    "torch.distributed.device_mesh.init_device_mesh", "torch.distributed.get_backend",
    "torch.distributed.get_default_backend_for_device", "torch.distributed.get_rank",
    "torch.distributed.get_world_size", "torch.distributed.init_process_group", "torch.distributed.is_initialized",
    "torch.distributed.is_mpi_available", "torch.distributed.is_nccl_available", "torch.distributed.reduce_scatter",
    "torch.distributed.rpc.RRef", "torch.distributed.rpc.TensorPipeRpcBackendOptions",
    "torch.distributed.rpc.functions.async_execution", "torch.distributed.rpc.get_worker_info",
    "torch.distributed.rpc.init_rpc", "torch.distributed.rpc.remote", "torch.distributed.rpc.rpc_async",
    "torch.distributed.rpc.rpc_sync", "torch.distributed.rpc.shutdown", "torch.distributed.scatter",
    "torch.hub.download_url_to_file", "torch.jit.load", "torch.jit.script", "torch.jit.trace",
    "torch.multiprocessing.Process", "torch.multiprocessing.set_start_method", "torch.multiprocessing.spawn",
    "torch.onnx.export", "torch.profiler.ProfilerActivity.CPU", "torch.profiler.ProfilerActivity.CUDA",
    "torch.profiler.profile", "torch.profiler.record_function", "torch.profiler.schedule",
    "torch.profiler.tensorboard_trace_handler", "utils.data.distributed.DistributedSampler",
    "torch.autograd.profiler.profile", "torch.autograd.profiler.record_function.__enter__",
    "torch.autograd.profiler.record_function.__exit__", "torch.ops.profiler._record_function_enter",
    "torch.ops.profiler._record_function_exit", "torch._amp_foreach_non_finite_check_and_unscale_",
    "torch.classes.load_library", "torch.futures.Future", "torch.futures.wait_all", "torch.fx.Graph",
    "torch.fx.GraphModule", "torch.fx.Node", "torch.fx.Proxy", "torch.fx.Tracer", "torch.fx.node.Target",
    "torch.fx.node.map_arg", "torch.fx.proxy.GraphAppendingTracer", "torch.fx.replace_pattern",
    "torch.fx.symbolic_trace", "torch.fx.wrap",)


def _resolve(lib, name: str):
    root, _, rest = name.partition(".")
    where = {"torch": lib, "nn": lib.nn, "Tensor": lib.Tensor, "utils": lib.utils}[root]
    for part in rest.split("."):
        where = getattr(where, part)
    return where


def _outcome(lib, name: str, args):
    try:
        value = _resolve(lib, name)
        return ("value", value if args is None else value(*args))
    except Exception as e:  # noqa: BLE001 - the outcome compared is the exception's type and first line
        return (type(e).__name__, str(e).split("\n")[0])


@pytest.mark.parametrize("name", sorted(CPU_ANSWERS))
def test_cpu_only_answer_is_torchs(torch, name):
    assert _outcome(minigrad, name, CPU_ANSWERS[name]) == _outcome(torch, name, CPU_ANSWERS[name])


def test_set_device_says_there_is_no_cuda():
    """(PyTorch's CPU build fails inside its C bindings here, an AttributeError about `torch._C`.)"""
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        minigrad.cuda.set_device(0)


@pytest.mark.parametrize("name", NOT_IMPLEMENTED)
def test_out_of_scope_name_raises_does_not_implement(name):
    with pytest.raises(AttributeError) as e:
        _resolve(minigrad, name)
    if "._" not in name:  # a private module (torch._dynamo) is a plain missing attribute
        assert "minigrad does not implement" in str(e.value)
