"""What share of a GPU's spec peaks a pass reaches: MFU and MBU, as engines and papers report them.

Model FLOPs utilisation (MFU) is the FLOPs a pass must do, over its time, as a share of the peak FLOP/s of
the format its matrix products run in (PaLM's definition, used for inference too). Memory bandwidth
utilisation (MBU) is the bytes a pass must read, weights and KV cache, over its time, as a share of the peak
memory bandwidth (Databricks' definition for decode). Both count the work the model needs, not what a
kernel happened to move, so an engine's overheads lower them.

In the spec-peak mode a pass takes exactly the longer of its compute and memory times, so whichever limit
sets it is reached in full (an MBU of 1 for a memory-bound decode step of the simple level); the calibrated
mode's times give the shares engines reach. Both are over all the GPUs of the setup.
"""

from __future__ import annotations

from dataclasses import dataclass

from calculators.passes import PassResult, Setup


@dataclass(frozen=True)
class Utilisation:
    """One pass and the shares of the spec peaks it reaches."""

    result: PassResult
    mfu: float  # model FLOPs utilisation: pass FLOPs / time / peak FLOP/s (all GPUs)
    mbu: float  # memory bandwidth utilisation: (weight + KV-cache bytes) / time / peak bandwidth (all GPUs)

    @property
    def time_s(self) -> float:
        """Seconds the pass takes, in the setup's mode."""
        return self.result.time_s

    @property
    def bound_time_s(self) -> float:
        """The spec-peak bound of the same pass."""
        return self.result.bound_time_s


def utilisation(setup: Setup, result: PassResult) -> Utilisation:
    """MFU and MBU of ``result``, a pass computed with ``setup``."""
    gpus = setup.total_gpus
    peak_flops = setup.gpu.peak_flops_per_s(setup.arithmetic) * gpus
    peak_bandwidth = setup.gpu.memory_bandwidth_bytes_per_s * gpus
    needed_bytes = result.weight_bytes + result.kv_cache_bytes
    return Utilisation(
        result,
        mfu=result.flops / result.time_s / peak_flops,
        mbu=needed_bytes / result.time_s / peak_bandwidth,
    )
