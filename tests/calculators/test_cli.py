"""``python -m calculators``: readable tables, JSON for scripts, exit status 2 with a message on bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from calculators import GPUS, MODELS
from calculators.cli import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    code, out, err = run(capsys, *argv, "--json")
    assert (code, err) == (0, "")
    return json.loads(out)


def test_module_entry_point_answers_the_lesson_in_a_table() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "calculators", "phases"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert "4.78 ms" in text  # a decode step
    assert "295.3 FLOP/byte" in text  # the ridge point
    assert "295 tokens" in text  # prompt tokens per decode step
    assert "6.77 steps" in text  # a 2,000-token prefill
    assert "32.3 ms" in text  # time to first token
    prefill_row = next(line for line in text.splitlines() if line.startswith("prefill "))
    decode_row = next(line for line in text.splitlines() if line.startswith("decode step"))
    assert prefill_row.split()[-1] == "compute"
    assert decode_row.split()[-1] == "memory"


@pytest.mark.parametrize("where", ["before", "after"])
def test_phases_json_has_the_lessons_numbers(capsys: pytest.CaptureFixture[str], where: str) -> None:
    argv = ["--json", "phases"] if where == "before" else ["phases", "--json"]
    code, out, err = run(capsys, *argv)
    assert (code, err) == (0, "")
    record = json.loads(out)
    assert (record["model"], record["gpu"], record["precision"], record["level"]) == (
        "dense-8b",
        "h100-sxm",
        "bf16",
        "simple",
    )
    assert record["decode_step"]["time_s"] == pytest.approx(4.78e-3, rel=0.005)
    assert record["decode_step"]["bound"] == "memory"
    assert record["prefill"]["time_s"] == pytest.approx(2 * 8e9 * 2000 / 989.4e12)
    assert record["prefill"]["intensity_flop_per_byte"] == pytest.approx(2000)
    assert record["ridge_point_flop_per_byte"] == pytest.approx(295.3, rel=1e-3)
    assert record["prompt_tokens_per_decode_step"] == pytest.approx(295, rel=0.005)
    assert record["request"]["prefill_cost_in_decode_steps"] == pytest.approx(6.8, rel=0.005)
    assert record["request"]["decode_steps"] == 255  # default 256 output tokens


def test_phases_options(capsys: pytest.CaptureFixture[str]) -> None:
    record = run_json(
        capsys,
        "phases",
        "--model",
        "llama-3.1-70b",
        "--gpu",
        "h200",
        "--tensor-parallel",
        "2",
        "--level",
        "refined",
        "--prompt",
        "4096",
        "--output",
        "2",
        "--batch",
        "4",
    )
    assert (record["model"], record["tensor_parallel"], record["level"]) == ("llama-3.1-70b", 2, "refined")
    # decode at context 4097: (4097 read + 1 written) x 327,680 B x 4 sequences of KV traffic
    assert record["decode_step"]["kv_cache_bytes"] == 4098 * 327_680 * 4
    assert record["prefill"]["tokens_processed"] == 4 * 4096


def test_custom_gpu_by_numbers(capsys: pytest.CaptureFixture[str]) -> None:
    record = run_json(capsys, "phases", "--gpu-tflops", "1000", "--gpu-tbps", "4", "--gpu-gb", "100")
    assert record["gpu"] == "custom"
    assert record["ridge_point_flop_per_byte"] == pytest.approx(250)  # 1000 TFLOP/s / 4 TB/s
    assert record["decode_step"]["time_s"] == pytest.approx(16e9 / 4e12)  # 4 ms
    fp8 = run_json(
        capsys, "phases", "--precision", "fp8", *("--gpu-tflops", "1000", "--gpu-fp8-tflops", "2000"),
        *("--gpu-tbps", "4", "--gpu-gb", "100"),
    )  # fmt: skip
    assert fp8["decode_step"]["time_s"] == pytest.approx(8e9 / 4e12)


def test_fp8_weights_on_a_gpu_without_fp8_maths_compute_in_bf16(capsys: pytest.CaptureFixture[str]) -> None:
    # An A100 has no FP8 tensor cores: FP8 weights are dequantised and the maths runs in BF16 (weight-only),
    # so the ridge point is BF16's, 312 TFLOP/s / 2.039 TB/s = 153.0 FLOP/byte (it used to exit on FP8's peak)
    record = run_json(capsys, "phases", "--gpu", "a100-sxm-80gb", "--precision", "fp8")
    assert record["weight_format"] == "fp8"
    assert record["ridge_point_flop_per_byte"] == pytest.approx(312 / 2.039)
    assert record["prefill"]["time_s"] == pytest.approx(3.2e13 / 312e12)  # BF16: 103 ms
    assert record["decode_step"]["time_s"] == pytest.approx(8e9 / 2.039e12)  # 8 GB of FP8 weights: 3.92 ms


def test_custom_model_by_size(capsys: pytest.CaptureFixture[str]) -> None:
    record = run_json(capsys, "phases", "--params-billion", "70", "--gpu", "b200")
    assert record["model"] == "custom"
    assert record["decode_step"]["weight_bytes"] == 140e9
    assert record["decode_step"]["time_s"] == pytest.approx(140e9 / 8e12)  # 17.5 ms on a B200


def test_presets_table_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "presets")
    assert code == 0
    for key in [*GPUS, *MODELS]:
        assert key in out
    assert "989.4 TFLOP/s" in out  # H100 dense BF16, not the sparse 1,979
    record = run_json(capsys, "presets")
    assert {g["key"] for g in record["gpus"]} == set(GPUS)
    assert all(g["source"] for g in record["gpus"])
    assert all(m["source"] for m in record["models"])
    llama = next(m for m in record["models"] if m["key"] == "llama-3.1-8b")
    assert llama["params"] == 8_030_261_248
    assert llama["kv_cache_bytes_per_token_bf16"] == 131_072


def test_roofline_ridge_points_and_intensity(capsys: pytest.CaptureFixture[str]) -> None:
    records = run_json(capsys, "roofline", "--intensity", "100")
    by_gpu = {r["gpu"]: r for r in records}
    assert set(by_gpu) == set(GPUS)
    h100 = by_gpu["h100-sxm"]
    assert h100["ridge_point_flop_per_byte"] == pytest.approx(295.3, rel=1e-3)
    assert h100["bound"] == "memory"  # 100 < 295
    assert h100["attainable_flops_per_s"] == pytest.approx(100 * 3.35e12)
    code, out, _ = run(capsys, "roofline", "--gpu", "rtx-4090", "--intensity", "200")
    assert code == 0
    assert "compute-bound" in out  # 200 > 163.9
    assert "165.2 TFLOP/s" in out
    # FP8 lists only the GPUs that have it
    fp8 = {r["gpu"] for r in run_json(capsys, "roofline", "--precision", "fp8")}
    assert "a100-sxm-80gb" not in fp8
    assert "h100-sxm" in fp8


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["phases", "--prompt", "0"], ["prompt_tokens", "0"]),
        (["phases", "--batch", "-3"], ["batch", "-3"]),
        (["phases", "--gpu", "h100"], ["unknown GPU 'h100'", "h100-sxm"]),
        (["phases", "--model", "llama-8b"], ["unknown model 'llama-8b'", "llama-3.1-8b"]),
        (["phases", "--model", "llama-3.1-405b", "--gpu", "h100-sxm"], ["does not fit"]),
        (["phases", "--gpu-tflops", "1000"], ["--gpu-tbps", "--gpu-gb"]),
        (["phases", "--gpu-tflops", "nan", "--gpu-tbps", "4", "--gpu-gb", "80"], ["bf16_tflops", "nan"]),
        (["phases", "--params-billion", "70", "--level", "refined"], ["refined", "simple"]),
        (["phases", "--compute-efficiency", "1.5"], ["compute_efficiency", "1.5"]),
        (["roofline", "--intensity", "-1"], ["intensity_flop_per_byte", "-1"]),
        (["roofline", "--gpu", "a100-sxm-80gb", "--precision", "fp8"], ["precision 'fp8'"]),
    ],
)
def test_bad_input_exits_2_with_the_message_on_stderr(
    capsys: pytest.CaptureFixture[str], argv: list[str], words: list[str]
) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert out == ""
    assert err.startswith("error: ")
    for word in words:
        assert word in err


def test_argparse_errors_also_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "phases", "--level", "fast")
    assert (code, out) == (2, "")
    assert "'fast'" in err
    assert err.startswith("usage: ")
    # with --json even a command line argparse cannot read answers in JSON on stdout
    code, out, err = run(capsys, "phases", "--prompt", "many", "--json")
    assert (code, err) == (2, "")
    assert "--prompt" in json.loads(out)["error"]


def test_phases_shows_each_operator_and_the_memory(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys, "phases", "--model", "llama-3.1-70b", "--tensor-parallel", "4", "--level", "refined"
    )
    assert code == 0
    for name in ("QKV projection", "attention (prefill)", "MLP", "output layer (1 logits row)"):
        assert name in out
    assert "tensor-parallel all-reduces (161 x" in out  # after the embedding, attention and each MLP
    assert "sequences of 2,256 tokens fit" in out
    record = run_json(
        capsys, "phases", "--model", "mixtral-8x7b", "--tensor-parallel", "2", "--prompt", "1024", "--level",
        "refined",
    )  # fmt: skip
    times = [op["time_s"] for op in record["operators"]["prefill"]]
    assert sum(times) == pytest.approx(record["prefill"]["time_s"])
    assert record["prefill"]["communication_time_s"] > 0


def test_mixtral_prefill_on_two_h100s_uses_active_parameters(capsys: pytest.CaptureFixture[str]) -> None:
    # The example: 1,024 tokens x 2 experts of 8 touch every expert, so the simple level reads all
    # 46.7e9 weights (93.4 GB / (2 x 3.35 TB/s) = 13.94 ms, memory-bound) and does 2 x 12.88e9 x 1,024
    # = 26.4 TFLOP (13.3 ms at 2 x 989.4 TFLOP/s), not the 95.7 TFLOP and 48.3 ms of counting every expert.
    record = run_json(
        capsys, "phases", "--model", "mixtral-8x7b", "--tensor-parallel", "2", "--prompt", "1024"
    )
    assert record["prefill"]["flops"] == pytest.approx(2 * 12_879_925_248 * 1024)
    assert record["prefill"]["time_s"] == pytest.approx(2 * 46_702_792_704 / (2 * 3.35e12), rel=1e-6)
    assert record["prefill"]["time_s"] == pytest.approx(13.94e-3, rel=1e-3)


def test_speculative_json_has_the_hand_worked_speedup(capsys: pytest.CaptureFixture[str]) -> None:
    # n-gram drafting at batch 1 on the lesson's setup: verification costs one decode step, so the speed-up is
    # the expected tokens per step, (1 - 0.8^5) / 0.2 = 3.3616; the break-even batch is 199 (see
    # test_calculators_speculative.py for the arithmetic).
    record = run_json(capsys, "speculative", "--draft", "ngram", "--acceptance", "0.8", "--proposed", "4")
    assert record["expected_tokens_per_step"] == pytest.approx(3.3616)
    assert record["speedup"] == pytest.approx(3.3616)
    assert record["break_even_batch"] == 199
    assert record["drafter"] == "ngram"
    assert record["mode"] == "peak"


def test_speculative_table_with_a_draft_model_and_calibrated_mode(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(
        capsys, "speculative", "--gpu", "h200", "--model", "llama-3.1-70b", "--precision", "fp8",
        "--draft", "llama-3.1-8b", "--acceptance", "0.8", "--mode", "calibrated", "--level", "refined",
    )  # fmt: skip
    assert (code, err) == (0, "")
    assert "draft model llama-3.1-8b" in out
    assert "speed-up (calibrated estimate)" in out
    assert "speed-up at spec peaks" in out
    assert "slower than plain from batch" in out


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--acceptance", "1"], ["acceptance must be in [0, 1)", "below 1"]),
        (["--acceptance", "0.8", "--proposed", "0"], ["proposed must be a whole number"]),
        (["--acceptance", "0.8", "--draft", "llama-8"], ["unknown model", "Did you mean"]),
        (["--acceptance", "0.8", "--draft", "model"], ["--draft takes a model preset"]),
    ],
)
def test_speculative_bad_input_names_the_field(
    capsys: pytest.CaptureFixture[str], argv: list[str], words: list[str]
) -> None:
    code, out, err = run(capsys, "speculative", *argv)
    assert (code, out) == (2, "")
    for word in words:
        assert word in err
