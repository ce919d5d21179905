package web_test

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"time"
)

// The HTTP proxy benchmark drives all three targets — the container
// directly, the portal and nginx — from a separate load-client process: the
// test binary itself, started again with loadClientEnv set. In-process, the
// client's goroutines would compete with the portal for the same Go
// scheduler while nginx ran in processes of its own.
const loadClientEnv = "WORKBENCH_BENCH_LOAD_CLIENT"

type loadSpec struct {
	URL     string
	Header  http.Header
	Workers int
	Total   int
}

type loadResult struct {
	Ops                     int
	ElapsedNs, P50Ns, P99Ns int64
	Err                     string
}

// runLoadClient is the load-client process: it runs one measurement and
// prints its result as JSON.
func runLoadClient(specJSON string) int {
	var spec loadSpec
	var out loadResult
	if err := json.Unmarshal([]byte(specJSON), &spec); err != nil {
		out.Err = err.Error()
	} else {
		client := &http.Client{Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: spec.Workers, MaxIdleConns: spec.Workers}}
		get := func() error {
			req, err := http.NewRequest(http.MethodGet, spec.URL, nil)
			if err != nil {
				return err
			}
			for k, v := range spec.Header {
				req.Header[k] = v
			}
			res, err := client.Do(req)
			if err != nil {
				return err
			}
			n, _ := io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusOK || n == 0 {
				return fmt.Errorf("GET %s: status %d, %d bytes", spec.URL, res.StatusCode, n)
			}
			return nil
		}
		r, err := measure(spec.Workers, spec.Total, func() (func() error, func(), error) { return get, func() {}, nil })
		if err != nil {
			out.Err = err.Error()
		}
		out.Ops, out.ElapsedNs, out.P50Ns, out.P99Ns = r.ops, int64(r.elapsed), int64(r.p50), int64(r.p99)
	}
	_ = json.NewEncoder(os.Stdout).Encode(out)
	if out.Err != "" {
		return 1
	}
	return 0
}

// measureExternal runs one measurement in a load-client process.
func measureExternal(spec loadSpec) (benchResult, error) {
	b, _ := json.Marshal(spec)
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), loadClientEnv+"="+string(b))
	raw, err := cmd.Output()
	var out loadResult
	if jerr := json.Unmarshal(raw, &out); jerr != nil {
		return benchResult{}, fmt.Errorf("load client: %v (%v): %s", err, jerr, raw)
	}
	if out.Err != "" {
		return benchResult{}, fmt.Errorf("load client: %s", out.Err)
	}
	return benchResult{ops: out.Ops, elapsed: time.Duration(out.ElapsedNs), p50: time.Duration(out.P50Ns), p99: time.Duration(out.P99Ns)}, nil
}

// measureTarget is one round against one target, the load client in its
// own process: a warm-up, a serial phase (one connection) and the measured
// phase with workers connections and minOps operations; the warm-up and
// serial phase are scaled down with minOps. cpu, when not nil, reads the
// proxy's CPU time, taken around the measured phase.
func measureTarget(u string, hdr http.Header, workers, minOps int, cpu func() time.Duration) (benchResult, error) {
	scale := func(n int) int { return max(n*minOps/benchMinOps, 50) }
	if _, err := measureExternal(loadSpec{URL: u, Header: hdr, Workers: workers, Total: scale(benchWarmupOps)}); err != nil {
		return benchResult{}, fmt.Errorf("warm-up: %w", err)
	}
	serial, err := measureExternal(loadSpec{URL: u, Header: hdr, Workers: 1, Total: scale(benchSerialOps)})
	if err != nil {
		return benchResult{}, fmt.Errorf("serial phase: %w", err)
	}
	var cpu0 time.Duration
	if cpu != nil {
		cpu0 = cpu()
	}
	r, err := measureExternal(loadSpec{URL: u, Header: hdr, Workers: workers, Total: minOps})
	if err != nil {
		return benchResult{}, err
	}
	if cpu != nil {
		r.cpu = cpu() - cpu0
	}
	r.serialP50, r.serialP99 = serial.p50, serial.p99
	return r, nil
}

// medianResult is each figure's median over rounds (an odd number keeps
// it a measured value): throughput from the round with the median rate,
// every percentile and the CPU per request on their own.
func medianResult(rounds []benchResult) benchResult {
	med := func(key func(benchResult) float64) benchResult {
		s := slices.Clone(rounds)
		slices.SortFunc(s, func(a, b benchResult) int { return cmp.Compare(key(a), key(b)) })
		return s[len(s)/2]
	}
	r := med(benchResult.perSec)
	r.p50 = med(func(x benchResult) float64 { return float64(x.p50) }).p50
	r.p99 = med(func(x benchResult) float64 { return float64(x.p99) }).p99
	r.serialP50 = med(func(x benchResult) float64 { return float64(x.serialP50) }).serialP50
	r.serialP99 = med(func(x benchResult) float64 { return float64(x.serialP99) }).serialP99
	// CPU per request, scaled back to r's operation count.
	c := med(func(x benchResult) float64 { return float64(x.cpu) / float64(x.ops) })
	r.cpu = time.Duration(float64(c.cpu) / float64(c.ops) * float64(r.ops))
	return r
}
