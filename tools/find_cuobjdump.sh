#!/usr/bin/env bash
# Prints the path of a cuobjdump (with nvdisasm beside it): the one on PATH, the CUDA toolkit's, or the one
# of PyPI's nvidia-cuda-cuobjdump (site-packages/nvidia/cu*/bin). Prints nothing if there is none.
set -uo pipefail
if command -v cuobjdump >/dev/null 2>&1; then command -v cuobjdump; exit 0; fi
if [[ -x /usr/local/cuda/bin/cuobjdump ]]; then echo /usr/local/cuda/bin/cuobjdump; exit 0; fi
"${PYTHON:-python3}" - <<'PY' 2>/dev/null
import glob, os
try:
    import nvidia
except ImportError:
    raise SystemExit
for root in nvidia.__path__:
    for path in sorted(glob.glob(os.path.join(root, "cu*", "bin", "cuobjdump"))):
        if os.access(path, os.X_OK):
            print(path)
            raise SystemExit
PY
