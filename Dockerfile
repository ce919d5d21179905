# Build the portal with cgo (go-nvml), run it on a slim Debian.
#
# Both base images are build arguments so that the image builds where Docker
# Hub is not reachable: point them at a mirror (registry.example.cn/library/
# golang:1.26-bookworm) or at images made locally (README "Building without
# Docker Hub"; scripts/install-test-bases.sh makes them with debootstrap).
# GO_IMAGE needs Go 1.26 and gcc; RUNTIME_IMAGE a Debian/glibc system.
ARG GO_IMAGE=golang:1.26-bookworm
ARG RUNTIME_IMAGE=debian:bookworm-slim

FROM ${GO_IMAGE} AS build
WORKDIR /src
# Never download another toolchain during a build. GOPROXY: where modules
# come from (https://goproxy.cn where proxy.golang.org is blocked, or a
# proxy on the build host).
ENV GOTOOLCHAIN=local
ARG GOPROXY=https://proxy.golang.org,direct
COPY go.mod go.sum ./
RUN go mod download
# The big dependencies (sqlite3 in C above all) compiled in a layer of their
# own, reused by every build until go.mod changes. The list only warms the
# cache: a package no longer required is skipped, not an error.
RUN CGO_ENABLED=1 go build github.com/mattn/go-sqlite3 gorm.io/gorm gorm.io/driver/sqlite \
      github.com/gin-gonic/gin github.com/docker/docker/client github.com/NVIDIA/go-nvml/pkg/nvml \
      github.com/prometheus/client_golang/prometheus github.com/pressly/goose/v3 github.com/a-h/templ \
      golang.org/x/crypto/ssh github.com/alexedwards/scs/v2 \
    || echo "dependency cache warm-up skipped"
COPY . .
ARG VERSION=dev
# The same flags as the warm-up (Go's default cgo flags, no -trimpath: both
# are part of Go's cache key), so its compiled packages are reused; nvml.h's
# deprecation warnings are printed there, once.
RUN CGO_ENABLED=1 go build -ldflags "-s -w -X workbench/web.Version=${VERSION}" -o /out/workbench ./cmd/workbench

FROM ${RUNTIME_IMAGE}
# iptables: the portal enforces the workbench egress policy on the host
# (needs network_mode: host and NET_ADMIN, see docker-compose.yml).
# A base that already has them (a local debootstrap root) needs no apt.
RUN if ! command -v iptables >/dev/null 2>&1 || [ ! -f /etc/ssl/certs/ca-certificates.crt ]; then \
      apt-get update && apt-get install -y --no-install-recommends ca-certificates iptables \
      && rm -rf /var/lib/apt/lists/*; \
    fi
COPY --from=build /out/workbench /usr/local/bin/workbench
ENV WORKBENCH_DATA_DIR=/data WORKBENCH_ADDR=:8080 WORKBENCH_LOG_FORMAT=json
VOLUME /data
# Asks the running server (GET /healthz on WORKBENCH_ADDR), not only
# whether the binary starts.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s CMD ["/usr/local/bin/workbench", "health"]
ENTRYPOINT ["/usr/local/bin/workbench"]
CMD ["serve"]
