package web

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/alexedwards/scs/v2"
	"github.com/gin-gonic/gin"

	"workbench/handlers"
	"workbench/handlers/proxy"
	"workbench/models"
	"workbench/orchestrator"
	"workbench/orchestrator/gpu"
	"workbench/orchestrator/runtime"
	"workbench/orchestrator/runtime/kube"
	"workbench/static"
	"workbench/web/sshgate"
)

// Version is set at build time (-ldflags "-X workbench/web.Version=…").
var Version = "dev"

// SessionCookieName is the portal's session cookie.
const SessionCookieName = "workbench_session"

// Server is the assembled portal.
type Server struct {
	cfg      Config
	log      *slog.Logger
	Store    *models.Store
	inv      gpu.Inventory
	sampler  *gpu.Sampler
	demoLoad *gpu.MockLoad // WORKBENCH_GPU_DEMO_LOAD (telemetry.go)
	sessions *scs.SessionManager
	sstore   *models.SessionStore
	rt       runtime.Runtime
	Manager  *orchestrator.Manager
	handler  http.Handler
	// metrics serves /metrics on WORKBENCH_METRICS_ADDR (nil: not separate).
	metrics http.Handler
	// proxyMetrics counts both proxies' requests and bytes.
	proxyMetrics *proxy.Metrics
	// pprof serves /debug/pprof on WORKBENCH_PPROF_ADDR (nil: off).
	pprof http.Handler
	// ssh serves WORKBENCH_SSH_ADDR (web/sshgate).
	ssh *sshgate.Server
	// GPUWatch fires "notify me when a GPU frees" (orchestrator/gpu_watch.go).
	GPUWatch *orchestrator.GPUWatcher
	// stopEndingProxied ends the subscription of endProxiedOnStop.
	stopEndingProxied func()
}

// NewServer opens the database, the GPU inventory and builds the HTTP
// handler. out receives the one-time bootstrap message (admin password).
func NewServer(ctx context.Context, cfg Config, log *slog.Logger, out io.Writer) (*Server, error) {
	store, err := models.Open(ctx, cfg.DataDir, log)
	if err != nil {
		return nil, err
	}
	gpuOpts, demo, err := gpuOptions(cfg)
	if err != nil {
		store.Close()
		return nil, err
	}
	// On Kubernetes the nodes are the GPU pool (docs/kubernetes.md).
	var krt *kube.Runtime
	var inv gpu.Inventory
	if cfg.Kube.Runtime == RuntimeKubernetes {
		if krt, err = newKubeRuntime(cfg, log); err != nil {
			store.Close()
			return nil, err
		}
		inv = krt.Inventory()
	} else if inv, err = gpu.New(cfg.GPUMode(), append([]gpu.Option{gpu.WithLogger(log)}, gpuOpts...)...); err != nil {
		store.Close()
		return nil, fmt.Errorf("GPU inventory (WORKBENCH_GPUS=%s): %w", cfg.GPUs, err)
	}
	log.Info("GPU inventory", "backend", inv.Backend(), "simulated", inv.Simulated(), "status", inv.Status())
	s := &Server{cfg: cfg, log: log, Store: store, inv: inv, demoLoad: demo}
	if krt != nil {
		s.rt = krt // before bootstrap: Close must stop its watches
	}
	s.sampler = gpu.NewSampler(inv, cfg.SampleEvery, gpu.DefaultSampleCapacity, log)
	s.sampler.SetIdleThreshold(uint32(cfg.GPUIdlePercent))
	if cfg.SampleMaxAge > 0 {
		s.sampler.SetMaxAge(cfg.SampleMaxAge)
	}
	s.sstore = store.SessionStore()
	s.sessions = newSessionManager(s.sstore, cfg, log)
	pool := orchestrator.NewPool(inv, s.sampler, store)
	if krt == nil {
		docker, err := runtime.NewDocker(runtime.WithLogger(log))
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("Docker client (DOCKER_HOST=%q): %w", os.Getenv("DOCKER_HOST"), err)
		}
		// Every pull goes through the admin's registry mirrors, read at each
		// pull so that a change applies at once.
		docker.SetMirrorSource(func(ctx context.Context) (runtime.Mirrors, error) {
			text, err := store.RegistryMirrors(ctx)
			if err != nil {
				return nil, err
			}
			return runtime.ParseMirrors(text)
		})
		s.rt = docker
	}
	if err := s.rt.Ping(ctx); err != nil {
		// The portal still serves: pages say the engine is down, launches get 503.
		log.Warn("container engine not reachable; workbenches cannot start until it is", "runtime", cfg.Kube.Runtime, "err", err)
	}
	if cfg.NewIdentity {
		if err := s.newIdentity(ctx, out); err != nil {
			s.Close()
			return nil, err
		}
	}
	if err := store.PinCurrency(ctx, cfg.Currency); err != nil {
		s.Close()
		return nil, err
	}
	installID, err := store.InstallID(ctx)
	if err != nil {
		s.Close()
		return nil, err
	}
	cfg.Workbenches.DataIdentity = dataIdentity(cfg.DataDir)
	cfg.Workbenches.Currency = cfg.Currency
	if cfg.Workbenches.SavedImageQuotaBytes == 0 && cfg.SavedImageQuotaGiB != 0 {
		cfg.Workbenches.SavedImageQuotaBytes = int64(cfg.SavedImageQuotaGiB) << 30
	}
	s.Manager = orchestrator.NewManager(store, pool, s.rt, installID, cfg.Workbenches, log)
	if krt != nil {
		// The egress policy is a NetworkPolicy there, not iptables.
		s.Manager.UseFirewall(krt.Firewall())
	}
	// After the manager: the default GPU flavors are sized by the server's
	// CPUs and memory, which the engine reports.
	if err := s.bootstrap(ctx, out); err != nil {
		s.Close()
		return nil, err
	}
	h := handlers.New(store, s.sessions, pool, s.Manager, handlers.Config{PublicURL: cfg.PublicURL, Currency: cfg.Currency, Version: Version,
		NotebookDomain: cfg.NotebookDomain, LoginMemory: int64(cfg.LoginMemoryMiB) << 20, SSHAddr: cfg.SSHAddr,
		OIDC: cfg.oidcHandlerConfig(), SendsEmail: cfg.SMTPAddr != ""}, log)
	s.handler = s.buildHandler(h)
	if cfg.PprofAddr != "" {
		s.pprof = pprofHandler(h)
	}
	s.GPUWatch = orchestrator.NewGPUWatcher(store, pool, s.Manager.Events(), 0, log)
	// Fired GPU watches and what happens to a user's own workbenches go
	// out by the same channels.
	senders := cfg.NoticeSenders()
	s.GPUWatch.SendVia(cfg.PublicURL, senders...)
	s.Manager.NotifyOwnersVia(cfg.PublicURL, senders...)
	sshOpt := sshgate.Options{DataDir: cfg.DataDir, ActivityEvery: cfg.ActivityEvery}
	if u, err := url.Parse(cfg.PublicURL); err == nil {
		sshOpt.PublicHost = u.Hostname() // as the SSH keys page names it
		if u.Host != "" {
			sshOpt.SettingsURL = u.JoinPath("settings", "ssh-keys").String()
		}
	}
	s.ssh = sshgate.New(store, s.Manager, sshOpt, log)
	h.SetSSHCloser(s.ssh.CloseUser)
	s.stopEndingProxied = endProxiedOnStop(s.Manager.Events(), h.Live())
	return s, nil
}

// endProxiedOnStop ends the proxied requests (downloads, uploads, kernel
// WebSockets) of a workbench that leaves the running state, as the SSH
// gate ends its connections: a stopped container's network can vanish
// with data still queued, and a download it was serving then hung for
// minutes, until TCP keepalive gave up on the connection
// (proxy.Live.CloseWorkbench). It returns the function that stops it.
func endProxiedOnStop(events *orchestrator.Broker, live *proxy.Live) func() {
	updates, unsubscribe := events.Subscribe("")
	go func() {
		for u := range updates {
			// A launch's progress (pulling 40 %…) comes before it ever
			// runs: nothing is proxied to it yet, and each such update
			// would scan every proxied request under Live's lock. A
			// running workbench never goes back to a launch state without
			// a stop, whose update ends its requests.
			if u.State != models.StateRunning && !slices.Contains(models.LaunchingStates, u.State) {
				live.CloseWorkbench(u.ID)
			}
		}
	}()
	return unsubscribe
}

// bootstrap creates the first admin and the default catalog.
func (s *Server) bootstrap(ctx context.Context, out io.Writer) error {
	created, generated, err := s.Store.EnsureAdmin(ctx, s.cfg.AdminPassword)
	if err != nil {
		return fmt.Errorf("create the admin account: %w", err)
	}
	if created {
		if generated != "" {
			fmt.Fprintf(out, "\n  First start: log in as 'admin' with password %s\n  (shown once; set WORKBENCH_ADMIN_PASSWORD to choose it instead)\n\n", generated)
		} else {
			fmt.Fprintf(out, "\n  First start: log in as 'admin' with the password in WORKBENCH_ADMIN_PASSWORD\n\n")
		}
	}
	if _, err := s.Store.InstallID(ctx); err != nil {
		return err
	}
	devs, err := s.inv.Devices(ctx)
	if err != nil {
		return fmt.Errorf("read GPU inventory: %w", err)
	}
	var models []string
	seen := map[string]bool{}
	migProfiles := map[string]string{} // MIG profile → GPU model
	host := catalogHost(ctx, s.Manager, devs, s.cfg.Kube.Runtime == RuntimeKubernetes)
	for _, d := range devs {
		if !seen[d.Model] {
			seen[d.Model] = true
			models = append(models, d.Model)
		}
		for _, mi := range d.MIG {
			migProfiles[mi.Profile] = d.Model
		}
	}
	if err := s.Store.SeedDefaultPrices(ctx, models); err != nil {
		return fmt.Errorf("seed prices: %w", err)
	}
	if err := s.Store.SeedMIGPrices(ctx, migProfiles); err != nil {
		return fmt.Errorf("seed MIG prices: %w", err)
	}
	if _, err := s.Store.SeedCloudPrices(ctx); err != nil {
		return fmt.Errorf("seed cloud prices: %w", err)
	}
	if err := s.Store.SeedCatalogFor(ctx, models, host); err != nil {
		return err
	}
	if s.cfg.GPUDemoLoad && len(devs) > 0 {
		// make demo: a flavor whose idle holder is warned, then released.
		if err := s.Store.SeedGPUIdleDemoFlavor(ctx, devs[0].Model, DemoGPUIdleTimeout); err != nil {
			return err
		}
	}
	return s.Store.SeedMIGFlavors(ctx, migProfiles)
}

// catalogHost is what the default GPU flavors are sized by: the GPUs of
// each model and the server's CPUs and memory. On Kubernetes the pool is
// many nodes, so "per GPU of this server" means nothing: the defaults.
func catalogHost(ctx context.Context, m *orchestrator.Manager, devs []gpu.Device, onKubernetes bool) models.CatalogHost {
	if onKubernetes {
		return models.CatalogHost{}
	}
	host := models.CatalogHost{GPUs: map[string]int{}, MIGGPUs: map[string]int{}, CPUs: m.HostCPUs(ctx), MemoryBytes: m.HostMemoryBytes(ctx)}
	if host.MemoryBytes == 0 {
		// The engine did not answer (the CPU count has fallen back to
		// this machine's already): size by this machine's memory rather
		// than give every GPU 64 GiB a small server cannot launch. Only
		// for seeding: Manager.HostMemoryBytes stays "unknown", so a
		// launch is never refused by the portal's own machine's size
		// while the engine it runs on cannot be asked.
		host.MemoryBytes = localMemoryBytes()
	}
	for _, d := range devs {
		host.GPUs[d.Model]++
		if d.MIGEnabled {
			host.MIGGPUs[d.Model]++
		}
	}
	return host
}

// DemoGPUIdleTimeout is the GPU-idle timeout of the flavor make demo
// (WORKBENCH_GPU_DEMO_LOAD) seeds: the demo load keeps even GPUs at 0–3%,
// so their holder is warned after 5 min and released after 10.
const DemoGPUIdleTimeout = 10 * time.Minute

func trusted(publicURL string) []string {
	if publicURL == "" {
		return nil
	}
	return []string{publicURL}
}

func newSessionManager(store scs.Store, cfg Config, log *slog.Logger) *scs.SessionManager {
	sm := scs.New()
	sm.Store = store
	sm.Lifetime = cfg.SessionMaxAge // absolute expiry
	sm.IdleTimeout = cfg.SessionIdle
	sm.Cookie.Name = cfg.sessionCookieName()
	sm.Cookie.HttpOnly = true
	sm.Cookie.SameSite = http.SameSiteLaxMode
	sm.Cookie.Secure = cfg.Secure()
	sm.Cookie.Path = "/"
	sm.Cookie.Persist = false // a browser session cookie; the server enforces expiry
	sm.ErrorFunc = sessionErrorFunc(log)
	return sm
}

// buildHandler wires gin, sessions, cross-origin protection and headers.
func (s *Server) buildHandler(h *handlers.Handler) http.Handler {
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	// Believe X-Forwarded-For only from configured proxies: otherwise anyone
	// could pick the address the login throttle counts against.
	if err := r.SetTrustedProxies(s.cfg.TrustedProxies()); err != nil {
		s.log.Warn("trusted proxies", "err", err)
	}
	r.Use(gin.CustomRecoveryWithWriter(io.Discard, func(c *gin.Context, rec any) {
		s.log.Error("panic", "path", c.Request.URL.Path, "panic", rec)
		c.AbortWithStatus(http.StatusInternalServerError)
	}))
	sub, _ := fs.Sub(static.FS, ".")
	assets := http.StripPrefix("/static/", http.FileServer(http.FS(sub)))
	r.GET("/static/*path", func(c *gin.Context) {
		c.Header("Cache-Control", "public, max-age=3600")
		assets.ServeHTTP(c.Writer, c.Request)
	})
	h.Routes(r)

	// /wb/{id}/… goes to the workbench's Jupyter, outside the session
	// middleware (the proxy loads the session read-only itself).
	s.proxyMetrics = proxy.NewMetrics()
	px := proxy.New(proxy.Options{
		Metrics:           s.proxyMetrics,
		Resolve:           h.ProxyResolve,
		NotRunning:        h.ProxyNotRunning,
		NotFound:          h.ProxyNotFound,
		SignIn:            proxySignIn,
		Locale:            h.ProxyLocale,
		OnActivity:        s.Manager.Touch,
		ActivityInterval:  s.cfg.ActivityEvery,
		TrustedOrigins:    trusted(s.cfg.PublicURL),
		SessionCookieName: s.sessions.Cookie.Name,
		ScopedTokenPrefix: models.WorkbenchTokenPrefix,
		Logger:            s.log,
		Live:              h.Live(),
		ReverseProxyOnly:  s.cfg.ProxyUpstream == "reverseproxy",
		MaxBody:           s.cfg.ProxyMaxBody(),
		SSH:               s.cfg.SSHAddr != "",
	})
	mux := http.NewServeMux()
	mux.Handle("/wb/", s.pathModeOr(h, px))
	if s.cfg.NotebookDomain != "" {
		mux.Handle(handlers.NotebookAuthorizePath, withSessions(s.sessions, http.HandlerFunc(h.NotebookAuthorize)))
	}
	s.metrics = s.mountMetrics(mux, r, h)
	mux.Handle("/", withSessions(s.sessions, r))

	// Every state change must come from the portal's own origin: Go's
	// CrossOriginProtection checks Sec-Fetch-Site / Origin on unsafe methods.
	cop := http.NewCrossOriginProtection()
	if s.cfg.PublicURL != "" {
		if err := cop.AddTrustedOrigin(s.cfg.PublicURL); err != nil {
			s.log.Warn("trusted origin", "url", s.cfg.PublicURL, "err", err)
		}
	}
	cop.SetDenyHandler(http.HandlerFunc(h.CrossOriginRefused))
	return accessLog(s.log, securityHeaders(s.cfg.Secure(), portalCSP(s.cfg.NotebookDomain), s.routeNotebookHosts(h, cop.Handler(mux))))
}

// Handler is the portal's root HTTP handler (tests serve it with httptest).
func (s *Server) Handler() http.Handler { return s.handler }

// MetricsHandler serves /metrics on WORKBENCH_METRICS_ADDR; nil when metrics
// are served by Handler instead.
func (s *Server) MetricsHandler() http.Handler { return s.metrics }

// PprofHandler serves /debug/pprof on WORKBENCH_PPROF_ADDR; nil when off.
func (s *Server) PprofHandler() http.Handler { return s.pprof }

// SSH is the SSH server (tests serve it on their own listener).
func (s *Server) SSH() *sshgate.Server { return s.ssh }

// Sessions exposes the session manager (tests).
func (s *Server) Sessions() *scs.SessionManager { return s.sessions }

// Listeners are the server's sockets, bound before anything else is done
// (ListenAll): a port in use must fail the start before the first admin's
// one-time password is printed and used up, and before background work
// begins. Metrics, Pprof and SSH are nil when not configured.
type Listeners struct {
	Main, Metrics, Pprof, SSH net.Listener
}

// ListenAll binds every address cfg names.
func ListenAll(cfg Config) (*Listeners, error) {
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	ls := &Listeners{Main: ln}
	if err := ls.bindOthers(cfg); err != nil {
		return nil, err
	}
	return ls, nil
}

// bindOthers binds the metrics, pprof and SSH addresses cfg names; on an
// error every listener is closed.
func (ls *Listeners) bindOthers(cfg Config) error {
	for _, l := range []struct {
		addr, env string
		dst       *net.Listener
	}{{cfg.MetricsAddr, "WORKBENCH_METRICS_ADDR", &ls.Metrics}, {cfg.PprofAddr, "WORKBENCH_PPROF_ADDR", &ls.Pprof}, {cfg.SSHAddr, "WORKBENCH_SSH_ADDR", &ls.SSH}} {
		if l.addr == "" {
			continue
		}
		ln, err := net.Listen("tcp", l.addr)
		if err != nil {
			ls.Close()
			return fmt.Errorf("listen on %s (%s): %w", l.addr, l.env, err)
		}
		*l.dst = ln
	}
	return nil
}

// Close closes every bound listener (after a failed start).
func (ls *Listeners) Close() {
	for _, ln := range []net.Listener{ls.Main, ls.Metrics, ls.Pprof, ls.SSH} {
		if ln != nil {
			ln.Close()
		}
	}
}

// Run serves on cfg.Addr until ctx is cancelled, then shuts down gracefully:
// in-flight requests get up to 20 s. Workbench containers are never touched.
func (s *Server) Run(ctx context.Context) error {
	ls, err := ListenAll(s.cfg)
	if err != nil {
		return err
	}
	return s.ServeListeners(ctx, ls)
}

// Serve is Run on an existing listener for the portal (the others, if
// configured, are bound here).
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	ls := &Listeners{Main: ln}
	if err := ls.bindOthers(s.cfg); err != nil {
		return err
	}
	return s.ServeListeners(ctx, ls)
}

// ServeListeners serves on bound listeners (ListenAll) until ctx is
// cancelled.
func (s *Server) ServeListeners(ctx context.Context, ls *Listeners) error {
	ln := ls.Main
	srv := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	// The background loops get their own context: they end after the HTTP
	// server has drained, and Serve waits for them so their last writes
	// (activity, heartbeats) land before the caller closes the database.
	if err := s.takeLease(ctx); err != nil {
		ls.Close()
		return err
	}
	if ctx.Err() != nil {
		// Told to stop while it waited for the install lease (a second
		// portal on the same data): it never served, so it must not say
		// "serving" (it did, with install="", then "shutting down").
		ls.Close()
		s.log.Info("stopped before serving: told to stop while waiting for the install lease")
		return nil
	}
	bg, stopBG := context.WithCancel(context.WithoutCancel(ctx))
	var loops sync.WaitGroup
	for _, loop := range []func(context.Context){s.sampler.Run, s.Manager.Run, s.cleanSessions, s.runDemoLoad, s.GPUWatch.Run} {
		loops.Add(1)
		go func() { defer loops.Done(); loop(bg) }()
	}
	defer func() { stopBG(); loops.Wait() }()

	errc := make(chan error, 4)
	go func() { errc <- srv.Serve(ln) }()
	if ls.Metrics != nil && s.metrics != nil {
		msrv := &http.Server{Handler: s.metrics, ReadHeaderTimeout: 10 * time.Second}
		go func() { errc <- msrv.Serve(ls.Metrics) }()
		defer msrv.Close()
		s.log.Info("serving metrics", "addr", ls.Metrics.Addr().String())
	}
	if ls.Pprof != nil && s.pprof != nil {
		psrv := &http.Server{Handler: s.pprof, ReadHeaderTimeout: 10 * time.Second}
		go func() { errc <- psrv.Serve(ls.Pprof) }()
		defer psrv.Close()
		s.log.Info("serving /debug/pprof to admin tokens", "addr", ls.Pprof.Addr().String())
	}
	if ls.SSH != nil {
		go func() { errc <- s.ssh.Serve(bg, ls.SSH) }()
	}
	install, _ := s.Store.InstallID(ctx) // the label on all it makes on the engine (README "Uninstall")
	s.log.Info("serving", "addr", ln.Addr().String(), "url", s.URL(ln), "data_dir", s.cfg.DataDir, "version", Version, "install", install)
	if s.cfg.Secure() && !loopback(ln.Addr()) {
		// TLS is a proxy's in front; this address answers plain HTTP,
		// passwords and session cookies included, to whoever reaches it.
		s.log.Warn("plain HTTP is served on an address the network reaches while WORKBENCH_PUBLIC_URL is https: bind WORKBENCH_ADDR to 127.0.0.1 behind the TLS proxy (or firewall this port)",
			"addr", ln.Addr().String(), "public_url", s.cfg.PublicURL)
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	s.log.Info("shutting down")
	shutCtx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// loopback reports whether a listener's address is reachable from this
// host only.
func loopback(a net.Addr) bool {
	t, ok := a.(*net.TCPAddr)
	return ok && t.IP.IsLoopback()
}

// URL is where a user on this host reaches the portal.
func (s *Server) URL(ln net.Listener) string {
	if s.cfg.PublicURL != "" {
		return s.cfg.PublicURL
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return "http://localhost:" + port
}

// cleanSessions removes, every 10 minutes, what has expired: sessions,
// notebook codes and sessions, trusted browsers' tokens and counted SSH
// verify failures.
func (s *Server) cleanSessions(ctx context.Context) {
	t := time.NewTicker(10 * time.Minute)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := s.Store.DeleteExpiredNotebookSessions(ctx); err != nil {
				s.log.Warn("notebook session cleanup", "err", err)
			}
			if n, err := s.sstore.DeleteExpired(ctx); err != nil {
				s.log.Warn("session cleanup", "err", err)
			} else if n > 0 {
				s.log.Debug("expired sessions removed", "count", n)
			}
			// What the login and SSH verify throttles keep in the
			// database, past its time.
			if n, err := s.Store.DeleteExpiredLoginDevices(ctx); err != nil {
				s.log.Warn("login device cleanup", "err", err)
			} else if n > 0 {
				s.log.Debug("expired login devices removed", "count", n)
			}
			if _, err := s.Store.DeleteOldSSHVerifyFailures(ctx); err != nil {
				s.log.Warn("ssh verify failures cleanup", "err", err)
			}
		}
	}
}

// Close ends the manager's background work (launches in flight are left
// for the next start; stops and deletions are waited for, up to
// orchestrator.ShutdownGrace), then releases the database, the engine
// client and the GPU library. Workbench containers keep running.
func (s *Server) Close() error {
	if s.stopEndingProxied != nil {
		s.stopEndingProxied()
	}
	if s.Manager != nil { // nil when NewServer failed before making it
		ctx, cancel := context.WithTimeout(context.Background(), orchestrator.ShutdownGrace)
		s.Manager.Shutdown(ctx)
		cancel()
	}
	if c, ok := s.rt.(io.Closer); ok {
		c.Close()
	}
	s.inv.Close()
	return s.Store.Close()
}
