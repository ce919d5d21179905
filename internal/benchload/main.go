// Command benchload is `make bench-load` (issue 15): it starts the built
// portal binary on a fresh data directory, creates 500 users and 50 running
// fake-Jupyter workbenches (CPU-only), and drives the four pages users load
// most — /, /api/v1/workbenches, /usage, /gpus — with a load client the
// project did not write (wrk, Debian package wrk): at fixed rates as a
// Poisson stream over many sessions, and back to back. It prints p50/p99
// and req/s per page and rate, the portal's RSS, and what the portal logged
// at WARN and ERROR. It needs Docker and wrk; it is not part of `make test`.
//
// Every engine object the portal made is removed at the end, by the
// portal's install label.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/client"

	"workbench/internal/testsupport/testimages"
	"workbench/models"
	"workbench/orchestrator/runtime"
)

const adminPassword = "bench-admin-password"

var (
	binPath   = flag.String("bin", "bin/workbench", "the portal binary (make build)")
	nUsers    = flag.Int("users", 500, "users to create")
	nWB       = flag.Int("workbenches", 50, "running workbenches (one per user)")
	duration  = flag.Duration("duration", 10*time.Second, "length of each measurement")
	rateList  = flag.String("rates", "50,200,500", "fixed request rates (req/s)")
	b2bConns  = flag.Int("conns", 50, "connections of the back-to-back (wrk) measurement")
	goalP99   = flag.Duration("goal-p99", 50*time.Millisecond, "p99 goal at 200 req/s")
	launchMax = flag.Duration("launch-timeout", 10*time.Minute, "how long the workbenches may take to be running")
	pageList  = flag.String("pages", "/,/api/v1/workbenches,/usage,/gpus", "pages to drive, in this order")
	logLevel  = flag.String("log-level", "warn", "the portal's WORKBENCH_LOG_LEVEL (debug logs every request with its time taken)")
	logCopy   = flag.String("keep-log", "", "if set, the portal's log is copied to this file before its data directory is removed")
	profDir   = flag.String("profile", "", "if set, a directory where a CPU profile of each back-to-back run is written (through WORKBENCH_PPROF_ADDR)")
)

func main() {
	flag.Parse()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench-load:", err)
		os.Exit(1)
	}
}

type portal struct {
	cmd       *exec.Cmd
	dir, url  string
	logPath   string
	installID string
	cli       *client.Client
	admin     string
	pprofURL  string
	http      *http.Client
}

func run() error {
	if _, err := exec.LookPath("wrk"); err != nil {
		return errors.New("wrk is not installed (apt-get install wrk)")
	}
	ctx := context.Background()
	cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		return err
	}
	defer cli.Close()
	fmt.Println("building the fake Jupyter image…")
	ref, err := testimages.FakeJupyter(ctx, cli)
	if err != nil {
		return fmt.Errorf("fake Jupyter image: %w", err)
	}
	p, err := startPortal(ctx, cli)
	if err != nil {
		return err
	}
	defer p.stop()
	rssStart := rss(p.cmd.Process.Pid)
	fmt.Printf("portal up at %s, RSS after the first start: %s\n", p.url, rssStart)

	// The admin's API token through the CLI: what `workbench token create`
	// costs is part of the report.
	t0 := time.Now()
	p.admin, err = p.cliToken("admin")
	if err != nil {
		return err
	}
	fmt.Printf("workbench token create: %s\n", time.Since(t0).Round(time.Millisecond))

	if code, body, err := p.call("POST", "/api/v1/images", p.admin, fmt.Sprintf(`{"name":"fake","image":%q,"start_command":%q,"run_as_user":"1000","home_path":%q}`,
		ref, testimages.FakeJupyterStartCommand, testimages.FakeJupyterHome)); err != nil || code != http.StatusCreated {
		return fmt.Errorf("add the image: %d %s %v", code, body, err)
	}

	t0 = time.Now()
	if err := parallel(*nUsers, 4, func(i int) error {
		code, body, err := p.call("POST", "/api/v1/admin/users", p.admin, fmt.Sprintf(`{"username":"u%03d","password":"u%03d-password","role":"user"}`, i, i))
		if err != nil || code != http.StatusCreated {
			return fmt.Errorf("create user u%03d: %d %s %v", i, code, body, err)
		}
		return nil
	}); err != nil {
		return err
	}
	fmt.Printf("%d users created in %s (RSS %s)\n", *nUsers, time.Since(t0).Round(time.Millisecond), rss(p.cmd.Process.Pid))

	tokens := make([]string, *nWB)
	t0 = time.Now()
	for i := range tokens {
		if tokens[i], err = p.cliToken(fmt.Sprintf("u%03d", i)); err != nil {
			return err
		}
	}
	fmt.Printf("%d × workbench token create: %s each\n", *nWB, (time.Since(t0) / time.Duration(*nWB)).Round(time.Millisecond))

	t0 = time.Now()
	ids := make([]string, *nWB)
	if err := parallel(*nWB, 4, func(i int) error {
		code, body, err := p.call("POST", "/api/v1/workbenches", tokens[i], fmt.Sprintf(`{"name":"bench-%03d","image":"fake","flavor":"CPU small"}`, i))
		var wb struct{ ID string }
		_ = json.Unmarshal(body, &wb)
		if err != nil || code != http.StatusAccepted || wb.ID == "" {
			return fmt.Errorf("launch for u%03d: %d %s %v", i, code, body, err)
		}
		ids[i] = wb.ID
		return nil
	}); err != nil {
		return err
	}
	if err := p.waitRunning(*nWB, *launchMax); err != nil {
		return err
	}
	fmt.Printf("%d workbenches running after %s\n", *nWB, time.Since(t0).Round(time.Second))

	cookies := make([]string, *nWB)
	t0 = time.Now()
	if err := parallel(*nWB, 4, func(i int) error {
		var err error
		cookies[i], err = p.login(fmt.Sprintf("u%03d", i))
		return err
	}); err != nil {
		return err
	}
	fmt.Printf("%d logins in %s; RSS %s\n\n", *nWB, time.Since(t0).Round(time.Millisecond), rss(p.cmd.Process.Pid))

	var rates []int
	for _, s := range strings.Split(*rateList, ",") {
		r, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || r <= 0 {
			return fmt.Errorf("bad -rates %q", *rateList)
		}
		rates = append(rates, r)
	}
	pages := strings.Split(*pageList, ",")
	var rows []result
	for _, page := range pages {
		auth := func(i int) string { return "Cookie: " + cookies[i%len(cookies)] }
		if strings.HasPrefix(page, "/api/") {
			auth = func(i int) string { return "Authorization: Bearer " + tokens[i%len(tokens)] }
		}
		if err := p.answers200(page, auth(0)); err != nil {
			return err
		}
		for _, r := range rates {
			res, err := p.fixedRate(page, r, auth)
			if err != nil {
				return err
			}
			rows = append(rows, res)
			fmt.Println(res)
		}
		res, err := p.backToBack(page, auth)
		if err != nil {
			return err
		}
		rows = append(rows, res)
		fmt.Println(res)
	}
	rssAfter := rss(p.cmd.Process.Pid)
	report(rows, rssStart, rssAfter, p.logCounts())
	return nil
}

// startPortal runs `workbench serve` on a free port and a fresh data
// directory, and waits until /healthz answers.
func startPortal(ctx context.Context, cli *client.Client) (*portal, error) {
	dir, err := os.MkdirTemp("", "wb-bench-load-")
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	p := &portal{dir: dir, url: "http://" + addr, logPath: filepath.Join(dir, "portal.log"), cli: cli,
		http: &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 16}}}
	logf, err := os.Create(p.logPath)
	if err != nil {
		return nil, err
	}
	p.cmd = exec.Command(*binPath, "serve")
	p.cmd.Env = append(os.Environ(), "WORKBENCH_ADDR="+addr, "WORKBENCH_DATA_DIR="+dir, "WORKBENCH_ADMIN_PASSWORD="+adminPassword,
		"WORKBENCH_GPUS=mock:dgxh100", "WORKBENCH_LOG_LEVEL="+*logLevel, "WORKBENCH_PUBLIC_URL=http://"+addr)
	if *profDir != "" {
		pl, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		p.pprofURL = "http://" + pl.Addr().String()
		pl.Close()
		p.cmd.Env = append(p.cmd.Env, "WORKBENCH_PPROF_ADDR="+strings.TrimPrefix(p.pprofURL, "http://"))
	}
	p.cmd.Stdout, p.cmd.Stderr = logf, logf
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", *binPath, err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		res, err := p.http.Get(p.url + "/healthz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			p.stop()
			return nil, fmt.Errorf("the portal did not answer /healthz within 2 min (log: %s)", p.logPath)
		}
		time.Sleep(200 * time.Millisecond)
	}
	return p, nil
}

// stop ends the portal, then removes what it made on the engine (the
// portal never stops workbenches when it exits) and its data directory.
func (p *portal) stop() {
	if p.cmd != nil && p.cmd.Process != nil {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = p.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = p.cmd.Process.Kill()
			<-done
		}
	}
	// The install id is read once the portal has exited, so this process
	// holds no store beside the serving portal while it is measured.
	if store, err := models.Open(context.Background(), p.dir, slog.New(slog.DiscardHandler)); err == nil {
		p.installID, _ = store.InstallID(context.Background())
		store.Close()
	}
	if p.installID != "" {
		ctx := context.Background()
		f := filters.NewArgs(filters.Arg("label", runtime.LabelInstall+"="+p.installID))
		cs, _ := p.cli.ContainerList(ctx, container.ListOptions{All: true, Filters: f})
		for _, c := range cs {
			_ = p.cli.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true})
		}
		vs, _ := p.cli.VolumeList(ctx, volume.ListOptions{Filters: f})
		for _, v := range vs.Volumes {
			_ = p.cli.VolumeRemove(ctx, v.Name, true)
		}
		ns, _ := p.cli.NetworkList(ctx, network.ListOptions{Filters: f})
		for _, n := range ns {
			_ = p.cli.NetworkRemove(ctx, n.ID)
		}
		_ = runtime.NewFirewall(slog.New(slog.DiscardHandler)).Remove(ctx, p.installID)
		fmt.Printf("removed %d containers, %d volumes, %d networks of install %s\n", len(cs), len(vs.Volumes), len(ns), p.installID)
	}
	if *logCopy != "" {
		if b, err := os.ReadFile(p.logPath); err == nil {
			_ = os.WriteFile(*logCopy, b, 0o644)
		}
	}
	_ = os.RemoveAll(p.dir)
}

func (p *portal) cliToken(user string) (string, error) {
	out, err := exec.Command(*binPath, "token", "create", user, "--data-dir", p.dir).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "", fmt.Errorf("token create %s: %v: %s", user, err, ee.Stderr)
		}
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

func (p *portal) call(method, path, token, body string) (int, []byte, error) {
	req, err := http.NewRequest(method, p.url+path, strings.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := p.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res.StatusCode, b, err
}

func (p *portal) waitRunning(n int, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		code, body, err := p.call("GET", "/api/v1/workbenches?all=true", p.admin, "")
		if err != nil {
			return err
		}
		var list struct {
			Items []struct{ ID, State, Reason string }
		}
		if code != http.StatusOK || json.Unmarshal(body, &list) != nil {
			return fmt.Errorf("list workbenches: %d %s", code, body)
		}
		running := 0
		for _, w := range list.Items {
			switch w.State {
			case "running":
				running++
			case "failed":
				return fmt.Errorf("workbench %s failed: %s", w.ID, w.Reason)
			}
		}
		if running >= n {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d workbenches running after %s", running, n, limit)
		}
		time.Sleep(2 * time.Second)
	}
}

// login posts the login form as a browser would and returns "name=value"
// of the session cookie. A 503 (every password-check slot busy) is retried.
func (p *portal) login(user string) (string, error) {
	c := &http.Client{Timeout: time.Minute, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for attempt := 0; ; attempt++ {
		form := url.Values{"username": {user}, "password": {user + "-password"}}
		req, _ := http.NewRequest("POST", p.url+"/login", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", p.url)
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		res, err := c.Do(req)
		if err != nil {
			return "", err
		}
		res.Body.Close()
		if res.StatusCode == http.StatusServiceUnavailable && attempt < 50 {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		for _, ck := range res.Cookies() {
			// By name: a login sets other cookies too (wb_device, sent
			// only to /login), and the first one taken was that, so the
			// pages answered a redirect to /login (wrk counts 3xx as
			// fine) at 30,000 req/s.
			if ck.Value != "" && strings.HasSuffix(ck.Name, "workbench_session") && res.StatusCode == http.StatusSeeOther {
				return ck.Name + "=" + ck.Value, nil
			}
		}
		return "", fmt.Errorf("login %s: %d, no session cookie", user, res.StatusCode)
	}
}

// answers200 checks that page, asked with header, is the page itself (200):
// wrk counts a redirect as a good answer, and a load measured against the
// login redirect looked 20 times faster.
func (p *portal) answers200(page, header string) error {
	c := &http.Client{Timeout: time.Minute, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequest("GET", p.url+page, nil)
	k, v, _ := strings.Cut(header, ": ")
	req.Header.Set(k, v)
	res, err := c.Do(req)
	if err != nil {
		return err
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s as a logged-in user: %d (%s), want 200: the load would measure something else", page, res.StatusCode, res.Header.Get("Location"))
	}
	return nil
}

type result struct {
	page, mode   string
	reqs, non2xx int
	perSec       float64
	p50, p99     time.Duration
	target       int    // fixed rate, 0 back to back
	socketErrors string // wrk's "Socket errors" line, if any
}

func (r result) String() string {
	s := fmt.Sprintf("%-22s %-14s %8.1f req/s  p50 %8s  p99 %8s  (%d requests, %d not 2xx)", r.page, r.mode, r.perSec,
		r.p50.Round(10*time.Microsecond), r.p99.Round(10*time.Microsecond), r.reqs, r.non2xx)
	if r.socketErrors != "" {
		s += "  socket errors: " + r.socketErrors
	}
	return s
}

// fixedRate sends rate req/s for -duration from one wrk process: -conns
// connections (at least rate/2, so that each waits about half a second
// between its requests), each request taking the next of the sessions in
// turn. Before every request a connection waits a random time drawn from an
// exponential distribution whose mean spaces its requests rate/conns apart
// (wrk's Lua delay()), so the requests of all connections together arrive
// as a Poisson stream: people loading pages independently. hey was used
// here before: it paces each worker with its own ticker, workers started
// together tick together, and "200 req/s" arrived as bursts of 50 requests
// every quarter second whose queueing was measured as latency.
func (p *portal) fixedRate(page string, rate int, auth func(int) string) (result, error) {
	conns := max(*b2bConns, rate/2)
	meanGapMS := 1000 * float64(conns) / float64(rate)
	res, err := p.wrk(page, conns, meanGapMS, auth)
	res.mode, res.target = fmt.Sprintf("%d req/s", rate), rate
	return res, err
}

// backToBack runs wrk with -conns connections for -duration, each sending
// its next request as soon as the answer to the last one arrived.
func (p *portal) backToBack(page string, auth func(int) string) (result, error) {
	var prof sync.WaitGroup
	if p.pprofURL != "" {
		prof.Add(1)
		go func() {
			defer prof.Done()
			p.cpuProfile(page)
		}()
	}
	defer prof.Wait()
	res, err := p.wrk(page, *b2bConns, 0, auth)
	res.mode = fmt.Sprintf("b2b %d conns", *b2bConns)
	return res, err
}

// wrk runs wrk (one thread: it needs far less than a core, and the portal
// shares the machine) with conns connections for -duration and the
// loadScript of the sessions' auth headers.
func (p *portal) wrk(page string, conns int, meanGapMS float64, auth func(int) string) (result, error) {
	headers := make([]string, *nWB)
	for i := range headers {
		headers[i] = auth(i)
	}
	script := filepath.Join(p.dir, "load.lua")
	if err := os.WriteFile(script, []byte(loadScript(page, headers, meanGapMS)), 0o600); err != nil {
		return result{}, err
	}
	out, err := exec.Command("wrk", "-t", "1", "-c", strconv.Itoa(conns), "-d", duration.String(), "--latency", "-s", script, p.url+page).CombinedOutput()
	if err != nil {
		return result{}, fmt.Errorf("wrk %s: %v: %s", page, err, out)
	}
	res := parseWrk(string(out))
	res.page = page
	return res, nil
}

// loadScript is wrk's Lua script: each request carries the next of headers
// ("Name: value") in turn, and, if meanGapMS > 0, a connection waits an
// exponentially distributed time of that mean (whole milliseconds: wrk's
// delay unit) before each request.
func loadScript(page string, headers []string, meanGapMS float64) string {
	var lua strings.Builder
	lua.WriteString("local hs = {\n")
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		fmt.Fprintf(&lua, "  {[%q] = %q},\n", k, v)
	}
	fmt.Fprintf(&lua, "}\nlocal i = 0\nrequest = function()\n  i = i %% #hs + 1\n  return wrk.format(\"GET\", %q, hs[i])\nend\n", page)
	if meanGapMS > 0 {
		fmt.Fprintf(&lua, "math.randomseed(os.time())\ndelay = function()\n  return math.floor(-math.log(1 - math.random()) * %g + 0.5)\nend\n", meanGapMS)
	}
	return lua.String()
}

var (
	wrkRateRe     = regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`)
	wrkCountRe    = regexp.MustCompile(`(\d+) requests in`)
	wrkNon2xxRe   = regexp.MustCompile(`Non-2xx or 3xx responses: (\d+)`)
	wrkSocketErrs = regexp.MustCompile(`Socket errors: (.*)`)
)

// parseWrk reads req/s, the request count, non-2xx answers, socket errors
// and the 50th and 99th latency percentiles from wrk --latency's report.
func parseWrk(text string) result {
	var res result
	if m := wrkRateRe.FindStringSubmatch(text); m != nil {
		res.perSec, _ = strconv.ParseFloat(m[1], 64)
	}
	if m := wrkCountRe.FindStringSubmatch(text); m != nil {
		res.reqs, _ = strconv.Atoi(m[1])
	}
	if m := wrkNon2xxRe.FindStringSubmatch(text); m != nil {
		res.non2xx, _ = strconv.Atoi(m[1])
	}
	if m := wrkSocketErrs.FindStringSubmatch(text); m != nil {
		res.socketErrors = strings.TrimSpace(m[1])
	}
	res.p50 = wrkPercentile(text, "50%")
	res.p99 = wrkPercentile(text, "99%")
	return res
}

func wrkPercentile(text, pct string) time.Duration {
	m := regexp.MustCompile(`(?m)^\s+` + regexp.QuoteMeta(pct) + `\s+([0-9.]+)(us|ms|s)\s*$`).FindStringSubmatch(text)
	if m == nil {
		return 0
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	unit := map[string]time.Duration{"us": time.Microsecond, "ms": time.Millisecond, "s": time.Second}[m[2]]
	return time.Duration(v * float64(unit))
}

func quantile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	return d[int(q*float64(len(d)-1))]
}

// rss is the process's resident and peak resident memory, from /proc.
func rss(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "unknown"
	}
	var cur, peak string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "VmRSS:" {
			cur = kib(f[1])
		}
		if len(f) >= 2 && f[0] == "VmHWM:" {
			peak = kib(f[1])
		}
	}
	return cur + " (peak " + peak + ")"
}

func kib(s string) string {
	n, _ := strconv.ParseFloat(s, 64)
	return strconv.FormatFloat(n/1024, 'f', 1, 64) + " MB"
}

// logCounts counts the portal's WARN and ERROR lines and net/http's
// "superfluous response.WriteHeader" complaints.
func (p *portal) logCounts() map[string]int {
	out := map[string]int{}
	b, _ := os.ReadFile(p.logPath)
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case strings.Contains(line, "superfluous"):
			out["superfluous WriteHeader"]++
		case strings.Contains(line, "level=ERROR"):
			out["ERROR"]++
			out["ERROR "+logMsg(line)]++
		case strings.Contains(line, "level=WARN"):
			out["WARN"]++
			out["WARN "+logMsg(line)]++
		}
	}
	return out
}

var msgRe = regexp.MustCompile(`msg=("[^"]*"|\S+)`)

func logMsg(line string) string {
	if m := msgRe.FindStringSubmatch(line); m != nil {
		return m[1]
	}
	return "?"
}

func report(rows []result, rssStart, rssAfter string, logs map[string]int) {
	fmt.Println("\n## bench-load summary")
	fmt.Printf("%-22s %-14s %10s %10s %10s %8s  %s\n", "page", "load", "req/s", "p50", "p99", "non-2xx", "goal")
	for _, r := range rows {
		goal := ""
		if r.target == 200 {
			if r.p99 <= *goalP99 {
				goal = "p99 ≤ " + goalP99.String() + ": met"
			} else {
				goal = "p99 ≤ " + goalP99.String() + ": NOT met"
			}
		}
		fmt.Printf("%-22s %-14s %10.1f %10s %10s %8d  %s\n", r.page, r.mode, r.perSec,
			r.p50.Round(10*time.Microsecond), r.p99.Round(10*time.Microsecond), r.non2xx, goal)
	}
	var home, gpus float64
	for _, r := range rows {
		if r.target == 0 && r.page == "/" {
			home = r.perSec
		}
		if r.target == 0 && r.page == "/gpus" {
			gpus = r.perSec
		}
	}
	if home > 0 && gpus > 0 {
		met := "met"
		if home*3 < gpus {
			met = "NOT met"
		}
		fmt.Printf("back to back: / at %.0f req/s, /gpus at %.0f req/s: / within 3× of /gpus %s\n", home, gpus, met)
	}
	fmt.Printf("RSS after the first start: %s; after the load: %s\n", rssStart, rssAfter)
	fmt.Printf("portal log: %d ERROR, %d WARN, %d superfluous WriteHeader\n", logs["ERROR"], logs["WARN"], logs["superfluous WriteHeader"])
	for k, n := range logs {
		if strings.HasPrefix(k, "ERROR ") || strings.HasPrefix(k, "WARN ") {
			fmt.Printf("  %5d × %s\n", n, k)
		}
	}
	fmt.Println("(2-core machine shared with other work: figures vary between runs)")
}

// parallel runs f(0..n-1) on width goroutines and returns the first error.
func parallel(n, width int, f func(int) error) error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		next int
		errs []error
	)
	for w := 0; w < width; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				stop := i >= n || len(errs) > 0
				mu.Unlock()
				if stop {
					return
				}
				if err := f(i); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// cpuProfile saves a CPU profile of the portal taken during a back-to-back
// run to -profile/cpu-<page>.out (go tool pprof bin/workbench FILE).
func (p *portal) cpuProfile(page string) {
	secs := int(duration.Seconds()) - 1
	if secs < 1 {
		secs = 1
	}
	req, _ := http.NewRequest("GET", fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", p.pprofURL, secs), nil)
	req.Header.Set("Authorization", "Bearer "+p.admin)
	res, err := p.http.Do(req)
	if err != nil {
		fmt.Fprintln(os.Stderr, "profile:", err)
		return
	}
	defer res.Body.Close()
	name := "cpu-" + strings.Trim(strings.ReplaceAll(page, "/", "_"), "_") + ".out"
	if page == "/" {
		name = "cpu-home.out"
	}
	_ = os.MkdirAll(*profDir, 0o755)
	f, err := os.Create(filepath.Join(*profDir, name))
	if err != nil {
		fmt.Fprintln(os.Stderr, "profile:", err)
		return
	}
	defer f.Close()
	_, _ = io.Copy(f, res.Body)
}
