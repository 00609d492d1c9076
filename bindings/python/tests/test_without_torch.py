"""``import zyfa`` and the NumPy path work where torch cannot be imported."""
import os
import subprocess
import sys

SCRIPT = """
import sys
sys.modules["torch"] = None  # any `import torch` now raises ImportError
import numpy as np
import zyfa
from zyfa.numeric import bf16_bits
q = bf16_bits(np.ones((1, 8, 1, 128), np.float32))
out = zyfa.flash_attn_func(q, q, q, causal=True)
assert out.shape == (1, 8, 1, 128) and (out == bf16_bits(np.float32(1))).all()
codes, descale = zyfa.fp8_quantize(q)
print("ok")
"""


def test_numpy_path_without_torch():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.dirname(os.path.dirname(__file__)),
                                                      os.environ.get("PYTHONPATH", "")]))
    result = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"
