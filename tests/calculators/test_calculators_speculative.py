"""Speculative decoding (calculators.speculative): hand-worked values, monotonicity, inputs, published
figures.

The hand-worked cases use the simple level at spec peaks, where a pass is one weights operator timed by
max(2 N T / peak, N x bytes / bandwidth), so every figure below can be redone with a pencil.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import pytest

from calculators import Scenario, custom_dense_model, get_model, make_setup, mixed_step
from calculators.charts import ChartError, chart_data
from calculators.expressions import evaluate
from calculators.setting import COURSE_SETTING, SPEC_PEAK, using
from calculators.speculative import (
    acceptance_for_tokens,
    best_proposed,
    break_even_batch,
    expected_tokens_per_step,
    heads_draft_share,
    speculative_decoding,
)

LESSON = make_setup("dense-8b", "h100-sxm")  # 32 layers; ridge 989.4 / 3.35 = 295.3 FLOP/byte


# --- expected tokens per verification step ----------------------------------------------------------------
@pytest.mark.parametrize(
    ("a", "k", "expected"),
    [
        (0.8, 4, 3.3616),  # (1 - 0.8^5) / 0.2 = (1 - 0.32768) / 0.2 = 3.3616
        (0.5, 1, 1.5),  # 1 + 0.5
        (0.5, 3, 1.875),  # 1 + 0.5 + 0.25 + 0.125
        (0.0, 7, 1.0),  # every proposal rejected: the target's own token only
        (0.9, 10, 6.8618940391),  # (1 - 0.9^11) / 0.1 = (1 - 0.31381059609) / 0.1
    ],
)
def test_expected_tokens_per_step_by_hand(a: float, k: int, expected: float) -> None:
    assert expected_tokens_per_step(a, k) == pytest.approx(expected, rel=1e-9)


def test_expected_tokens_grow_with_k_towards_one_over_one_minus_a() -> None:
    values = [expected_tokens_per_step(0.8, k) for k in range(1, 40)]
    assert values == sorted(values)
    assert values[-1] < 1 / (1 - 0.8) == pytest.approx(5.0)
    assert values[-1] == pytest.approx(5.0, rel=1e-3)


# --- the step's cost, by hand ---------------------------------------------------------------------------
def test_ngram_at_batch_one_speeds_up_by_the_expected_tokens() -> None:
    # Batch 1, k + 1 = 5 tokens: intensity 5 FLOP/byte, far below the ridge (295), so verification costs
    # exactly one decode step (the weights read once) and n-gram drafting costs nothing: speed-up = 3.3616.
    result = speculative_decoding(LESSON, acceptance=0.8, proposed=4, drafter="ngram")
    assert result.verify.time_s == pytest.approx(result.plain.time_s, rel=1e-12)
    assert result.draft_time_s == 0.0
    assert result.speedup == pytest.approx(3.3616, rel=1e-9)


def test_draft_heads_cost_a_layer_and_the_output_layer() -> None:
    # Each of the k = 4 draft steps runs one decoder layer and the target's output layer (EAGLE reuses the
    # target's; without it a head has no token to propose). Nominal 8B: N = 8e9, output layer V x h =
    # 128,256 x 4,096 = 525,336,576; a decoder layer (8e9 - 2 x 525,336,576) / 32 = 217,166,464. One draft
    # step reads 742,503,040 of the 8e9 weights: 0.09281288 of a decode step; four: 0.37125152.
    # Speed-up = 3.3616 / 1.37125152 = 2.45148.
    result = speculative_decoding(LESSON, acceptance=0.8, proposed=4, drafter="heads", draft_layers=1.0)
    assert result.draft_time_s == pytest.approx(0.37125152 * result.plain.time_s, rel=1e-9)
    assert result.speedup == pytest.approx(3.3616 / 1.37125152, rel=1e-9)
    # Two layers per step add one more decoder layer's share, 217,166,464 / 8e9 = 0.027145808, per step.
    two = speculative_decoding(LESSON, acceptance=0.8, proposed=4, drafter="heads", draft_layers=2.0)
    assert two.draft_time_s == pytest.approx((0.37125152 + 4 * 0.027145808) * two.plain.time_s, rel=1e-9)


def test_draft_model_matches_leviathans_improvement_factor() -> None:
    # A 7B draft for a 70B target (FP8, H200): every decode step is memory-bound and reads N x 1 byte, so the
    # draft step costs c = 7 / 70 = 0.1 of the target's. Leviathan et al. (2023), section 3: improvement
    # (1 - a^(k+1)) / ((1 - a)(k c + 1)) = 3.3616 / (4 x 0.1 + 1) = 3.3616 / 1.4 = 2.40114.
    target = make_setup(custom_dense_model(params_billion=70), "h200", precision="fp8")
    result = speculative_decoding(
        target, acceptance=0.8, proposed=4, drafter="model", draft_model=custom_dense_model(params_billion=7)
    )
    assert result.draft_time_s == pytest.approx(4 * 0.1 * result.plain.time_s, rel=1e-9)
    assert result.speedup == pytest.approx(3.3616 / 1.4, rel=1e-9)


def test_break_even_batch_by_hand() -> None:
    # n-gram, a = 0.8, k = 4. Plain decode stays memory-bound up to batch 295 (the ridge); the verifier's
    # 5 B tokens turn compute-bound past B = 295.3 / 5 = 59. Then speed-up = 3.3616 x (2N / bw) /
    # (2N x 5B / peak) = 3.3616 x 295.34 / (5 B), below 1 once B > 295.34 x 3.3616 / 5 = 198.57: B = 199.
    ridge = LESSON.ridge_point_flop_per_byte
    assert ridge == pytest.approx(295.34, abs=0.01)
    assert break_even_batch(LESSON, acceptance=0.8, proposed=4, drafter="ngram") == 199
    at_199 = speculative_decoding(LESSON, acceptance=0.8, proposed=4, batch=199, drafter="ngram")
    at_198 = speculative_decoding(LESSON, acceptance=0.8, proposed=4, batch=198, drafter="ngram")
    assert at_199.speedup < 1 <= at_198.speedup
    assert at_199.verify.bound == "compute"


def test_best_k_falls_as_the_batch_grows() -> None:
    # At batch 1 the verifier is free up to k + 1 = 295 tokens, so only the heads' k / 32 share limits k;
    # at batch 64 every extra proposal also costs verifier compute.
    at_one = best_proposed(LESSON, acceptance=0.8, batch=1)
    at_64 = best_proposed(LESSON, acceptance=0.8, batch=64)
    assert at_64.proposed < at_one.proposed
    for k in range(1, 17):
        other = speculative_decoding(LESSON, acceptance=0.8, proposed=k, batch=1)
        assert other.speedup <= at_one.speedup


@pytest.mark.parametrize("mode", ["peak", "calibrated"])
@pytest.mark.parametrize("level", ["simple", "refined"])
@pytest.mark.parametrize("context", [100, 1000, 4000])
def test_the_check_never_costs_less_than_a_plain_step(mode: str, level: str, context: int) -> None:
    # The check attends over the same caches as the plain step with k + 1 queries each and puts more tokens
    # through the weights, so it can never be cheaper, and the speed-up can never exceed E (n-gram drafting
    # is free). The calibrated decode fit has a fixed cost per sequence (1.28 us per layer, Vidur) that the
    # prefill fit lacks: before the floor, a check of 128 sequences at 4,000 tokens came out at 0.91 of a
    # plain step (calibrated, simple level), and the speed-up at 3.68, above the 3.36 tokens a step yields.
    options = {"level": level, "mode": mode, "kv_traffic": True, "ignore_memory": True}
    setup = make_setup("llama-3.1-8b", "h100-sxm", **options)
    for batch in (1, 16, 128, 512):
        result = speculative_decoding(
            setup, acceptance=0.8, proposed=4, batch=batch, context_tokens=context, drafter="ngram"
        )
        assert result.verify.time_s >= result.plain.time_s * (1 - 1e-12), (batch, result.verify.time_s)
        assert result.speedup <= result.expected_tokens_per_step * (1 + 1e-12), (batch, result.speedup)


def test_calibrated_8b_with_heads_never_breaks_even_at_short_contexts() -> None:
    # What the lesson says of the two modes: calibrated decode attention costs 1.28 us per sequence and layer
    # (Vidur's A100 fit), 41 us a step per sequence for Llama-3.1 8B's 32 layers, more than the ~20 us of
    # weights' arithmetic a token costs at the compute bound (2 x 8e9 / 790 TFLOP/s). The check pays it
    # once per sequence like the plain step, so the estimate levels off above 1 (about 1.3 at batch 512),
    # while the spec-peak bound, weights and cache reads only, turns into a slow-down near batch 200.
    with using(COURSE_SETTING):
        calibrated = Scenario("llama-3.1-8b", ignore_memory=True)
        speedups = [calibrated.speculative(0.8, 4, b, 100).speedup for b in (512, 4096, 16384)]
        assert speedups == sorted(speedups, reverse=True)
        assert speedups[0] < 1.5
        assert speedups[-1] > 1.2  # levelled off well above 1
    with using(SPEC_PEAK):
        assert 150 < Scenario("llama-3.1-8b").speculative_break_even_batch(0.8, 4, 100) < 250


# --- monotonicity -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("level", ["simple", "refined"])
@pytest.mark.parametrize("drafter", ["heads", "ngram"])
def test_speedup_falls_as_the_batch_grows_and_ends_below_one(level: str, drafter: str) -> None:
    # At spec peaks with a short context the weights dominate: once batch x (k + 1) passes the ridge, the
    # verifier pays for every rejected token in FLOPs and the speed-up tends to E / (k + 1) = 2.77 / 5 < 1.
    # (A long context at a huge batch keeps both passes memory-bound on KV reads, which the verifier
    # shares among its k + 1 tokens: then the speed-up levels off above 1.)
    setup = make_setup("llama-3.1-8b", "h100-sxm", level=level, ignore_memory=True, kv_traffic=True)
    batches = [1, 4, 16, 64, 256, 1024, 4096]
    speedups = [
        speculative_decoding(
            setup, acceptance=0.7, proposed=4, batch=b, context_tokens=128, drafter=drafter
        ).speedup
        for b in batches
    ]
    assert speedups == sorted(speedups, reverse=True)
    assert speedups[0] > 2 > 1 > speedups[-1]


def test_speedup_rises_with_acceptance() -> None:
    values = [
        speculative_decoding(LESSON, acceptance=a, proposed=4, batch=8).speedup for a in (0.0, 0.3, 0.6, 0.9)
    ]
    assert values == sorted(values)
    assert values[0] < 1  # nothing accepted: the drafter's work is pure loss


def test_both_modes_through_the_setup() -> None:
    peak = make_setup("llama-3.1-8b", "h100-sxm", level="refined")
    calibrated = make_setup("llama-3.1-8b", "h100-sxm", level="refined", mode="calibrated")
    a = speculative_decoding(peak, acceptance=0.8, proposed=4, context_tokens=1000)
    b = speculative_decoding(calibrated, acceptance=0.8, proposed=4, context_tokens=1000)
    assert a.speedup == a.bound_speedup
    assert b.bound_speedup == pytest.approx(a.speedup, rel=1e-9)
    assert b.speedup != b.bound_speedup
    assert b.mode == "calibrated"
    assert any("calibrated" in w for w in b.warnings)
    record = b.as_dict()
    assert record["speedup"] == b.speedup
    assert record["time_per_token_s"] == pytest.approx(b.step_time_s / b.expected_tokens_per_step)


# --- inputs -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("value", [1, 1.0, 1.5, -0.1, math.nan, math.inf, True, "0.8", None], ids=repr)
def test_acceptance_outside_zero_to_one_is_refused(value: Any) -> None:
    with pytest.raises(ValueError, match=r"acceptance must be .*\[0, 1\)"):
        speculative_decoding(LESSON, acceptance=value, proposed=4)


@pytest.mark.parametrize("value", [0, -1, 2.5, 65, True, None], ids=repr)
def test_proposed_must_be_a_small_whole_number(value: Any) -> None:
    with pytest.raises(ValueError, match="proposed must be a whole number"):
        speculative_decoding(LESSON, acceptance=0.8, proposed=value)


@pytest.mark.parametrize(
    ("options", "words"),
    [
        ({"drafter": "medusa"}, "drafter must be one of heads, model, ngram"),
        ({"drafter": "model"}, "drafter 'model' needs draft_model"),
        ({"drafter": "ngram", "draft_model": "llama-3.1-8b"}, "draft_model is only for drafter 'model'"),
        ({"drafter": "model", "draft_model": "llama-8"}, "Did you mean"),
        ({"draft_layers": 0}, "draft_layers must be"),
        ({"draft_layers": 33}, "draft_layers must be between"),
        ({"batch": 0}, "batch must be a whole number"),
        ({"context_tokens": 1.5}, "context_tokens must be a whole number"),
    ],
)
def test_bad_drafter_inputs_name_the_field(options: dict[str, Any], words: str) -> None:
    with pytest.raises(ValueError, match=words):
        speculative_decoding(LESSON, acceptance=0.8, proposed=4, **options)


def test_refined_draft_model_needs_shapes() -> None:
    refined = make_setup("llama-3.1-70b", "h200", level="refined", precision="fp8")
    tiny = custom_dense_model(params_billion=1)
    with pytest.raises(ValueError, match=r"draft_model .* needs a model preset"):
        speculative_decoding(refined, acceptance=0.8, proposed=4, drafter="model", draft_model=tiny)


# --- published figures ------------------------------------------------------------------------------------
def test_leviathan_expected_improvement_formula() -> None:
    # Leviathan et al. 2023 (arXiv 2211.17192), section 3, walltime improvement: the expected improvement
    # factor with draft cost ratio c is (1 - a^(k+1)) / ((1 - a)(k c + 1)). With a memory-bound draft model
    # the ratio c is the ratio of weight bytes, so our pass model must reproduce that factor for any a, k, c.
    target = make_setup(custom_dense_model(params_billion=100), "h100-sxm", ignore_memory=True)
    for a, k, c in ((0.6, 3, 0.05), (0.75, 7, 0.02), (0.9, 5, 0.2)):
        draft = custom_dense_model(params_billion=100 * c)
        ours = speculative_decoding(target, acceptance=a, proposed=k, drafter="model", draft_model=draft)
        published = (1 - a ** (k + 1)) / ((1 - a) * (k * c + 1))
        assert ours.speedup == pytest.approx(published, rel=1e-9)


def test_acceptance_for_tokens_inverts_the_expected_tokens() -> None:
    assert acceptance_for_tokens(3.3616, 4) == pytest.approx(0.8, abs=1e-12)
    assert acceptance_for_tokens(1.0, 4) == 0.0
    with pytest.raises(ValueError, match="tokens_per_step must be below proposed \\+ 1 = 5"):
        acceptance_for_tokens(5.0, 4)
    with pytest.raises(ValueError, match="tokens_per_step must be"):
        acceptance_for_tokens(0.5, 4)


# Spec-Bench (Xia et al. 2024, arXiv 2401.07851), Leaderboard.md at commit 5544fd7 of hemingkx/Spec-Bench,
# "Leaderboard on A100": one A100 80GB, FP16, greedy, batch 1, Vicuna-v1.3 (PyTorch 2.0.1); per method the
# mean accepted tokens per step (tau) and the overall speed-up against plain decoding. (Later versions of the
# file re-measured under PyTorch 2.5.1 with other figures.) We feed tau in (as the acceptance rate that gives
# tau at our k) and compare speed-ups. Vicuna-v1.3 shapes from its LLaMA-1 config: (layers, hidden, heads,
# MLP width), multi-head attention, head size 128, vocabulary 32,000, untied output layer.
VICUNA = {"7b": (32, 4096, 32, 11008), "13b": (40, 5120, 40, 13824), "33b": (60, 6656, 52, 17920)}
SPEC_BENCH_A100 = [  # (model, method, mean accepted tokens, published overall speed-up)
    ("7b", "EAGLE", 3.61, 2.29), ("7b", "Medusa", 2.32, 1.78), ("7b", "SpS", 2.28, 1.49),
    ("7b", "PLD", 1.73, 1.59),
    ("13b", "EAGLE", 3.64, 2.34), ("13b", "Medusa", 2.39, 1.75), ("13b", "SpS", 2.18, 1.49),
    ("13b", "PLD", 1.68, 1.48),
    ("33b", "EAGLE", 3.39, 2.47), ("33b", "Medusa", 2.33, 1.79), ("33b", "SpS", 2.01, 1.61),
    ("33b", "PLD", 1.55, 1.42),
]  # fmt: skip


def _vicuna(size: str) -> Any:
    layers, hidden, heads, mlp = VICUNA[size]
    shapes = {"layers": layers, "hidden_size": hidden, "attention_heads": heads, "kv_heads": heads}
    model = replace(get_model("llama-3.1-8b"), **shapes, mlp_width=mlp, vocab_size=32000, attention="mha")
    return replace(model, key=f"vicuna-{size}", name=f"Vicuna {size.upper()}", published_params=0)


def _spec_bench_drafter(method: str, hidden: int, layer_params: float) -> tuple[int, dict[str, Any]]:
    """k and the drafter of each method, as we model it (assumptions, not fitted):

    Every head drafter also runs a 32,000-row output layer per draft step, which the calculators add.
    EAGLE: one decoder layer and its input projection (2 hidden x hidden) per draft step, k = 5 (its draft
    tree's depth). Medusa-1: 5 heads, each a hidden x hidden residual block besides its output layer.
    SpS: a 68M-parameter draft model (Spec-Bench's speculative-sampling draft), k = 5. PLD: prompt lookup,
    free, k = 4 (at batch 1 the verifier's cost barely depends on k).
    """
    if method == "EAGLE":
        return 5, {"drafter": "heads", "draft_layers": 1.0 + 2 * hidden * hidden / layer_params}
    if method == "Medusa":
        return 5, {"drafter": "heads", "draft_layers": hidden * hidden / layer_params}
    if method == "SpS":
        return 5, {"drafter": "model", "draft_model": custom_dense_model(params_billion=0.068)}
    return 4, {"drafter": "ngram"}


@pytest.mark.parametrize("mode", ["peak", "calibrated"])
@pytest.mark.parametrize(("model", "method", "tau", "published"), SPEC_BENCH_A100)
def test_spec_bench_speedups_at_batch_one(
    model: str, method: str, tau: float, published: float, mode: str
) -> None:
    # Our figure over-predicts every row, by 8-46%: the model leaves out what a batch-1 step of a research
    # implementation pays besides weight reads (tree construction and sampling on the CPU, kernel launches
    # of a 68M draft, attention over the draft tree). The tolerance, ours / published in [1.0, 1.5], was
    # set after seeing the 24 ratios; it says the model is an optimistic estimate, never a pessimistic one.
    vicuna = _vicuna(model)
    layer_params = (vicuna.derived_params - 2 * 32000 * vicuna.hidden_size) / vicuna.layers
    k, drafter = _spec_bench_drafter(method, vicuna.hidden_size, layer_params)
    setup = make_setup(vicuna, "a100-sxm-80gb", mode=mode)
    ours = speculative_decoding(
        setup, acceptance=acceptance_for_tokens(tau, k), proposed=k, context_tokens=512, **drafter
    )
    assert ours.expected_tokens_per_step == pytest.approx(tau, rel=1e-9)
    assert 1.0 <= ours.speedup / published <= 1.5, (ours.speedup, published)


# DeepSeek-V3 technical report (arXiv 2412.19437), section 5.4.3 "Multi-Token Prediction Evaluation": used
# for speculative decoding, its one MTP module predicts the second next token, accepted 85% to 90% of the time
# "across various generation topics", which gives "1.8 times TPS" (tokens per second) against decoding without
# it. The report does not state the batch, context or hardware of that figure; its decoding deployment
# (section 3.4.2) is H800s with data-parallel attention and expert-parallel MoE layers, the layout we take.
DEEPSEEK_V3_MTP_ACCEPTANCE = (0.85, 0.90)
DEEPSEEK_V3_MTP_SPEEDUP = 1.8


def _mtp_draft_layers() -> float:
    """The MTP module's draft step, in target decoder layers (section 2.2 of the report): one transformer
    block (MLA attention and a MoE layer with 8 routed and 1 shared expert active: the target's own layer
    shape, 583M active weights, against the 585M mean active layer that the heads drafter counts in), a
    projection of [hidden; embedding] back to hidden (2 x 7168 x 7168 = 103M weights), and the shared output
    head (129,280 x 7168, which the heads drafter adds itself). The shared embedding is a lookup, no reads
    to speak of. So 1 + 2 d^2 / (mean active layer) = 1 + 102.8M / 585.2M = 1.176 layers, 4.3% of a step."""
    model = get_model("deepseek-v3")
    output = model.vocab_size * model.hidden_size
    mean_layer = (model.active_params - 2 * output) / model.layers
    return 1.0 + 2 * model.hidden_size**2 / mean_layer


@pytest.mark.parametrize("setting", [COURSE_SETTING, SPEC_PEAK], ids=["calibrated", "spec-peak"])
@pytest.mark.parametrize("acceptance", DEEPSEEK_V3_MTP_ACCEPTANCE)
def test_deepseek_v3_mtp_speedup_against_the_report(acceptance: float, setting: Any) -> None:
    # One MTP module proposes one token (k = 1): a step yields 1 + a tokens, exactly.
    # The published 1.8x sits inside what a verifier costing one plain step allows with our draft cost:
    # (1 + a) / (1 + 0.043) = 1.774 at a = 0.85 and 1.822 at a = 0.90.
    # Our full model falls short of it, by 5-10% here (8 H200s in FP8, DeepSeek's layout, 64 sequences of
    # 2,000 tokens): ours is 1.63-1.67 calibrated, 1.65-1.70 at spec peaks. Our verifier costs 1.08-1.09
    # plain steps, not 1.0: the second token of each sequence routes to its own 8 experts, so the check
    # reads experts the plain step does not (up to twice as many at batch 1; at DeepSeek's deployment,
    # 320 GPUs and large batches that touch every expert, that extra read vanishes), and its MLA attention
    # takes two queries. Across batches 1 to 256 ours stays between 0.73 and 0.96 of the published figure,
    # lowest near batch 8, where the second tokens add the most expert reads (we did not tune to it).
    # Tolerance, ours / published in [0.85, 1.0], set after seeing the four ratios (0.905-0.944): the model
    # may not be more optimistic than the report, and a shortfall beyond 15% at this batch would mean the
    # verifier or the draft is mis-costed, not the routing effect above.
    draft_layers = _mtp_draft_layers()
    assert draft_layers == pytest.approx(1.176, abs=1e-3)
    with using(setting):
        setup = make_setup(
            "deepseek-v3", "h200", gpus=8, precision="fp8", level="refined",
            expert_parallel=True, data_parallel_attention=True,
        )  # fmt: skip
        ours = speculative_decoding(
            setup, acceptance=acceptance, proposed=1, batch=64, context_tokens=2000, drafter="heads",
            draft_layers=draft_layers,
        )  # fmt: skip
    assert ours.mode == setting.mode
    assert ours.expected_tokens_per_step == pytest.approx(1 + acceptance, rel=1e-12)
    assert ours.draft_time_s / ours.plain.time_s == pytest.approx(0.043, abs=5e-4)
    assert 0.85 <= ours.speedup / DEEPSEEK_V3_MTP_SPEEDUP <= 1.0, ours.speedup


def test_deepseek_v3_mtp_published_speedup_lies_in_the_ideal_bracket() -> None:
    # With the verifier at one plain step, speed-up = (1 + a) / (1 + draft share). The report's range of a
    # and our MTP draft cost bracket its 1.8x: 1.85 / 1.043 = 1.774 <= 1.8 <= 1.90 / 1.043 = 1.822. A draft
    # that cost three target layers and the head (share 7.1%: at most 1.90 / 1.071 = 1.77) would not.
    setup = make_setup("deepseek-v3", "h200", gpus=8, precision="fp8", level="refined")
    share = heads_draft_share(setup, 1, _mtp_draft_layers())
    low, high = ((1 + a) / (1 + share) for a in DEEPSEEK_V3_MTP_ACCEPTANCE)
    assert low <= DEEPSEEK_V3_MTP_SPEEDUP <= high, (low, high)


def test_the_verifier_is_the_faster_form_and_its_memory_is_counted_once() -> None:
    # DeepSeek-V3 (MLA) at batch 64, 2,000 tokens, on 8 H200s in FP8: plain decoding fits. As a prefill chunk
    # the verifier would re-expand each cached latent; as k + 1 decode tokens it would count each cache
    # k + 1 times against memory (and refuse the batch). Neither over-count may decide the answer.
    setup = make_setup("deepseek-v3", "h200", gpus=8, precision="fp8", level="refined")
    result = speculative_decoding(setup, acceptance=0.85, proposed=1, batch=64, context_tokens=2000)
    chunk = mixed_step(setup, prefill_chunks=[(2, 1999)] * 64)
    assert result.verify.time_s <= chunk.time_s
    assert result.verify.time_s < 2 * result.plain.time_s  # two tokens per sequence, mostly memory-bound
    assert not any("ignored memory" in w for w in result.warnings)


def test_a_draft_model_takes_its_weights_and_caches_from_the_targets_memory() -> None:
    """The lesson's setting: Llama-3.1 70B in FP8 on one H200 with Llama-3.1 8B (FP8) drafting 4 tokens.

    The target leaves 59.031 GB for its cache (150.8 GB x 0.9, less 70.6 GB of weights, 1.8 GB of workspace
    and 2.1 GB of reserve): 59.031e9 / (327,680 B x 1,000 tokens) = 180.1 sequences when decoding plainly.
    Speculating, the drafter's 9.081 GB of weights come out of it and each sequence caches 1,004 tokens in
    both models: (59.031e9 - 9.081e9) / ((327,680 + 131,072) B x 1,004) = 108.45 sequences."""
    scenario = Scenario("llama-3.1-70b", "h200", precision="fp8")
    assert scenario.max_batch(1000) == 180
    assert scenario.speculative_max_batch(4, 1000, "model", "llama-3.1-8b") == 108
    assert scenario.speculative(0.7, 4, 108, 1000, drafter="model", draft_model="llama-3.1-8b").speedup > 0
    with pytest.raises(ValueError, match="speculating on 109 sequences of 1,000 tokens does not fit"):
        scenario.speculative(0.7, 4, 109, 1000, drafter="model", draft_model="llama-3.1-8b")
    # A what-if past the limit is a warning, as for plain decoding.
    what_if = Scenario("llama-3.1-70b", "h200", precision="fp8", ignore_memory=True)
    warned = what_if.speculative(0.7, 4, 160, 1000, drafter="model", draft_model="llama-3.1-8b").warnings
    assert any(w.startswith("ignored memory: speculating on 160 sequences") for w in warned)


def test_heads_hold_a_layer_and_its_cache_and_ngram_lookup_only_the_proposals() -> None:
    # EAGLE-style heads: one decoder layer of the target's mean size in FP8 ((70.55e9 - 2 x 1.05e9) / 80
    # = 0.856 GB) and 1/80 of its cache per token (4,096 B): (59.031e9 - 0.856e9) / (331,776 x 1,004)
    # = 174.6. N-gram lookup adds only the 4 proposals' cache: 59.031e9 / (327,680 x 1,004) = 179.4.
    scenario = Scenario("llama-3.1-70b", "h200", precision="fp8")
    assert scenario.speculative_max_batch(4, 1000) == 174
    assert scenario.speculative_max_batch(4, 1000, "ngram") == 179


# --- what lessons reach: Scenario's methods, the expression language, the chart ---------------------------
def test_scenario_methods_are_the_module_functions() -> None:
    # Scenario() is dense-8b on an H100 at spec peaks, the setup of the hand-worked cases above.
    scenario = Scenario()
    assert scenario.speculative(0.8, 4, drafter="ngram").speedup == pytest.approx(3.3616, rel=1e-9)
    assert scenario.speculative_break_even_batch(0.8, 4, 1, drafter="ngram") == 199
    assert (
        scenario.best_speculative(0.8, 64).proposed
        == best_proposed(LESSON, acceptance=0.8, batch=64).proposed
    )
    # Nothing accepted: slower from batch 1 (the heads' work is pure loss).
    assert scenario.speculative_break_even_batch(0.0, 4) == 1


def test_break_even_batch_is_zero_when_speculation_always_pays() -> None:
    # At 2,000 tokens of context the cache reads keep both passes memory-bound at any batch, and the check
    # reads each cache once for its 5 tokens: speculation never loses (break_even_batch gives None).
    scenario = Scenario("llama-3.1-8b", kv_traffic=True, ignore_memory=True)
    assert break_even_batch(scenario.setup, acceptance=0.8, proposed=4, context_tokens=2000) is None
    assert scenario.speculative_break_even_batch(0.8, 4, 2000) == 0


def test_lessons_reach_speculation_through_expressions() -> None:
    assert evaluate("Scenario().speculative(0.8, 4).expected_tokens_per_step") == pytest.approx(3.3616)
    assert evaluate("Scenario().speculative(0.8, 4).verify.time_s") > 0  # a PassResult inside a result
    assert evaluate("acceptance_for_tokens(3.3616, 4)") == pytest.approx(0.8, abs=1e-12)


def test_speedup_chart_rows_are_the_calculators_figures() -> None:
    data = chart_data("speculative-speedup", max_batch=16, acceptance=[0.6, 0.8], drafter="ngram")
    rows = data.datasets["points"]
    assert {r["series"] for r in rows} == {"acceptance 0.6", "acceptance 0.8"}
    assert sorted({r["batch"] for r in rows}) == [1, 2, 3, 4, 6, 8, 11, 16]  # 2^(i/2), rounded, and the end
    target = Scenario("llama-3.1-70b", "h200", precision="fp8", ignore_memory=True)
    one = next(r for r in rows if r["series"] == "acceptance 0.8" and r["batch"] == 1)
    assert one["speedup"] == target.speculative(0.8, 4, 1, 1000, drafter="ngram").speedup
    assert {r["fits"] for r in rows} == {"fits"}  # 16 sequences of 1,000 tokens fit beside 70 GB of FP8
    # Past the memory limit the points are hollow: with the 8B draft model beside it, 108 sequences of
    # 1,000 tokens fit (plain decoding: 180), so 91 fits and 128 does not; the limit itself is plotted.
    wide = chart_data("speculative-speedup", max_batch=256, acceptance=[0.7]).datasets["points"]
    fits = {r["batch"]: r["fits"] for r in wide}
    assert (fits[91], fits[108], fits[128], fits[256]) == ("fits", "fits", "does not fit", "does not fit")
    assert next(r for r in wide if r["batch"] == 256)["speedup"] < 1  # and long since slower than plain


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ([0.6, 0.7, 0.8, 0.9], "one to three acceptance rates"),
        ([0.8, 0.6], "increasing order"),
        ([0.5, 1.0], r"from 0 up to \(not including\) 1"),
        (0.8, "expected a list"),
    ],
)
def test_speedup_chart_refuses_bad_acceptance_lists(value: Any, words: str) -> None:
    with pytest.raises(ChartError, match=words):
        chart_data("speculative-speedup", acceptance=value)
