"""The primitive of ``mx.fast``'s kernels written in GPU source: CustomKernel.

Read alongside: mlx/fast_primitives.h (``CustomKernel``: what it holds and
its ``state``) and mlx/backend/common/metal_kernel.cpp (what builds it).
Read next: mlxref/core/fast.py (``metal_kernel``, the callable that builds
these nodes).

MLX's other fast primitives (RMSNorm, LayerNorm, RoPE,
ScaledDotProductAttention) exist only on the GPU; on the CPU MLX composes
ordinary ops instead, and so does mlxref (mlxref/core/fast.py). A
CustomKernel has no such composition: its computation is Metal source
that only a GPU compiles. MLX's CPU build still records the node while
``export_function`` traces, so a function holding a kernel can be exported
on one machine and run on another; mlxref does the same, and evaluating the
node raises the error MLX's CPU build raises.
"""

from .base import Primitive


class CustomKernel(Primitive):
    """The outputs of a kernel given as Metal source, which only a GPU runs.

    Its state is MLX's: the generated kernel's name and full source, the
    grid and threadgroup, which of ``{name}_shape``, ``_strides`` and
    ``_ndim`` each input's source reads (``shape_infos``),
    ``ensure_row_contiguous``, ``init_value``, the scalar arguments and
    shared memory of a precompiled CUDA kernel (none here), and the compile
    options (the math mode: 0 safe, 1 relaxed, 2 fast). MLX's node takes
    its output shapes and dtypes from the call that built it; mlxref's nodes
    read them from the primitive (``make_arrays``), so it holds them too,
    with the input shapes they were given for: a shapeless import replayed
    on other shapes raises MLX's error, since a kernel's output shapes cannot
    be inferred. No vjp, jvp or vmap, as in MLX.
    """

    mlx_has_vjp = False

    def __init__(self, kernel_name, source, grid, threadgroup, shape_infos,
                 ensure_row_contiguous, init_value, scalar_arguments, is_precompiled,
                 shared_memory, compile_options, input_shapes, shapes, dtypes):
        self.kernel_name, self.source = kernel_name, source
        self.grid, self.threadgroup = tuple(grid), tuple(threadgroup)
        self.shape_infos = tuple(tuple(info) for info in shape_infos)
        self.ensure_row_contiguous, self.init_value = ensure_row_contiguous, init_value
        self.scalar_arguments, self.is_precompiled = tuple(scalar_arguments), is_precompiled
        self.shared_memory, self.compile_options = shared_memory, compile_options
        self.input_shapes = tuple(tuple(s) for s in input_shapes)
        self.shapes = tuple(tuple(s) for s in shapes)
        self.dtypes = tuple(dtypes)

    def params(self):
        return {"kernel_name": self.kernel_name}

    def output_shapes(self, inputs):
        if tuple(x.shape for x in inputs) != self.input_shapes:
            raise ValueError(f"[Primitive::output_shapes] {self.name} cannot infer output shapes.")
        return list(self.shapes)

    def output_dtypes(self, inputs):
        return list(self.dtypes)

    def eval(self, inputs):
        raise RuntimeError(f"[gpu::eval] GPU backend is not available: {self.kernel_name} is "
                           "Metal source, which only MLX on a GPU runs (mlxref computes on the "
                           "CPU in Python).")

    def mlx_state(self):
        # MLX's callback lists the grid and threadgroup as three numbers each and
        # leaves out the optional init_value.
        return [self.kernel_name, self.source, *self.grid, *self.threadgroup,
                list(self.shape_infos), self.ensure_row_contiguous, list(self.scalar_arguments),
                self.is_precompiled, self.shared_memory, self.compile_options]
