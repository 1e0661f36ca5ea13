#!/usr/bin/env bash
# Makes sure an nvcc is available for build.rs, so that every CUDA kernel is compiled even on a
# machine without a GPU (CI). Uses, in order: $NVCC, $CUDA_HOME/bin/nvcc, $CUDA_PATH/bin/nvcc,
# nvcc on PATH, the project-local virtual environment .venv-cuda/; when none exists, installs
# PyPI's CUDA 13.0 compiler packages into .venv-cuda/ (a one-time download, kept afterwards).
#
# Prints the nvcc path on stdout (the last line); progress goes to stderr. Use it as
#   export NVCC="$(scripts/ensure-nvcc.sh)"
# Exits non-zero only when nvcc can neither be found nor installed; callers that can live
# without GPU kernels may ignore that (build.rs then warns and builds without them).
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.venv-cuda
# The driver on the GPU machine is CUDA 13.0; a newer nvcc would emit PTX it cannot load.
version="13.0.*"

found() {
  [ -n "$1" ] && [ -x "$1" ] && "$1" --version >/dev/null 2>&1
}

for candidate in "${NVCC:-}" "${CUDA_HOME:+$CUDA_HOME/bin/nvcc}" "${CUDA_PATH:+$CUDA_PATH/bin/nvcc}" \
                 "$(command -v nvcc 2>/dev/null || true)"; do
  if found "$candidate"; then
    echo "$candidate"
    exit 0
  fi
done

# The pip wheels put the toolkit under site-packages/nvidia/cu13/.
venv_nvcc() {
  compgen -G "$venv/lib/python3*/site-packages/nvidia/cu13/bin/nvcc" | head -n 1 || true
}

nvcc_path="$(venv_nvcc)"
if ! found "$nvcc_path"; then
  echo "ensure-nvcc: no nvcc found; installing nvidia-cuda-nvcc $version into $venv/ (once)" >&2
  python3 -m venv "$venv" >&2
  "$venv/bin/python" -m pip install -q --disable-pip-version-check \
    "nvidia-cuda-nvcc==$version" "nvidia-cuda-runtime==$version" \
    "nvidia-cuda-crt==$version" "nvidia-nvvm==$version" >&2
  nvcc_path="$(venv_nvcc)"
  if ! found "$nvcc_path"; then
    echo "ensure-nvcc: the packages installed, but no working nvcc is in $venv/" >&2
    exit 1
  fi
fi
# nvcc links against $TOP/lib64 (nvcc.profile), where the wheels have lib/; without the link,
# linking CUDA programs (CMake's compiler check, the example, the benchmark) fails.
toolkit="$(dirname "$(dirname "$nvcc_path")")"
[ -e "$toolkit/lib64" ] || ln -s lib "$toolkit/lib64"
realpath "$nvcc_path"
