package proxy

import (
	"io"
	"net/http"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics counts what the proxy carries, for /metrics: requests by status
// class and bytes by direction. Labels stay few on purpose (no workbench
// id): per-workbench traffic is not what an operator graphs, and ids are
// unbounded. One Metrics may serve several proxies (path and notebook
// domain modes).
type Metrics struct {
	requests *prometheus.CounterVec
	bytes    *prometheus.CounterVec
	toClient prometheus.Counter
	toWB     prometheus.Counter
	// byClass[c] is requests' counter for status class c (1xx–5xx),
	// looked up once: WithLabelValues hashes its label on every call.
	byClass [6]prometheus.Counter
}

// NewMetrics makes the proxy's counters; register it on a registry.
func NewMetrics() *Metrics {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "workbench_proxy_requests_total",
			Help: "Requests to /wb/{id}/ (and notebook hosts), by status class: 1xx (WebSocket upgrades), 2xx–5xx; refused ones included.",
		}, []string{"code"}),
		bytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "workbench_proxy_bytes_total",
			Help: "Bytes the proxy carried: to_client (responses and WebSocket data from Jupyter) and to_workbench (request bodies and WebSocket data from the browser).",
		}, []string{"direction"}),
	}
	for i, c := range []string{"1xx", "2xx", "3xx", "4xx", "5xx"} {
		m.byClass[i+1] = m.requests.WithLabelValues(c)
	}
	m.toClient = m.bytes.WithLabelValues("to_client")
	m.toWB = m.bytes.WithLabelValues("to_workbench")
	return m
}

// Describe implements prometheus.Collector.
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) {
	m.requests.Describe(ch)
	m.bytes.Describe(ch)
}

// Collect implements prometheus.Collector.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	m.requests.Collect(ch)
	m.bytes.Collect(ch)
}

func (m *Metrics) request(code int) {
	if m == nil {
		return
	}
	if code == 0 {
		code = http.StatusOK // a handler that wrote a body without a status
	}
	if c := code / 100; c >= 1 && c <= 5 {
		m.byClass[c].Inc()
		return
	}
	m.requests.WithLabelValues(strconv.Itoa(code/100) + "xx").Inc()
}

// countingWriter records the status and counts the response bytes; Unwrap
// keeps Flush and Hijack reachable through http.ResponseController.
type countingWriter struct {
	http.ResponseWriter
	m    *Metrics
	code int
}

func (w *countingWriter) WriteHeader(code int) {
	if w.code == 0 || (w.code >= 100 && w.code < 200) {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *countingWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.m.toClient.Add(float64(n))
	return n, err
}

func (w *countingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// countingBody counts a request body as it goes upstream.
type countingBody struct {
	io.ReadCloser
	c prometheus.Counter
}

func (b countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.c.Add(float64(n))
	return n, err
}
