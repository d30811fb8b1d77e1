#!/usr/bin/env bash
# Packs what a GPU runner without build tools or MLIR needs into one folder (default
# gpu-bundle/, ignored by git): asyncfuzz, its runtime and cuda backend libraries, the cJSON
# and SQLite libraries it links, the corpus, the GPU test and benchmark, and an ahead-of-time
# batch compiled here (compile-batch). On the runner:
#   gpu-bundle/run.sh device --calibrate
#   gpu-bundle/run.sh run-batch gpu-bundle/batch --backend cuda --spin auto --db results.db
#   gpu-bundle/gpu-tests.sh          # tests/cuda_gpu_test.sh, then bench/bench_gpu.sh
# usage: scripts/gpu-bundle.sh [BUILD_DIR=build] [OUT=gpu-bundle] [BATCH_CASES=200]
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}
O=${2:-gpu-bundle}
N=${3:-200}
[ -x "$B/asyncfuzz" ] || { echo "gpu-bundle: build first (scripts/test.sh or cmake)" >&2; exit 2; }
[ -f "$B/libasyncfuzz_cuda.so" ] || {
  echo "gpu-bundle: $B has no libasyncfuzz_cuda.so (was the CUDA toolkit found?)" >&2
  exit 2
}
rm -rf "$O"
mkdir -p "$O/lib" "$O/tests/data" "$O/bench"
cp "$B/asyncfuzz" "$O/"
cp "$B/libasyncfuzz_rt.so" "$B/libasyncfuzz_cuda.so" "$O/"
for l in libcjson.so.1 libsqlite3.so.0; do
  p=$(ldd "$B/asyncfuzz" | awk -v l=$l '$1 == l {print $3}')
  [ -n "$p" ] && cp -L "$p" "$O/lib/"
done
cp -r corpus "$O/"
cp tests/data/*.json "$O/tests/data/"
cp tests/cuda_gpu_test.sh tests/lib.sh "$O/tests/"
cp bench/bench_gpu.sh "$O/bench/"
cat >"$O/run.sh" <<'EOF'
#!/usr/bin/env bash
# asyncfuzz from this bundle (its libraries next to it)
d=$(cd "$(dirname "$0")" && pwd)
LD_LIBRARY_PATH="$d:$d/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "$d/asyncfuzz" "$@"
EOF
cat >"$O/gpu-tests.sh" <<'EOF'
#!/usr/bin/env bash
# The GPU checks of this bundle: the cuda_gpu test (with the bundle's batch), then the benchmark.
d=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH="$d:$d/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
ASYNCFUZZ_GPU_TEST_BATCH="$d/batch" bash "$d/tests/cuda_gpu_test.sh" "$d/asyncfuzz" "$d" ON "${1:-1000}"
echo "cuda_gpu exit: $?"
bash "$d/bench/bench_gpu.sh" "$d/asyncfuzz" "${2:-100}" "${3:-10}" "${4:-3}"
EOF
chmod +x "$O/run.sh" "$O/gpu-tests.sh"
"$B/asyncfuzz" compile-batch tests/data/mlir-simple.json tests/data/mlir-run-a.json \
  tests/data/mlir-run-b.json corpus/*.json --gen "$N" --seed 20261122 -o "$O/batch"
du -sh "$O"
