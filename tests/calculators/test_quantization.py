"""Quantisation recipes (calculators.quantization), decode tokens per second and the quantization chart.

Hand-worked cases use the calculators' own defaults (spec peaks, no KV-cache reads, simple level), where a
decode step is one weights operator timed by max(2 N B / peak, N x bytes / bandwidth): the nominal 8B model
has N = 8e9, an H100 SXM 989.4e12 FLOP/s in BF16 and 3.35e12 bytes/s.
"""

from __future__ import annotations

import pytest

from calculators import Scenario
from calculators.charts import ChartError, chart_data
from calculators.quantization import KV_FORMATS, RECIPES, crossover_batch, get_recipe
from calculators.setting import BOTH_MODES, using


def test_each_recipe_is_the_scenario_of_its_formats() -> None:
    """A recipe is only Setup options: the same step as Scenario called with those formats by hand."""
    cases = {
        "bf16": {},
        "w8a16": {"precision": "int8", "arithmetic_format": "bf16"},
        "w4a16": {"precision": "int4"},  # a storage-only format computes in BF16 by itself
        "w8a8-int8": {"precision": "int8"},
        "w8a8-fp8": {"precision": "fp8"},
    }
    for key, options in cases.items():
        ours = get_recipe(key).scenario("llama-3.1-8b", "h100-sxm")
        by_hand = Scenario("llama-3.1-8b", "h100-sxm", **options)  # type: ignore[arg-type]
        for batch in (1, 64, 512):
            assert ours.decode(batch, 1).time_s == by_hand.decode(batch, 1).time_s, (key, batch)
        assert ours.prefill(2000).time_s == by_hand.prefill(2000).time_s, key
    assert set(cases) | {"w4a4-fp4"} == set(RECIPES)


def test_weight_only_recipes_are_the_ones_computing_in_bf16() -> None:
    assert {key for key, recipe in RECIPES.items() if recipe.weight_only} == {"w8a16", "w4a16"}
    assert {recipe.arithmetic_format for recipe in RECIPES.values() if recipe.weight_only} == {"bf16"}


def test_the_kv_format_halves_the_bytes_per_cached_token() -> None:
    # Llama-3.1 8B: 2 (K and V) x 32 layers x 8 KV heads x 128 values x 2 bytes = 131,072 bytes in BF16,
    # 65,536 in FP8. The weights, and so the memory left for the cache, do not change.
    bf16 = get_recipe("w8a8-fp8").scenario("llama-3.1-8b", "h100-sxm", "bf16")
    fp8 = get_recipe("w8a8-fp8").scenario("llama-3.1-8b", "h100-sxm", "fp8")
    assert bf16.kv_bytes_per_token == 131_072
    assert fp8.kv_bytes_per_token == 65_536
    assert fp8.kv_budget_bytes == bf16.kv_budget_bytes
    budget = bf16.kv_budget_bytes
    assert bf16.max_batch(8000) == int(budget / (8000 * 131_072))
    assert fp8.max_batch(8000) == int(budget / (8000 * 65_536))


def test_an_fp8_cache_holds_about_twice_the_sequences_as_vllm_documents() -> None:
    """vLLM's quantized KV-cache page (v0.11.2, "Performance Impact"): the FP8 cache allows "approximately
    double the amount of space for KV cache allocation". Twice the sequences fit, give or take the one
    sequence lost to rounding down, whatever the recipe of the weights."""
    for key in ("bf16", "w4a16", "w8a8-fp8"):
        for model, gpu in (("llama-3.1-8b", "h100-sxm"), ("llama-3.1-70b", "h200")):
            if key == "bf16" and model == "llama-3.1-70b":
                continue  # 141 GB of weights: nothing fits on one H200 (tested below)
            bf16 = get_recipe(key).scenario(model, gpu, "bf16").max_batch(8000)
            fp8 = get_recipe(key).scenario(model, gpu, "fp8").max_batch(8000)
            assert 2 * bf16 <= fp8 <= 2 * bf16 + 1, (key, model)


def test_decode_tokens_per_s_by_hand() -> None:
    lesson = Scenario()  # nominal 8B, BF16, H100 SXM, spec peaks, weights only
    # Batch 1: 16e9 bytes / 3.35e12 bytes/s = 4.7761 ms a step, one token each: 209.375 tokens/s.
    assert lesson.decode_tokens_per_s() == pytest.approx(3.35e12 / 16e9, rel=1e-12)
    # Batch 64: compute 2 x 8e9 x 64 / 989.4e12 = 1.035 ms < 4.776 ms of reading: 64 tokens a step.
    assert lesson.decode_tokens_per_s(64) == pytest.approx(64 * 3.35e12 / 16e9, rel=1e-12)
    # Batch 512 is compute-bound: 2 x 8e9 x 512 / 989.4e12 = 8.2798 ms; 512 / that = 61,837.5 tokens/s, the
    # peak over 2N FLOPs per token (989.4e12 / 16e9), whatever the batch beyond the ridge.
    assert lesson.decode_tokens_per_s(512) == pytest.approx(989.4e12 / 16e9, rel=1e-12)


def test_weight_only_int4_buys_nothing_once_decode_is_compute_bound() -> None:
    """W4A16 reads 0.53125 bytes per weight (4.25 bits) but multiplies at the BF16 peak: at batch 512 both
    steps are the same 8.2798 ms of BF16 arithmetic; at batch 1 W4A16 reads 8e9 x 0.53125 = 4.25e9 bytes,
    1.2687 ms, 3.76 times faster than BF16's 4.7761 ms."""
    bf16, w4a16 = Scenario(), get_recipe("w4a16").scenario("dense-8b", "h100-sxm")
    assert w4a16.decode(512).time_s == bf16.decode(512).time_s == pytest.approx(2 * 8e9 * 512 / 989.4e12)
    assert w4a16.decode(1).time_s == pytest.approx(8e9 * 0.53125 / 3.35e12, rel=1e-12)
    assert bf16.decode(1).time_s / w4a16.decode(1).time_s == pytest.approx(2 / 0.53125, rel=1e-12)
    # FP8 arithmetic keeps a gain there: twice the peak, so half the compute-bound step.
    fp8 = get_recipe("w8a8-fp8").scenario("dense-8b", "h100-sxm")
    assert fp8.decode(512).time_s == pytest.approx(2 * 8e9 * 512 / 1978.9e12, rel=1e-12)


def test_max_decode_tokens_per_s_is_the_largest_fitting_batch_and_zero_when_none_fits() -> None:
    llama = Scenario("llama-3.1-8b", "h100-sxm", precision="fp8")
    largest = llama.max_batch(8000)
    assert largest > 0
    assert llama.max_decode_tokens_per_s(8000) == llama.decode_tokens_per_s(largest, 8000)
    # Llama-3.1 70B in BF16 is 141 GB of weights, more than 90% of an H200's 150.8 GB: nothing fits.
    too_big = Scenario("llama-3.1-70b", "h200")
    assert too_big.max_batch(8000) == 0
    assert too_big.max_decode_tokens_per_s(8000) == 0.0


@pytest.mark.parametrize("setting", BOTH_MODES, ids=lambda s: s.name)
def test_the_lessons_orderings_hold_in_both_modes(setting: object) -> None:
    """What the lesson teaches, in the course's setting and at spec peaks: W4A16 leads at batch 1, FP8 at a
    large batch, where W4A16's gain has almost gone; an FP8 cache doubles the room at a long context."""
    with using(setting):  # type: ignore[arg-type]
        bf16, w4a16, fp8 = (get_recipe(k).scenario("llama-3.1-8b") for k in ("bf16", "w4a16", "w8a8-fp8"))
        assert w4a16.decode(1, 1000).time_s < fp8.decode(1, 1000).time_s < bf16.decode(1, 1000).time_s
        assert fp8.decode(256, 1000).time_s < w4a16.decode(256, 1000).time_s
        assert w4a16.decode(256, 1000).time_s > 0.9 * bf16.decode(256, 1000).time_s
        assert fp8.prefill(4000).time_s < 0.7 * bf16.prefill(4000).time_s
        assert w4a16.prefill(4000).time_s > 0.95 * bf16.prefill(4000).time_s


def test_bad_recipes_and_formats_are_refused_with_the_fix() -> None:
    with pytest.raises(ValueError, match="recipe"):
        get_recipe("w4a8")
    with pytest.raises(ValueError, match="kv_format"):
        get_recipe("w4a16").scenario("llama-3.1-8b", "h100-sxm", "int4")
    with pytest.raises(ValueError, match="sets 'precision' itself"):
        get_recipe("w4a16").scenario("llama-3.1-8b", "h100-sxm", precision="fp8")
    with pytest.raises(ValueError, match="no tensor-core peak on NVIDIA A100"):
        get_recipe("w8a8-fp8").scenario("llama-3.1-8b", "a100-sxm-80gb")
    with pytest.raises(ValueError, match="no tensor-core peak"):
        get_recipe("w4a4-fp4").scenario("llama-3.1-8b", "h100-sxm")
    assert get_recipe("w4a4-fp4").scenario("llama-3.1-8b", "b200").setup.arithmetic == "fp4"
    assert KV_FORMATS == ("bf16", "fp8")


# --- the chart ---------------------------------------------------------------------------------------------
def test_the_chart_divides_bf16_by_each_recipe_and_marks_what_fits() -> None:
    data = chart_data("quantization-speedup", max_batch=512)
    rows = data.datasets["points"]
    assert {row["series"] for row in rows} == {"W4A16", "W8A8-FP8"}
    w4a16 = [row for row in rows if row["series"] == "W4A16"]
    speedups = [row["speedup"] for row in w4a16]
    assert speedups == sorted(speedups, reverse=True)  # the weight-only gain only shrinks with the batch
    bf16, recipe = Scenario("llama-3.1-8b", ignore_memory=True), RECIPES["w4a16"].scenario(ignore_memory=True)
    assert w4a16[0]["speedup"] == bf16.decode(1, 1000).time_s / recipe.decode(1, 1000).time_s
    largest = recipe.max_batch(1000)
    assert all((row["fits"] == "fits") == (row["batch"] <= largest) for row in w4a16)
    assert "Llama-3.1 8B" in data.caption
    assert "1,000 tokens" in data.caption


def test_the_chart_marks_where_bf16_itself_stops_fitting() -> None:
    # At 8,000 tokens BF16 holds far fewer sequences than the lesson's chart plots (to 128): the limit is
    # drawn, said in the caption and in the table, and every row past it says BF16 does not fit.
    data = chart_data(
        "quantization-speedup", recipes=["w8a8-fp8"], kv_format="fp8", context=8000, max_batch=128
    )
    most = Scenario("llama-3.1-8b", ignore_memory=True).max_batch(8000)
    assert 1 <= most < 128
    assert data.datasets["bf16_limit"] == [{"batch": most, "label": f"BF16 fits up to {most:,}"}]
    assert f"BF16 itself holds at most {most:,} sequences" in data.caption
    assert all((row["bf16_fits"] == "fits") == (row["batch"] <= most) for row in data.datasets["points"])
    assert any(row[4].endswith("(does not fit)") for row in data.table_rows)
    # Where BF16 holds every plotted batch there is nothing to mark.
    short = chart_data("quantization-speedup", max_batch=64)
    assert short.datasets["bf16_limit"] == []
    assert "BF16 itself" not in short.caption


def test_the_chart_shows_the_fp8_cache_alone_only_beside_a_bf16_cache() -> None:
    data = chart_data("quantization-speedup", recipes=["bf16"], kv_format="fp8", context=8000, max_batch=64)
    series = {row["series"] for row in data.datasets["points"]}
    assert series == {"BF16, FP8 KV cache"}
    gains = [row["speedup"] for row in data.datasets["points"]]
    assert gains == sorted(gains)  # the cache's share of a step, and so the gain, grows with the batch
    with pytest.raises(ChartError, match="baseline itself"):
        chart_data("quantization-speedup", recipes=["bf16", "w4a16"])
    with pytest.raises(ChartError, match="unknown recipe 'int4'"):
        chart_data("quantization-speedup", recipes=["int4"])
    with pytest.raises(ChartError, match="listed twice"):
        chart_data("quantization-speedup", recipes=["w4a16", "w4a16"])
    with pytest.raises(ChartError, match="no tensor-core peak"):
        chart_data("quantization-speedup", gpu="a100-sxm-80gb", recipes=["w8a8-fp8"])


# --- where an arithmetic recipe overtakes a weight-only one -------------------------------------------------
def test_fp8_overtakes_w4a16_at_half_the_bf16_ridge_at_spec_peaks() -> None:
    """Nominal 8B, weights only, spec peaks. W4A16 at batch B: max(2 x 8e9 B / 989.4e12, 8e9 x 0.53125 /
    3.35e12); W8A8-FP8: max(2 x 8e9 B / 1978.9e12, 8e9 / 3.35e12) = 2.3881 ms up to B = 295. W4A16 is
    compute-bound from B = 79 and passes 2.3881 ms between 147 (2.3772 ms) and 148 (2.3933 ms): the batch
    989.4 / (2 x 3.35) = 147.7, half the BF16 ridge, rounded up."""
    assert crossover_batch("dense-8b", "h100-sxm", "w4a16", "w8a8-fp8") == 148
    w4a16 = get_recipe("w4a16").scenario("dense-8b", "h100-sxm")
    fp8 = get_recipe("w8a8-fp8").scenario("dense-8b", "h100-sxm")
    assert w4a16.decode(147).time_s < fp8.decode(147).time_s < w4a16.decode(148).time_s


@pytest.mark.parametrize("setting", BOTH_MODES, ids=lambda s: s.name)
def test_the_crossover_is_the_first_batch_a_scan_finds(setting: object) -> None:
    with using(setting):  # type: ignore[arg-type]
        for model, gpu in (("llama-3.1-8b", "h100-sxm"), ("llama-3.1-70b", "h200")):
            found = crossover_batch(model, gpu, "w4a16", "w8a8-fp8", 1000)
            w4a16 = get_recipe("w4a16").scenario(model, gpu, ignore_memory=True)
            fp8 = get_recipe("w8a8-fp8").scenario(model, gpu, ignore_memory=True)
            scan = next(
                b for b in range(1, 1024) if fp8.decode(b, 1000).time_s < w4a16.decode(b, 1000).time_s
            )
            assert found == scan, (model, gpu)


def test_the_crossover_is_1_for_a_recipe_already_ahead_and_0_for_one_never_ahead() -> None:
    assert crossover_batch("llama-3.1-8b", "h100-sxm", "w8a8-fp8", "w4a16") == 1
    # W8A16 reads as many bytes as FP8 and computes at half its peak: never faster than FP8.
    assert crossover_batch("llama-3.1-8b", "h100-sxm", "w8a8-fp8", "w8a16") == 0
    with pytest.raises(ValueError, match="challenger"):
        crossover_batch("llama-3.1-8b", "h100-sxm", "w4a16", "fp8")


@pytest.mark.parametrize("setting", BOTH_MODES, ids=lambda s: s.name)
def test_the_simple_levels_weight_only_decode_is_optimistic_by_about_a_tenth(setting: object) -> None:
    """The lesson's stated limitation. Llama-3.1 8B keeps its embedding and output layer (128,256 x 4,096 =
    525M weights each) in BF16; the simple level reads all 8.03B weights in the weight format. In INT4 it
    reads 8.03e9 x 0.53125 = 4.27 GB where a step reads (8.03e9 - 1.05e9) x 0.53125 + 0.525e9 x 2 = 4.76 GB
    (the embedding is only looked up): 11% more, which the refined level counts. In FP8 the two errors cancel
    (8.03 GB either way), leaving the refined level's other differences, a few percent."""
    with using(setting):  # type: ignore[arg-type]

        def refined_over_simple(precision: str) -> float:
            simple = Scenario("llama-3.1-8b", precision=precision).decode(1, 1000).time_s
            refined = Scenario("llama-3.1-8b", precision=precision, level="refined").decode(1, 1000).time_s
            return refined / simple

        assert 1.05 < refined_over_simple("int4") < 1.2
        assert abs(refined_over_simple("fp8") - 1) < 0.06


@pytest.mark.parametrize("setting", BOTH_MODES)
def test_the_chart_and_the_crossover_count_the_level_the_lesson_quotes(setting: object) -> None:
    """The lesson quotes the refined level (the output layer read in BF16, as checkpoints keep it): its chart
    and its crossover batch must be the refined Scenario's, not the simple one's a tenth faster W4A16."""
    with using(setting):  # type: ignore[arg-type]
        rows = chart_data("quantization-speedup", max_batch=16, level="refined").datasets["points"]
        first = next(row for row in rows if row["series"] == "W4A16" and row["batch"] == 1)
        bf16 = Scenario("llama-3.1-8b", level="refined", ignore_memory=True)
        w4a16 = Scenario("llama-3.1-8b", precision="int4", level="refined", ignore_memory=True)
        assert first["speedup"] == bf16.decode(1, 1000).time_s / w4a16.decode(1, 1000).time_s
        simple = chart_data("quantization-speedup", max_batch=16).datasets["points"]
        assert (
            next(r for r in simple if r["series"] == "W4A16" and r["batch"] == 1)["speedup"]
            > first["speedup"]
        )
        refined = crossover_batch("llama-3.1-8b", "h100-sxm", "w4a16", "w8a8-fp8", 1000, level="refined")
        assert (
            w4a16.decode(refined, 1000).time_s
            > Scenario("llama-3.1-8b", precision="fp8", level="refined", ignore_memory=True)
            .decode(refined, 1000)
            .time_s
        )
        assert refined != crossover_batch("llama-3.1-8b", "h100-sxm", "w4a16", "w8a8-fp8", 1000)
