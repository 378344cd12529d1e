#!/usr/bin/env bash
# gpu_tests.sh RUNG_BINARIES...: the tests that need a GPU.
#   - every rung through the whole check matrix (bin/stepNN --check)
#   - compute-sanitizer memcheck, racecheck and synccheck clean on small odd shapes
#   - the launch contract (build/tests/contract_NN): CUDA graph capture, several streams and
#     host threads at once, and a host thread on each GPU where there are several, all
#     bit-identical to sequential launches
#   - every launch path taken (contract_NN paths): for the rungs with several (13-26), shapes
#     derived from the GPU's SM count, the path of each launch read from its SGEMM_TRACE line;
#     every path of the rung's list must run at least once (the others print "one path")
# GPU_TEST_SANITIZERS lists the compute-sanitizer tools to run (default "memcheck racecheck
# synccheck"; empty: none, e.g. to see a broken copy of a rung fail quickly).
# Exits 77 (a visible skip) only when nvidia-smi lists no GPU.  When it lists one, exit 77
# from a binary is a skip only for a GPU below the rung's compute capability (its message
# says "needs compute capability", harness/gpu_startup.h); a binary that finds no CUDA
# device there fails, and so does a run in which no rung ran: a GPU that CUDA cannot use
# (a driver older than the runtime, a container without the device) is never a pass.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
  echo "SKIP: no GPU here (nvidia-smi lists none): the check matrix and compute-sanitizer run on a GPU machine"
  exit 77
fi
if [ "$#" -eq 0 ]; then
  echo "FAIL: no rung binaries given"
  exit 1
fi
sanitizer=$(command -v compute-sanitizer || echo "${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer")
# The sanitizers are CPU-bound, the contract runs mostly wait on the GPU: three jobs per four
# cores, at most 12 (GPU_TEST_JOBS overrides).
cores=$(nproc 2>/dev/null || echo 4)
jobs=${GPU_TEST_JOBS:-$(((cores * 3 / 4) < 1 ? 1 : ((cores * 3 / 4) > 12 ? 12 : cores * 3 / 4)))}
logdir=${GPU_TEST_LOGS:-build/gpu-tests}
mkdir -p "$logdir"

# below_cc LOG: the binary that wrote LOG exited 77 because the GPU is below the rung's
# compute capability (the one skip a GPU machine allows), not because it found no device.
below_cc() {
  grep -q 'needs compute capability' "$1"
}

# one_rung BIN: prints one line per test, returns non-zero if any failed.
one_rung() {
  local bin=$1 name status bad=0
  # Shapes that are multiples of nothing: edge tiles in every dimension, misaligned rows.
  # tile-aligned ones (K % 8 == 0), which take the fast paths (rung 10: texture loads),
  # one with more 128x256 tiles than a 132-SM GPU has SMs (rung 15: stream-K),
  # and one with few tiles and a long K (rung 14: split-K, a partial K tile).
  local shapes="--mnk 67,45,33 --mnk 130,131,17 --mnk 1,129,5 --mnk 256,256,64 --mnk 200,300,48 --mnk 2049,2300,37 --mnk 130,260,201"
  name=$(basename "$bin")
  # Each mechanism's own shapes on the rung that introduces it (racecheck takes minutes on them,
  # and rungs 16-17 run the same stream-K and slab kernels, from common/): one 128x256 tile of
  # K = 8192 in 64 slabs (14: the slabs' sum in runs, through shared memory); 232 tiles of
  # 128x256 on 132 SMs, all shared out by stream-K (15, K = 256) or cut by the uneven tail (18,
  # K = 512: the shortest K that takes it; racecheck's time grows with M N K); rung 18
  # also: 17 tiles of 64x128 and K = 4096 (its small-tile slabs, 7 slices). Rung 22: six tiles
  # and K = 1000, split-K in four slices. Rungs 23-25 (each its own K loop): split-K with
  # 16-byte copies or TMA (K = 1000) and with 4-byte copies (lda = K = 999).
  case "$name" in
    step14*) shapes="$shapes --mnk 128,256,8192" ;;
    step15*) shapes="$shapes --mnk 14848,512,256" ;;
    step18*) shapes="$shapes --mnk 14848,512,512 --mnk 64,2176,4096 --mnk 128,256,8192" ;;
    # Rung 19: rung 18's shapes, and C's unaligned rows (ldc = N = 301 or 257) by lane rows
    # (K <= 512) or not (K = 700).
    step19*) shapes="$shapes --mnk 14848,512,512 --mnk 64,2176,4096 --mnk 128,256,8192 --mnk 1100,301,100 --mnk 1030,257,700" ;;
    step22*) shapes="$shapes --mnk 200,300,1000" ;;
    step2[3-5]*) shapes="$shapes --mnk 200,300,1000 --mnk 200,300,999" ;;
    # Rung 26: B split before the product (M >= 1152), its reads of B on rows of 301 floats.
    step26*) shapes="$shapes --mnk 2100,301,100" ;;
    # Rung 27: A copied into aligned rows (lda = K = 99, 999; N >= 256): before B's split (M >=
    # 384, B's rows of 601 floats) and before split-K on B read by TMA (ten tiles, K = 999); B
    # copied (ldb = N = 601, split-K: no split first), alone and with A's copy, before split-K;
    # B split in place of its copy (M = 400, 344 whole tiles, rows of 11001 floats).
    step27*) shapes="$shapes --mnk 2100,301,100 --mnk 2100,601,99 --mnk 200,600,999 --mnk 600,601,999 --mnk 600,601,998 --mnk 400,11001,40" ;;
    # Rung 28 has no kernel of its own (rung 27's, sanitized there): its tail is checked by the
    # check matrix (1100x4100x1001 and 2049x2300x2048 on 132 SMs: the last rows split along K).
    # Rung 29: a small product sent to rung 19, a larger one with B's copy sent to rung 28.
    step29*) shapes="$shapes --mnk 128,128,128 --mnk 600,601,999" ;;
  esac
  local t0=$SECONDS times=""
  "$bin" --check --quiet >"$logdir/$name.check.log" 2>&1
  status=$?
  times="check $((SECONDS - t0)) s"
  if [ "$status" -eq 77 ]; then
    if below_cc "$logdir/$name.check.log"; then
      echo "skip $name: $(tail -n 1 "$logdir/$name.check.log")"
      return 0
    fi
    echo "FAIL $name: no CUDA device, but nvidia-smi lists a GPU (exit 77):"
    tail -n 3 "$logdir/$name.check.log" | sed 's/^/    /'
    return 1
  fi
  touch "$logdir/$name.ran"
  if [ "$status" -ne 0 ]; then
    echo "FAIL $name check matrix (exit $status):"
    { grep -E 'FAIL|error|failed|did not start' "$logdir/$name.check.log" ||
      tail -n 3 "$logdir/$name.check.log"; } | head -n 20 | sed 's/^/    /'
    bad=1
  else
    echo "ok   $name check matrix: $(grep 'check matrix' "$logdir/$name.check.log")"
  fi
  for tool in ${GPU_TEST_SANITIZERS-memcheck racecheck synccheck}; do
    t0=$SECONDS
    "$sanitizer" --tool "$tool" --error-exitcode 99 \
      "$bin" --no-check --no-time --quiet $shapes >"$logdir/$name.$tool.log" 2>&1
    status=$?
    times="$times, $tool $((SECONDS - t0)) s"
    if [ "$status" -ne 0 ]; then
      echo "FAIL $name $tool (exit $status):"
      grep -E '=========|FAIL' "$logdir/$name.$tool.log" | head -n 20 | sed 's/^/    /'
      bad=1
    else
      echo "ok   $name $tool: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$logdir/$name.$tool.log" | head -n 1)"
    fi
  done
  t0=$SECONDS
  contract_tests "$name" || bad=1
  # where the suite's time goes (it must fit the GPU machine's call limit)
  echo "time $name: $times, contract $((SECONDS - t0)) s"
  return "$bad"
}

# ---- the launch contract (tests/gpu_contract.c, built as build/tests/contract_NN) -------------
# A launch never synchronizes and never allocates while its stream is capturing, and several
# streams or host threads at once give the same bits as one after another. Every run is a
# fresh process: in `capture` mode the rung's first launch of the process is the captured one.
# Shapes (on a 132-SM H100/H200, for the last rung): few tiles and a long K (split-K), 64x128
# whole tiles, 128x256 whole tiles, 200 tiles of 128x256 (stream-K), odd sizes, a short K,
# 242 tiles of 128x256 (rung 18's uneven tail: four launches, three of them early), 64 tiles
# of 64x128 with a long K (rung 18's small-tile slabs: five launches, four of them early).
contract_dir=${GPU_CONTRACT_DIR:-build/tests}
contract_timeout=${GPU_CONTRACT_TIMEOUT:-120}
contract_shapes="256x256x4096 1024x1024x1024 2048x2048x512 2560x2560x256 1000x1000x999 4096x4096x64 2816x2816x512 4096x128x4096"
# capture-random's: split-K (few tiles, a long K), stream-K and the large tiles' split, rung 26's
# B split (M >= 1152), odd sizes (rung 27: A's copy at 1000x1000x999).
contract_random_shapes="256x256x4096 1024x1024x1024 2560x2560x256 2048x2048x512 1000x1000x999"
# Rungs 01-04 are slow at the large sizes: the small shapes only.
contract_small_shapes="256x256x4096 1000x1000x999"
# Rungs 05-12 have one path (rung 10: two, textures where aligned): a small, an odd and an
# aligned mid-size shape reach them all.
contract_mid_shapes="256x256x4096 1000x1000x999 2048x2048x512"

# contract_tests NAME: runs build/tests/contract_<NAME without "step"> in every mode at every
# shape, then in `paths` mode once; prints an ok line per mode, a FAIL line per failing run;
# returns non-zero on failure.
contract_tests() {
  local name=$1 bin mode shape log status passed line bad=0
  bin=$contract_dir/contract_${name#step}
  if [ ! -x "$bin" ]; then
    case "$name" in
      *-*) echo "skip $name contract: $bin is not built for this variant"; return 0 ;;
      *) echo "FAIL $name contract: $bin is not built"; return 1 ;;
    esac
  fi
  local shapes=$contract_shapes extra=""
  case "$name" in
    step0[1-4] | step0[1-4]-*) shapes=$contract_small_shapes ;;
    step0[5-9] | step0[5-9]-* | step1[0-2] | step1[0-2]-*) shapes=$contract_mid_shapes ;;
    # Rung 28's tail (two calls of rung 27 on the stream; on 132 SMs the last row of 1536^3's
    # tiles split 6 ways), alone and through rung 29, in every mode.
    step2[89] | step2[89]-*) extra=" 1536x1536x1536" ;;
  esac
  shapes=$shapes$extra
  local modes="capture streams threads devices"
  # The rungs that keep a workspace per stream (14-19, 22-29): capture-warm too, and
  # capture-random: a cold capture on random floats gives the bits of a direct launch (the same
  # path: split-K, stream-K and slabs in a workspace made in the graph; rung 26's B split and
  # rung 27's copies of A and B, which a capture leaves out: the bits are the same either way).
  case "$name" in step1[4-9] | step1[4-9]-* | step2[1-9] | step2[1-9]-*) modes="capture capture-warm capture-random streams threads devices" ;; esac
  for mode in $modes; do
    passed=""
    local mode_shapes=$shapes
    [ "$mode" = capture-random ] && mode_shapes=$contract_random_shapes$extra
    if [ -z "$mode_shapes" ]; then # a list not exported to this shell would skip a mode unseen
      echo "FAIL $name contract $mode: no shapes to run it at"
      bad=1
      continue
    fi
    for shape in $mode_shapes; do
      log=$logdir/$name.contract.$mode.$shape.log
      # shellcheck disable=SC2086
      timeout -k 10 "$contract_timeout" "$bin" "$mode" ${shape//x/ } >"$log" 2>&1
      status=$?
      line=$(grep -E '^(ok|FAIL|skip) ' "$log" | tail -n 1)
      case $status in
        0) passed="$passed $shape" ;;
        77)
          if [ "$mode" = devices ] && grep -q "fewer than two CUDA devices" "$log"; then
            echo "skip $name contract devices: ${line#"skip devices $shape: "}"
            break # the same at every shape
          fi
          if below_cc "$log"; then
            echo "skip $name contract: ${line#skip }"
            return "$bad"
          fi
          echo "FAIL $name contract $mode $shape: no CUDA device, but nvidia-smi lists a GPU (exit 77): ${line#skip }"
          [ -n "$line" ] || tail -n 3 "$log" | sed 's/^/    /'
          return 1
          ;;
        124 | 137) echo "FAIL $name contract $mode $shape: no result after ${contract_timeout}s (a hang?)"; bad=1 ;;
        *)
          echo "FAIL $name contract $mode $shape (exit $status): ${line#"FAIL $mode $shape: "}"
          [ -n "$line" ] || tail -n 5 "$log" | sed 's/^/    /'
          bad=1
          ;;
      esac
    done
    [ -n "$passed" ] && echo "ok   $name contract $mode:$passed"
  done
  # Every launch path of the rung taken at least once (its own shapes, from the SM count).
  log=$logdir/$name.contract.paths.log
  timeout -k 10 "$contract_timeout" "$bin" paths >"$log" 2>&1
  status=$?
  line=$(grep -E '^(ok|FAIL|skip) ' "$log" | tail -n 1)
  case $status in
    0) echo "ok   $name contract ${line#ok }" ;;
    77)
      if below_cc "$log"; then
        echo "skip $name contract: ${line#skip }"
        return "$bad"
      fi
      echo "FAIL $name contract paths: no CUDA device, but nvidia-smi lists a GPU (exit 77): ${line#skip }"
      return 1
      ;;
    124 | 137) echo "FAIL $name contract paths: no result after ${contract_timeout}s (a hang?)"; bad=1 ;;
    *)
      echo "FAIL $name contract paths (exit $status): ${line#"FAIL paths: "}"
      [ -n "$line" ] || tail -n 5 "$log" | sed 's/^/    /'
      bad=1
      ;;
  esac
  return "$bad"
}
export -f below_cc one_rung contract_tests
export sanitizer logdir contract_dir contract_timeout contract_shapes contract_random_shapes contract_small_shapes \
  contract_mid_shapes

for bin in "$@"; do
  [ -x "$bin" ] || { echo "FAIL: $bin is not built"; exit 1; }
  name=$(basename "$bin")
  rm -f "$logdir/$name.summary" "$logdir/$name.failed" "$logdir/$name.ran"
done
# Rungs run in parallel (the sanitizers are CPU-bound); each writes a summary, shown in order.
# A line as each rung ends (a run cut short by a time limit still shows how far it got), then
# every rung's lines in order.
# The rungs with the longest runs (racecheck on their own shapes, the most contract shapes)
# start first, so that none of them is left alone at the end.
first="step18 step15 step26 step25 step24 step23 step14 step13 step16 step17"
ordered() {
  local bin n
  for n in $first; do
    for bin in "$@"; do [ "$(basename "$bin")" = "$n" ] && echo "$bin"; done
  done
  for bin in "$@"; do
    case " $first " in *" $(basename "$bin") "*) ;; *) echo "$bin" ;; esac
  done
}
ordered "$@" | xargs -P "$jobs" -I{} bash -c \
  'n=$(basename "$1"); s="$logdir/$n.summary"
   one_rung "$1" >"$s" 2>&1 || touch "$logdir/$n.failed"
   echo "done $n: $(grep -c "^FAIL" "$s") failed, $(grep "^time" "$s" | sed "s/^time [^:]*: //")"' _ {}
echo
fails=0 ran=0
for bin in "$@"; do
  name=$(basename "$bin")
  cat "$logdir/$name.summary"
  if [ -e "$logdir/$name.failed" ]; then
    fails=$((fails + 1))
    rm -f "$logdir/$name.failed"
  fi
  if [ -e "$logdir/$name.ran" ]; then
    ran=$((ran + 1))
    rm -f "$logdir/$name.ran"
  fi
done
echo "GPU tests: $# binaries, $ran ran, $fails with failures (logs in $logdir/)"
if [ "$ran" -eq 0 ]; then
  echo "FAIL: nvidia-smi lists a GPU, but no rung ran"
  exit 1
fi
[ "$fails" -eq 0 ]
