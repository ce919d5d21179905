#!/usr/bin/env bash
# Measures a minimal net/http proxy ("std"), a minimal fasthttp proxy
# ("fast", main.go) and a minimal gnet event-loop proxy (evloop.go:
# "evloop", one loop per CPU, and "evloop1", one loop) against nginx
# (upstream keepalive, as make bench configures it) and against the fake
# Jupyter container itself, with wrk, GET api/status (~150 bytes),
# targets interleaved each round. Besides req/s and p99 it prints each
# proxy's CPU time per request (nginx: master and workers), which a busy
# machine moves far less than req/s.
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
ngpid=$!
"$work/proxy" -mode fast -addr 127.0.0.1:18080 -upstream "$upstream" & pids+=($!); fastpid=$!
"$work/proxy" -mode std -addr 127.0.0.1:18082 -upstream "$upstream" & pids+=($!); stdpid=$!
"$work/proxy" -mode evloop -addr 127.0.0.1:18083 -upstream "$upstream" & pids+=($!); evpid=$!
"$work/proxy" -mode evloop -loops 1 -addr 127.0.0.1:18084 -upstream "$upstream" & pids+=($!); ev1pid=$!
for port in 18080 18081 18082 18083 18084; do
  until curl -s -o /dev/null "http://127.0.0.1:$port/"; do sleep 0.1; done
done

# cputicks PID...: user+system clock ticks of the processes and their
# children (nginx's workers), so CPU per request can be told apart from a
# busy machine's effect on req/s.
cputicks() {
  local t=0 p
  for p in "$@" $(pgrep -P "$1" 2>/dev/null); do
    t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0)))
  done
  echo "$t"
}
hz=$(getconf CLK_TCK)
hdr=(-H 'Authorization: token tok' -H 'Cookie: wb_session=s3cret')
printf '%-6s %-6s %-5s %10s %9s %12s\n' conns target round req/s p99 cpu/req-us
for c in "${conns[@]}"; do
  for r in $(seq 1 "$rounds"); do
    for t in nginx:18081 evloop:18083 evloop1:18084 fast:18080 std:18082 direct:-; do
      target=${t%%:*}; port=${t##*:}
      url=http://127.0.0.1:$port/wb/x/api/status
      [ "$port" = - ] && url=http://$upstream/wb/x/api/status
      case $target in nginx) pid=$ngpid ;; evloop) pid=$evpid ;; evloop1) pid=$ev1pid ;; fast) pid=$fastpid ;; std) pid=$stdpid ;; *) pid= ;; esac
      before=0; [ -n "$pid" ] && before=$(cputicks "$pid")
      out=$(wrk -t1 -c"$c" -d"$duration" --latency "${hdr[@]}" "$url")
      cpu=-
      if [ -n "$pid" ]; then
        n=$(awk '/requests in/{print $1}' <<<"$out")
        cpu=$(( ($(cputicks "$pid") - before) * 1000000 / hz / (n > 0 ? n : 1) ))
      fi
      printf '%-6s %-6s %-5s %10s %9s %12s\n' "$c" "$target" "$r" \
        "$(awk '/Requests\/sec/{print $2}' <<<"$out")" "$(awk '/ 99%/{print $2}' <<<"$out")" "$cpu"
    done
  done
done
