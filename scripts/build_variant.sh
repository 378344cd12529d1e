#!/usr/bin/env bash
# build_variant.sh NN NAME "NVCC FLAGS": builds bin/variants/stepNN-NAME, rung NN compiled
# with extra flags (e.g. "-DL_STAGES=4"), for experiments timed side by side on a GPU.
# Run `make all` first: it links against the harness objects of the last build.
set -euo pipefail
cd "$(dirname "$0")/.."
nn=$1 name=$2 flags=$3
src=$(ls steps/"$nn"_*.cu)
NVCC=${NVCC:-${CUDA_HOME:-/usr/local/cuda}/bin/nvcc}
arch=${ARCH:-sm_$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n 1 | tr -d ' .')}
mkdir -p build/variants bin/variants
# shellcheck disable=SC2086
"$NVCC" -O3 -lineinfo -std=c++17 -arch="$arch" -Xptxas -v $flags -c "$src" \
  -o "build/variants/$nn-$name.o" >"build/variants/$nn-$name.log" 2>&1 ||
  { cat "build/variants/$nn-$name.log"; exit 1; }
objs=$(ls build/harness/*.o | grep -v '/main_')
# shellcheck disable=SC2086
"$NVCC" -arch="$arch" -o "bin/variants/step$nn-$name" "build/harness/main_$nn.o" \
  "build/variants/$nn-$name.o" $objs build/common/sgemm_common.o -lcublas -ldl -lpthread -lm
echo "bin/variants/step$nn-$name: $(grep -E 'registers' "build/variants/$nn-$name.log" | sed 's/ptxas info *: //' | tr '\n' ';')"
