# Build the portal with cgo (go-nvml), run it on a slim Debian.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=1 CGO_CFLAGS="-O2 -g -Wno-deprecated-declarations" \
    go build -trimpath -ldflags "-s -w -X workbench/web.Version=${VERSION}" -o /out/workbench ./cmd/workbench

FROM debian:bookworm-slim
# iptables: the portal enforces the workbench egress policy on the host
# (needs network_mode: host and NET_ADMIN, see docker-compose.yml).
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates iptables \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/workbench /usr/local/bin/workbench
ENV WORKBENCH_DATA_DIR=/data WORKBENCH_ADDR=:8080 WORKBENCH_LOG_FORMAT=json
VOLUME /data
HEALTHCHECK --interval=30s --timeout=3s CMD ["/usr/local/bin/workbench", "version"]
ENTRYPOINT ["/usr/local/bin/workbench"]
CMD ["serve"]
