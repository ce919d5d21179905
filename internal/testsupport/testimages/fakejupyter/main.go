// Command fakejupyter is a tiny stand-in for JupyterLab used by the
// portal's tests. It speaks just enough of Jupyter's HTTP and WebSocket API
// (status, kernels, a kernel channel, the lab page) under a base URL with
// token auth, plus a few test-only endpoints that report what the process
// sees from inside its container (capabilities, headers, reachability,
// home directory).
//
// It is built statically (CGO_ENABLED=0) and copied into a FROM scratch
// image by testimages.FakeJupyter.
package main

import (
	"context"
	"errors"
	"flag"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	port := flag.Int("port", envInt("JUPYTER_PORT", 8888), "port to listen on")
	ip := flag.String("ip", envOr("JUPYTER_IP", "0.0.0.0"), "address to listen on")
	base := flag.String("base-url", envOr("JUPYTER_BASE_URL", "/"), "URL prefix everything is served under")
	token := flag.String("token", os.Getenv("JUPYTER_TOKEN"), "token required on every request (empty: none)")
	ping := flag.Duration("ws-ping-interval", 30*time.Second, "keep-alive ping on kernel WebSockets, as Jupyter's ws_ping_interval (0: none)")
	// A real JupyterLab takes a while to shut its kernels down; tests that
	// cut a request in the middle of a stop need a stop that lasts.
	shutdownDelay := flag.Duration("shutdown-delay", 0, "wait this long after SIGTERM before shutting down (tests of slow stops)")
	extraPort := flag.Int("extra-port", 0, "also serve an echo app on this port (tests of extra ports); 0: none")
	// A real JupyterLab takes seconds to start; on a quiet machine the
	// fake is ready before a browser has loaded the workbench page, so a
	// test that must watch a launch in progress holds it back until it
	// creates this file.
	readyFile := flag.String("ready-file", "", "do not listen until this file exists (tests that watch a launch in progress); empty: listen at once")
	flag.Parse()

	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	srv := newServer(normalizeBase(*base), *token, log)
	srv.pingEvery = *ping
	if *extraPort != 0 {
		serveExtraPort(*ip, *extraPort, log)
	}

	addr := net.JoinHostPort(*ip, strconv.Itoa(*port))
	hs := &http.Server{Addr: addr, Handler: srv, ReadHeaderTimeout: 10 * time.Second}

	// As PID 1 in a container SIGTERM is ignored unless handled; handling
	// it lets `docker stop` finish at once instead of waiting for SIGKILL.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	go func() {
		<-ctx.Done()
		time.Sleep(*shutdownDelay)
		log.Info("shutting down")
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
	}()

	if *readyFile != "" && !waitForFile(ctx, *readyFile, log) {
		return // stopped before it was let start
	}
	log.Info("Fake JupyterLab listening", "url", "http://"+addr+srv.base)
	if err := hs.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Error("serve", "err", err)
		os.Exit(1)
	}
}

// normalizeBase makes the base URL start and end with "/", as Jupyter does.
func normalizeBase(b string) string {
	b = "/" + strings.Trim(b, "/") + "/"
	if b == "//" {
		return "/"
	}
	return b
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func envInt(k string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(k)); err == nil {
		return n
	}
	return def
}
