package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"workbench/handlers"
	"workbench/web"
)

// cmdHealth asks the portal on this host whether it serves (GET /healthz on
// its listen address): the container's health check. `workbench version`
// only proved the binary runs, so a hung or dead server read healthy. A
// portal that serves but cannot write its database (its disk full or
// read-only) fails it too, saying so: it answers 200, and only the body
// tells (handlers.APIHealth).
func cmdHealth(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("health", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c web.Config
	tmp := flag.NewFlagSet("", flag.ContinueOnError)
	c.BindFlags(tmp)
	addr := fs.String("addr", c.Addr, "the portal's listen address (WORKBENCH_ADDR)")
	timeout := fs.Duration("timeout", 3*time.Second, "how long to wait for the answer")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return fmt.Errorf("usage: workbench health [--addr HOST:PORT] [--timeout D]")
	}
	url, err := healthURL(*addr)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("the portal does not answer at %s: %w", url, err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("the portal at %s is not healthy: %s", url, res.Status)
	}
	// A body that is no JSON (an older portal's) is a plain 200: ok.
	var h handlers.APIHealth
	_ = json.NewDecoder(io.LimitReader(res.Body, 64<<10)).Decode(&h)
	if h.Status == handlers.HealthDegraded || h.Database == handlers.HealthNotWritable {
		msg := h.Message
		if msg == "" {
			msg = "its database cannot be written"
		}
		return fmt.Errorf("the portal at %s serves, but is not healthy: %s", url, msg)
	}
	fmt.Fprintln(stdout, "ok")
	return nil
}

// healthURL is the /healthz address of a portal listening on addr, as
// reached from this host (":8080" and "0.0.0.0:8080" are 127.0.0.1:8080).
func healthURL(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("--addr %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
		if ip != nil && ip.To4() == nil {
			host = "::1"
		}
	}
	return "http://" + net.JoinHostPort(host, port) + "/healthz", nil
}
