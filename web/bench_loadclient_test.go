package web_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"testing"
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

// runBenchExternal is runBench with the load client in its own process.
// It measures with workers connections and at least minOps operations; the
// warm-up and the serial phase are scaled down with minOps. cpu, when not
// nil, reads the proxy's CPU time, taken around the measured phase.
func runBenchExternal(b *testing.B, u string, hdr http.Header, workers, minOps int, cpu func() time.Duration) benchResult {
	b.Helper()
	scale := func(n int) int { return max(n*minOps/benchMinOps, 50) }
	if _, err := measureExternal(loadSpec{URL: u, Header: hdr, Workers: workers, Total: scale(benchWarmupOps)}); err != nil {
		b.Fatalf("warm-up: %v", err)
	}
	serial, err := measureExternal(loadSpec{URL: u, Header: hdr, Workers: 1, Total: scale(benchSerialOps)})
	if err != nil {
		b.Fatalf("serial phase: %v", err)
	}
	var cpu0 time.Duration
	if cpu != nil {
		cpu0 = cpu()
	}
	b.ResetTimer()
	r, err := measureExternal(loadSpec{URL: u, Header: hdr, Workers: workers, Total: max(b.N, minOps)})
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	if cpu != nil {
		r.cpu = cpu() - cpu0
	}
	r.serialP50, r.serialP99 = serial.p50, serial.p99
	reportBench(b, r)
	return r
}
