package proxy

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// The proxy's counters: requests by status class (refusals included, a
// WebSocket upgrade as 1xx), response and request-body bytes, and
// WebSocket data both ways.
func TestProxyMetricsCountRequestsAndBytes(t *testing.T) {
	m := NewMetrics()
	body := strings.Repeat("x", 1000)
	mux := http.NewServeMux()
	mux.Handle("/wb/abc/api/kernels/k1/channels", wsEcho())
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		io.WriteString(w, body)
	})
	f := newFixture(t, mux, func(o *Options) { o.Metrics = m })
	code := func(c string) float64 { return testutil.ToFloat64(m.requests.WithLabelValues(c)) }

	f.do("POST", "/wb/abc/api/contents", map[string]string{"Origin": f.front.URL}, strings.Repeat("y", 300))
	f.do("GET", "/wb/abc/lab", nil, "")
	f.do("GET", "/wb/missing/lab", nil, "")
	if code("2xx") != 2 || code("4xx") != 1 {
		t.Errorf("requests 2xx %v 4xx %v, want 2 and 1", code("2xx"), code("4xx"))
	}
	if got := testutil.ToFloat64(m.toWB); got != 300 {
		t.Errorf("to_workbench %v bytes, want the 300-byte body", got)
	}
	toClient := testutil.ToFloat64(m.toClient)
	if toClient < 2000 {
		t.Errorf("to_client %v bytes, want at least the two 1000-byte answers", toClient)
	}

	c, _, err := dialWS(t, wsURL(f.front.URL, "/wb/abc/api/kernels/k1/channels?session_id=s"), http.Header{"Origin": {f.front.URL}})
	if err != nil {
		t.Fatal(err)
	}
	// Bounds for a hung peer only, not for speed: a busy machine must not fail it.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	msg := strings.Repeat("z", 500)
	if err := c.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Read(ctx); err != nil {
		t.Fatal(err)
	}
	c.Close(websocket.StatusNormalClosure, "")
	// An upgrade is counted when its tunnel ends, after the close.
	for deadline := time.Now().Add(2 * time.Minute); code("1xx") == 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if code("1xx") != 1 {
		t.Errorf("upgrades counted %v, want 1", code("1xx"))
	}
	// Frames carry a header and the client's are masked: at least the
	// message each way.
	if got := testutil.ToFloat64(m.toWB); got < 300+500 {
		t.Errorf("to_workbench after the WebSocket message: %v", got)
	}
	if got := testutil.ToFloat64(m.toClient); got < toClient+500 {
		t.Errorf("to_client after the echo: %v (before %v)", got, toClient)
	}
}
