#!/usr/bin/env bash
# Measures a minimal net/http proxy ("std") and a minimal fasthttp proxy
# ("fast", main.go) against nginx (upstream keepalive, as make bench
# configures it) and against the fake Jupyter container itself, with wrk,
# GET api/status (~150 bytes), targets interleaved each round.
#
#   scripts/proxy-models/run.sh [CONNECTIONS...]   (default 1 16 64)
#
# Needs the fake Jupyter test image (go test -run TestFakeJupyterImage
# ./internal/testsupport/testimages/ builds it), nginx and wrk. ROUNDS and
# DURATION set the rounds per connection count (3) and each run's length (6s).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
rounds=${ROUNDS:-3}; duration=${DURATION:-6s}
conns=("$@"); [ ${#conns[@]} -gt 0 ] || conns=(1 16 64)
image=$(docker images --format '{{.Repository}}:{{.Tag}}' workbench-test/fakejupyter | head -1)
[ -n "$image" ] || { echo "no workbench-test/fakejupyter image: build it with go test -run TestFakeJupyterImage ./internal/testsupport/testimages/"; exit 1; }
work=$(mktemp -d)
name=wb-proxy-models-$$
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  docker rm -f "$name" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

(cd "$here" && go build -o "$work/proxy" .)
docker run -d --name "$name" --label workbench-test=proxy-models "$image" \
  /fakejupyter --ip=0.0.0.0 --port=8888 --base-url=/wb/x/ --token=tok >/dev/null
ip=$(docker inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "$name")
upstream=$ip:8888
until curl -sf -H 'Authorization: token tok' "http://$upstream/wb/x/api/status" >/dev/null; do sleep 0.2; done

mkdir -p "$work/nginx"
sed "s|NGDIR|$work/nginx|g; s|NGPORT|18081|; s|UPSTREAM|$upstream|" "$here/nginx.conf.tmpl" > "$work/nginx/nginx.conf"
nginx=$(command -v nginx || echo /usr/sbin/nginx)
"$nginx" -c "$work/nginx/nginx.conf" -p "$work/nginx" & pids+=($!)
"$work/proxy" -mode fast -addr 127.0.0.1:18080 -upstream "$upstream" & pids+=($!)
"$work/proxy" -mode std -addr 127.0.0.1:18082 -upstream "$upstream" & pids+=($!)
for port in 18080 18081 18082; do
  until curl -s -o /dev/null "http://127.0.0.1:$port/"; do sleep 0.1; done
done

hdr=(-H 'Authorization: token tok' -H 'Cookie: wb_session=s3cret')
printf '%-6s %-6s %-5s %10s %9s\n' conns target round req/s p99
for c in "${conns[@]}"; do
  for r in $(seq 1 "$rounds"); do
    for t in nginx:18081 fast:18080 std:18082 direct:-; do
      target=${t%%:*}; port=${t##*:}
      url=http://127.0.0.1:$port/wb/x/api/status
      [ "$port" = - ] && url=http://$upstream/wb/x/api/status
      out=$(wrk -t1 -c"$c" -d"$duration" --latency "${hdr[@]}" "$url")
      printf '%-6s %-6s %-5s %10s %9s\n' "$c" "$target" "$r" \
        "$(awk '/Requests\/sec/{print $2}' <<<"$out")" "$(awk '/ 99%/{print $2}' <<<"$out")"
    done
  done
done
