#!/usr/bin/env bash
# The checks only a real NVIDIA GPU can answer, for a maintainer with a GPU
# machine (CI has none; go-nvml's mocks cover the logic there).
#
#   scripts/real-gpu-check.sh build DIR     # here: builds into DIR
#   scripts/real-gpu-check.sh run DIR OUT   # on the GPU machine
#
# build makes the orchestrator/gpu test binary and a stripped portal binary
# (gzip'd), so the GPU machine needs neither Go nor a C compiler: only the
# driver, nvidia-smi, curl and python3 with PyTorch (the load that keeps
# GPU 0 busy; set GPU_LOAD to another command that does). No Docker engine
# is needed: the portal runs with its engine absent, as it does while one
# restarts.
#
# run checks, writing what it read under OUT:
#   1. the inventory and readings against nvidia-smi, busy under load and
#      idle after it (TestRealGPU*), and the cost of one reading
#      (BenchmarkRealGPUSample);
#   2. the portal on the real driver: NVML backend, not simulated; the
#      catalog and default prices seeded for the GPU's real model name; the
#      GPU in the API; dcgm-exporter series on /metrics, busy under load.
#
# To try the script itself where there is no GPU, put a stand-in nvidia-smi
# on PATH and set WORKBENCH_GPUS=mock:dgxh200: the tests then fail (no
# driver) and the portal half runs on the mock.
set -u

build() {
	dir=$1
	mkdir -p "$dir"
	export CGO_CFLAGS="-O2 -g -Wno-deprecated-declarations"
	go test -c -o "$dir/gpu.test" ./orchestrator/gpu || exit 1
	go build -ldflags "-s -w -X workbench/web.Version=$(git describe --always --dirty)" -o "$dir/workbench" ./cmd/workbench || exit 1
	gzip -f "$dir/workbench"
	ls -l "$dir"
}

fails=0
check() { # check NAME CONDITION-EXIT-STATUS
	if [ "$2" -eq 0 ]; then echo "PASS $1"; else echo "FAIL $1"; fails=$((fails + 1)); fi
}

# json FILE PYTHON-EXPRESSION: evaluates the expression on the parsed file (d).
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }

run() {
	dir=$(cd "$1" && pwd) out=$2
	mkdir -p "$out"
	: "${GPU_LOAD:=python3 -c 'import torch; x=torch.empty(2<<30, dtype=torch.uint8, device=\"cuda\"); a=torch.randn(8192, 8192, device=\"cuda\", dtype=torch.bfloat16)
while True: a @ a; torch.cuda.synchronize()'}"
	nvidia-smi | tee "$out/nvidia-smi.txt"
	model=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
	count=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)

	# 1. The inventory package against the driver.
	WORKBENCH_TEST_REAL_GPU=1 WORKBENCH_TEST_GPU_LOAD="$GPU_LOAD" "$dir/gpu.test" -test.run 'TestRealGPU' -test.v -test.count=1 2>&1 | tee "$out/gpu-test.txt"
	check "inventory, readings, busy then idle (TestRealGPU*)" "${PIPESTATUS[0]}"
	WORKBENCH_TEST_REAL_GPU=1 "$dir/gpu.test" -test.run '^$' -test.bench 'BenchmarkRealGPU(Sample|Devices)$' -test.benchtime 2s -test.count 3 -test.benchmem 2>&1 | tee "$out/gpu-bench.txt"
	WORKBENCH_TEST_REAL_GPU=1 "$dir/gpu.test" -test.run '^$' -test.bench 'BenchmarkRealGPUCalls' -test.benchtime 200x 2>&1 | tee -a "$out/gpu-bench.txt"
	# A reading of a busy GPU also asks for per-process utilisation.
	sh -c "$GPU_LOAD" > "$out/load-bench.log" 2>&1 &
	load=$!
	for _ in $(seq 120); do
		[ -n "$(nvidia-smi --query-compute-apps=pid --format=csv,noheader)" ] && break
		sleep 0.5
	done
	echo "busy GPU:" | tee -a "$out/gpu-bench.txt"
	WORKBENCH_TEST_REAL_GPU=1 "$dir/gpu.test" -test.run '^$' -test.bench 'BenchmarkRealGPUSample$' -test.benchtime 2s -test.count 3 -test.benchmem 2>&1 | tee -a "$out/gpu-bench.txt"
	pkill -KILL -P $load; kill -KILL $load 2> /dev/null
	wait $load 2> /dev/null

	# 2. The portal on the driver.
	gunzip -c "$dir/workbench.gz" > /tmp/workbench && chmod +x /tmp/workbench
	data=$(mktemp -d)
	export WORKBENCH_DATA_DIR=$data WORKBENCH_GPUS=${WORKBENCH_GPUS:-auto} WORKBENCH_ADDR=127.0.0.1:18080 \
		WORKBENCH_METRICS_ADDR=127.0.0.1:19400 WORKBENCH_SAMPLE_INTERVAL=1s \
		WORKBENCH_ADMIN_PASSWORD=real-gpu-check-1
	/tmp/workbench serve > "$out/serve.log" 2>&1 &
	serve=$!
	for _ in $(seq 120); do curl -fs http://127.0.0.1:18080/healthz > /dev/null && break; sleep 0.5; done
	curl -fs http://127.0.0.1:18080/healthz > /dev/null
	check "portal answers /healthz" $?
	grep 'GPU inventory ready' "$out/serve.log"
	grep -q 'GPU inventory ready.*backend=nvml.*simulated=false' "$out/serve.log"
	check "portal's inventory is NVML, not simulated" $?

	/tmp/workbench gpus --json > "$out/workbench-gpus.json" 2> "$out/workbench-gpus.err"
	[ "$(json "$out/workbench-gpus.json" "d['backend'], d['simulated'], len(d['items']), d['items'][0]['model']")" = "nvml False $count $model" ]
	check "workbench gpus: nvml, $count × $model" $?

	token=$(/tmp/workbench token create admin 2> "$out/token.err")
	api() { curl -fs -H "Authorization: Bearer $token" "http://127.0.0.1:18080/api/v1/$1"; }
	api gpus > "$out/api-gpus.json"
	[ "$(json "$out/api-gpus.json" "len(d['items']), d['items'][0]['model'], d['items'][0]['state']")" = "$count $model free" ]
	check "GET /api/v1/gpus: $count free × $model" $?
	api flavors > "$out/api-flavors.json"
	[ "$(json "$out/api-flavors.json" "sum(1 for f in d['items'] if f.get('gpu_model') == '$model')")" -gt 0 ]
	check "catalog seeded with a flavor for '$model'" $?
	[ "$(json "$out/api-flavors.json" "max(f['gpu_count'] for f in d['items'] if f.get('gpu_model') == '$model')")" -le "$count" ]
	check "no seeded flavor asks for more than the $count GPU(s) here" $?
	api admin/prices > "$out/api-prices.json"
	grep -q "\"$model\"" "$out/api-prices.json"
	check "default price seeded for '$model'" $?

	curl -fs http://127.0.0.1:19400/metrics > "$out/metrics-idle.txt"
	sh -c "$GPU_LOAD" > "$out/load.log" 2>&1 &
	load=$!
	busy=1
	for _ in $(seq 120); do
		sleep 1
		curl -fs http://127.0.0.1:19400/metrics > "$out/metrics-busy.txt"
		util=$(grep "^DCGM_FI_DEV_GPU_UTIL{.*gpu=\"0\".*modelName=\"$model\"" "$out/metrics-busy.txt" | awk '{print int($NF)}')
		if [ "${util:-0}" -ge 50 ]; then busy=0; break; fi
	done
	pkill -KILL -P $load; kill -KILL $load 2> /dev/null
	wait $load 2> /dev/null
	grep '^DCGM_FI_DEV_\(GPU_UTIL\|FB_USED\|POWER_USAGE\|GPU_TEMP\|TOTAL_ENERGY_CONSUMPTION\|SM_CLOCK\)' "$out/metrics-busy.txt"
	check "/metrics: DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",modelName=\"$model\"} ≥ 50 under load" $busy
	kill $serve
	wait $serve 2> /dev/null
	grep -c 'level=ERROR' "$out/serve.log"
	echo "$fails check(s) failed"
	[ $fails -eq 0 ]
}

case "${1:-}" in
build) build "${2:?DIR}" ;;
run) run "${2:?DIR}" "${3:?OUT}" ;;
*) echo "usage: $0 build DIR | run DIR OUT" >&2; exit 2 ;;
esac
