# The FlashInfer peer's refusals, which need neither a GPU nor FlashInfer: each becomes a record with its
# reason (peers.Unsupported), never a crash of the peers step.
import importlib.util

import pytest

import peers

META = {"dtype": "bf16", "nheads": 8, "nheads_k": 2, "softmax_scale": 0.088, "batch": 1, "d_qk": 128, "d_v": 128}
TENSORS = {"q": None, "k": None, "v": None}


def test_flashinfer_is_a_default_peer():
    assert "flashinfer" in peers.IMPLS
    assert "flashinfer" in peers.parser().parse_args(["--bench", "b", "--json", "j"]).impls.split(",")


def test_flashinfer_refuses_fp8_with_two_head_dims():
    with pytest.raises(peers.Unsupported, match="d_qk == d_v"):
        peers.make_call("flashinfer", dict(META, dtype="fp8", d_qk=192), TENSORS)


def test_flashinfer_refuses_batches():
    with pytest.raises(peers.Unsupported, match="batch 1"):
        peers.make_call("flashinfer", dict(META, batch=2), TENSORS)


@pytest.mark.skipif(importlib.util.find_spec("flashinfer") is not None, reason="FlashInfer is installed here")
def test_flashinfer_missing_is_a_reason_not_a_crash():
    with pytest.raises(peers.Unsupported, match="flashinfer not installed in this call"):
        peers.make_call("flashinfer", META, TENSORS)
