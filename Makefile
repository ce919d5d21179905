# Workbench build. go-nvml needs cgo; its headers print deprecation warnings.
export CGO_ENABLED := 1
export CGO_CFLAGS := -O2 -g -Wno-deprecated-declarations

GO      ?= go
TEMPL   := $(GO) tool templ
BIN     := bin/workbench
PKGS    := ./...

.PHONY: build run demo test test-short test-install k8s-tools generate lint bench bench-load fuzz clean

VERSION := $(shell git describe --always --dirty 2>/dev/null || echo dev)

build: generate
	$(GO) build -ldflags "-X workbench/web.Version=$(VERSION)" -o $(BIN) ./cmd/workbench

run: build
	$(BIN) serve

# The demo has its own port and data directory, so it runs beside `make run`
# (and never mixes simulated GPUs into the real install's database).
DEMO_ADDR ?= :8081
demo: build
	WORKBENCH_GPUS=mock:dgxh100 WORKBENCH_GPU_DEMO_LOAD=1 WORKBENCH_MOCK_MIG=7:1g.10gb*7 WORKBENCH_ADDR=$(DEMO_ADDR) WORKBENCH_DATA_DIR=./data-demo $(BIN) serve

generate:
	$(TEMPL) generate -path templates

# -timeout is a safety net for a hung test, not a pace: on a loaded 2-core
# machine the web package alone has taken over half an hour.
test: lint k8s-tools
	$(GO) test -count=1 -timeout 80m $(PKGS)

# The docker compose install, end to end: builds the portal image from base
# images made with debootstrap (cached in the engine), runs docker-compose.yml,
# launches a workbench through it, `down`, `up`, finds it adopted. Needs root,
# debootstrap and docker compose (or Debian's docker-compose).
test-install:
	WORKBENCH_INSTALL_TEST=1 $(GO) test -count=1 -timeout 60m -run 'TestComposeInstall|TestTLSProxyExamplesParse' -v ./internal/installtest

# The real Kubernetes control plane the Kubernetes tests run
# (internal/testsupport/kubecluster): kube-apiserver, kube-scheduler,
# kube-controller-manager, etcd and kwok, built from the Go module proxy
# into $WORKBENCH_K8S_TOOLS (default ~/.cache/workbench/k8s-tools) the first
# time, 10 to 20 minutes on 2 cores; a second after that.
k8s-tools:
	GO=$(GO) scripts/k8s-test-tools.sh

test-short:
	$(GO) test -short -count=1 $(PKGS)

lint:
	@out=$$(gofmt -l $$(git ls-files -co --exclude-standard '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	@$(GO) mod tidy -diff || { echo "go.mod/go.sum are not tidy: run go mod tidy and commit"; exit 1; }
	@before=$$(cat templates/*_templ.go | sha256sum); \
	  $(TEMPL) generate -path templates >/dev/null 2>&1; \
	  after=$$(cat templates/*_templ.go | sha256sum); \
	  if [ "$$before" != "$$after" ]; then echo "generated templ code was not current: it is regenerated now, commit it"; exit 1; fi

# Fuzz targets: `make test` runs each one's seed corpus (the f.Add seeds
# and testdata/fuzz) as ordinary tests, deterministic and quick, with no
# random exploration; `make fuzz` explores each for FUZZTIME (go test
# fuzzes one target at a time). web/route_lists_test.go keeps
# FuzzAPIJSONBodies covering every JSON endpoint of the route table.
FUZZTIME ?= 60s
FUZZ_TARGETS := ./models:FuzzStartCommand ./handlers:FuzzSafeNext ./handlers/proxy:FuzzParsePath \
	./handlers/proxy:FuzzProxyPath ./models/pricing:FuzzParseCalculatorInput ./web:FuzzAPIJSONBodies

fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
	  pkg=$${t%%:*}; name=$${t##*:}; \
	  echo "fuzz $$name in $$pkg for $(FUZZTIME)"; \
	  $(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) $$pkg; \
	done

bench:
	$(GO) test -run '^$$' -bench . -benchtime 3s -count 1 $(PKGS)

# Load benchmark (issue 15; not part of `make test`): the built portal with
# 500 users and 50 running fake-Jupyter workbenches, its four busiest pages
# driven by wrk at fixed rates (a Poisson stream) and back to back. Needs
# Docker and wrk (Debian: apt-get install wrk). BENCH_LOAD_FLAGS, e.g.
# "-duration 20s -rates 50,200".
BENCH_LOAD_FLAGS ?=
bench-load: build
	$(GO) run ./internal/benchload -bin $(BIN) $(BENCH_LOAD_FLAGS)

clean:
	rm -rf bin
