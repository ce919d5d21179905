// Package web assembles the portal: configuration, the HTTP server, its
// middleware and background loops. cmd/workbench calls into it.
package web

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"workbench/models"
	"workbench/orchestrator"
	"workbench/orchestrator/gpu"
)

// Config is the portal's configuration: flags, else WORKBENCH_* environment,
// else defaults (SPEC §8).
type Config struct {
	Addr          string
	DataDir       string
	GPUs          string
	AdminPassword string
	PublicURL     string
	Currency      string
	LogFormat     string
	LogLevel      string
	SampleEvery   time.Duration
	// SampleMaxAge is how old the latest GPU reading may be and still be
	// shown as current (0: two sampling intervals); older, a GPU reads as
	// "could not read". Tests that sample by hand (SampleGPUs, no sampler
	// loop) set it long.
	SampleMaxAge time.Duration
	SessionIdle  time.Duration
	// NewIdentity gives the data a new install id before anything runs
	// (serve --new-identity; no environment variable: it is done once,
	// on a copy), unless a live portal runs on this very database file
	// (newIdentity in lease.go).
	NewIdentity bool
	// envErrs are the WORKBENCH_* values BindFlags could not read, as
	// typed; Validate refuses to start with them.
	envErrs       []string
	TrustedProxy  string
	SessionMaxAge time.Duration
	// NotebookDomain serves each workbench at {id}.NotebookDomain, its own
	// origin (README: "Notebook domain"); "" keeps path mode (/wb/{id}/).
	NotebookDomain string
	// Egress and EgressAllow are the workbench egress policy until an
	// admin sets one on /admin/egress (then the stored setting wins).
	Egress      string
	EgressAllow string
	// LoginMemoryMiB bounds the memory of concurrent password checks
	// and hashes (models/hash_gate.go); 0: the default, 128 MiB.
	LoginMemoryMiB int
	// MetricsAddr serves /metrics on its own listen address instead of the
	// portal's; MetricsToken makes /metrics ask for a bearer token (web/metrics.go).
	MetricsAddr  string
	MetricsToken string
	// PprofAddr serves /debug/pprof on its own listen address, to admins'
	// API tokens only (web/pprof.go); "" (the default) keeps it off.
	PprofAddr string
	// SSHAddr serves SSH into workbenches (web/sshgate); "" keeps it off.
	SSHAddr string
	// ProxyUpstream is how the /wb/ proxy talks to Jupyter: "lean" (or
	// ""), its own HTTP/1.1 client for plain requests (handlers/proxy/
	// lean.go), or "reverseproxy", httputil.ReverseProxy for everything
	// as before: for comparison, and a way back.
	ProxyUpstream string
	// ProxyMaxBodyMiB is the largest request body the /wb/ proxy passes
	// on to Jupyter, in MiB (handlers/proxy/body_limit.go): Jupyter's own
	// max_body_size, so that a bigger one is answered with what to do
	// instead of Jupyter's bare 400. 0: the default, 512 (Jupyter's
	// default); -1: no limit of the portal's.
	ProxyMaxBodyMiB int
	// OIDC* configure single sign-on (README "Single sign-on"); off
	// without an issuer. LocalLogin is "all" or "admins".
	OIDCIssuer        string
	OIDCClientID      string
	OIDCClientSecret  string
	OIDCScopes        string
	OIDCUsernameClaim string
	OIDCGroupsClaim   string
	OIDCGroupMap      string
	OIDCLabel         string
	LocalLogin        string
	// SMTP* send "a GPU is free" notifications by email (to the user's
	// address) when SMTPAddr is set; NotifyWebhook POSTs them as JSON,
	// signed with NotifyWebhookSecret when set (orchestrator/notify_out.go).
	SMTPAddr, SMTPFrom, SMTPUsername, SMTPPassword string
	NotifyWebhook, NotifyWebhookSecret             string
	// SavedImageQuotaGiB bounds one user's saved images (0: the default).
	SavedImageQuotaGiB int

	// Workbenches tunes the lifecycle manager (tests shorten its timers).
	Workbenches orchestrator.Options
	// ActivityEvery is how often an open WebSocket's messages are reported
	// as activity (0: the proxy's default, 10 s); tests shorten it.
	ActivityEvery time.Duration

	gpuMode gpu.Mode

	// GPUOptions are extra gpu.New options (not a flag): tests inject a
	// go-nvml mock with life (gpu.AttachMockLoad) through WithNVML.
	GPUOptions []gpu.Option
	// GPUIdlePercent: a GPU below this utilisation counts as idle for
	// GPU-idle release (0: the default, 5).
	GPUIdlePercent int
	// GPURollupRetention is how long the per-minute GPU rollups are kept:
	// a Go duration ("840h") or whole days ("35d", or a bare "35"). ""
	// keeps the default, 35 days. Validate sets
	// Workbenches.GPURollupRetention from it.
	GPURollupRetention string
	// GPUDemoLoad makes a simulated pool report a made-up load (make demo).
	GPUDemoLoad bool
	// MockMIG partitions simulated GPUs into MIG instances at start, e.g.
	// "7:1g.10gb*7" (only with mock GPUs: real GPUs are partitioned by an
	// admin with nvidia-smi mig, never by the portal).
	MockMIG string
	// Kube chooses and configures the container runtime (config_kube.go).
	Kube KubeConfig
}

// GPUMode is the parsed GPUS setting (valid after Validate).
func (c *Config) GPUMode() gpu.Mode { return c.gpuMode }

// Secure reports whether the portal is served over https (cookies get Secure).
func (c *Config) Secure() bool { return strings.HasPrefix(c.PublicURL, "https://") }

// TrustedProxies lists the configured reverse-proxy addresses.
func (c *Config) TrustedProxies() []string {
	var out []string
	for _, p := range strings.Split(c.TrustedProxy, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// BindFlags declares the serve flags on fs with environment-aware defaults.
func (c *Config) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.Addr, "addr", env("ADDR", ":8080"), "listen address (WORKBENCH_ADDR)")
	fs.StringVar(&c.DataDir, "data-dir", env("DATA_DIR", "./data"), "directory holding the SQLite database (WORKBENCH_DATA_DIR)")
	fs.StringVar(&c.GPUs, "gpus", env("GPUS", "auto"), "GPU inventory: "+strings.Join(gpu.ValidModes(), " | ")+" (WORKBENCH_GPUS)")
	fs.StringVar(&c.PublicURL, "public-url", env("PUBLIC_URL", ""), "URL users reach the portal at, e.g. https://gpu.example.org (WORKBENCH_PUBLIC_URL)")
	fs.StringVar(&c.Currency, "currency", env("CURRENCY", "USD"), "ISO 4217 currency code of all prices (WORKBENCH_CURRENCY)")
	fs.StringVar(&c.LogFormat, "log-format", env("LOG_FORMAT", "text"), "log format: text | json (WORKBENCH_LOG_FORMAT)")
	fs.StringVar(&c.LogLevel, "log-level", env("LOG_LEVEL", "info"), "log level: debug | info | warn | error (WORKBENCH_LOG_LEVEL)")
	fs.DurationVar(&c.SampleEvery, "sample-interval", c.envDuration("SAMPLE_INTERVAL", 15*time.Second), "GPU utilisation sampling interval (WORKBENCH_SAMPLE_INTERVAL)")
	fs.IntVar(&c.GPUIdlePercent, "gpu-idle-threshold", c.envInt("GPU_IDLE_THRESHOLD", gpu.DefaultIdleThresholdPercent), "GPU utilisation (%) below which a GPU counts as idle for a flavor's GPU-idle release (WORKBENCH_GPU_IDLE_THRESHOLD)")
	fs.StringVar(&c.GPURollupRetention, "gpu-rollup-retention", env("GPU_ROLLUP_RETENTION", "35d"), "how long per-minute GPU utilisation rollups are kept: a duration (840h) or days (35d) (WORKBENCH_GPU_ROLLUP_RETENTION)")
	fs.BoolVar(&c.GPUDemoLoad, "gpu-demo-load", c.envBool("GPU_DEMO_LOAD"), "simulated GPUs report a made-up load (only with --gpus mock:*) (WORKBENCH_GPU_DEMO_LOAD=1)")
	fs.StringVar(&c.MockMIG, "mock-mig", env("MOCK_MIG", ""), "partition simulated GPUs into MIG instances, e.g. 7:1g.10gb*7 (only with --gpus mock:*) (WORKBENCH_MOCK_MIG)")
	fs.DurationVar(&c.SessionIdle, "session-idle", c.envDuration("SESSION_IDLE", 12*time.Hour), "log out after this long without a request (WORKBENCH_SESSION_IDLE)")
	fs.DurationVar(&c.SessionMaxAge, "session-max-age", c.envDuration("SESSION_MAX_AGE", 7*24*time.Hour), "log out this long after login, active or not (WORKBENCH_SESSION_MAX_AGE)")
	fs.StringVar(&c.NotebookDomain, "notebook-domain", env("NOTEBOOK_DOMAIN", ""), "serve workbench {id} at {id}.<this domain>, its own origin, e.g. nb.example.org; needs wildcard DNS and TLS (WORKBENCH_NOTEBOOK_DOMAIN)")
	fs.StringVar(&c.TrustedProxy, "trusted-proxies", env("TRUSTED_PROXIES", ""), "comma-separated CIDRs of reverse proxies whose X-Forwarded-For is believed (WORKBENCH_TRUSTED_PROXIES)")
	fs.DurationVar(&c.Workbenches.DefaultIdle, "idle-timeout", c.envDuration("IDLE_TIMEOUT", time.Hour), "default idle timeout of a workbench (WORKBENCH_IDLE_TIMEOUT)")
	fs.DurationVar(&c.Workbenches.MaxIdle, "max-idle-timeout", c.envDuration("MAX_IDLE_TIMEOUT", 24*time.Hour), "longest idle timeout a user may choose (WORKBENCH_MAX_IDLE_TIMEOUT)")
	fs.DurationVar(&c.Workbenches.ReconcileEvery, "reconcile-interval", c.envDuration("RECONCILE_INTERVAL", 30*time.Second), "how often the database is reconciled with the engine (WORKBENCH_RECONCILE_INTERVAL)")
	fs.DurationVar(&c.Workbenches.CullEvery, "cull-interval", c.envDuration("CULL_INTERVAL", time.Minute), "how often idle and over-time workbenches are looked for (WORKBENCH_CULL_INTERVAL)")
	fs.DurationVar(&c.Workbenches.OrphanGrace, "orphan-grace", c.envDuration("ORPHAN_GRACE", 10*time.Minute), "labelled containers with no record are removed after this (WORKBENCH_ORPHAN_GRACE)")
	fs.BoolVar(&c.Workbenches.GPUWorkIsActivity, "gpu-work-is-activity", c.envBool("GPU_WORK_IS_ACTIVITY"), "GPU units working at or above the GPU-idle threshold count as activity for the idle timeout (WORKBENCH_GPU_WORK_IS_ACTIVITY=true)")
	fs.DurationVar(&c.Workbenches.MinIdle, "min-idle-timeout", c.envDuration("MIN_IDLE_TIMEOUT", 10*time.Minute), "shortest idle timeout a user may choose (WORKBENCH_MIN_IDLE_TIMEOUT)")
	c.Workbenches.MinCharge = noneIfZero(c.envDuration("MIN_CHARGE", 60*time.Second))
	fs.Func("min-charge", "minimum charge per run, e.g. 60s; 0 for none (WORKBENCH_MIN_CHARGE, default 60s)", func(v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return fmt.Errorf("want a duration such as 60s or 0")
		}
		c.Workbenches.MinCharge = noneIfZero(d)
		return nil
	})
	fs.DurationVar(&c.Workbenches.HeartbeatEvery, "heartbeat-interval", c.envDuration("HEARTBEAT_INTERVAL", 30*time.Second), "how often running usage is recorded (WORKBENCH_HEARTBEAT_INTERVAL)")
	fs.DurationVar(&c.Workbenches.QueueMaxWait, "queue-max-wait", c.envDuration("QUEUE_MAX_WAIT", 24*time.Hour), "a queued launch leaves the queue after waiting this long (WORKBENCH_QUEUE_MAX_WAIT)")
	fs.DurationVar(&c.Workbenches.DrainEvery, "queue-interval", c.envDuration("QUEUE_INTERVAL", 15*time.Second), "how often the queue is looked at besides when GPUs free up (WORKBENCH_QUEUE_INTERVAL)")
	fs.DurationVar(&c.Workbenches.FairShareHalfLife, "fair-share-half-life", c.envDuration("FAIR_SHARE_HALF_LIFE", 24*time.Hour), "half-life of the recent GPU use that orders equal priorities in the queue (WORKBENCH_FAIR_SHARE_HALF_LIFE)")
	fs.DurationVar(&c.Workbenches.PreemptGrace, "preempt-grace", c.envDuration("PREEMPT_GRACE", 120*time.Second), "how long a preempted run has to checkpoint before it is stopped (WORKBENCH_PREEMPT_GRACE)")
	fs.DurationVar(&c.Workbenches.ReservationNoShow, "reservation-no-show", c.envDuration("RESERVATION_NO_SHOW", 15*time.Minute), "a reservation its booker does not use this long after its start is released (WORKBENCH_RESERVATION_NO_SHOW)")
	fs.BoolVar(&c.Workbenches.NoBackfill, "no-backfill", c.envBool("NO_BACKFILL"), "never let a later queued launch start before an earlier blocked one (WORKBENCH_NO_BACKFILL=true)")
	fs.DurationVar(&c.Workbenches.BillEvery, "billing-interval", c.envDuration("BILLING_INTERVAL", time.Minute), "how often the ledger is written and budgets enforced (WORKBENCH_BILLING_INTERVAL)")
	fs.StringVar(&c.Egress, "egress", env("EGRESS", "internet"), "initial workbench egress policy: internet | none | all; admins change it on /admin/egress (WORKBENCH_EGRESS)")
	fs.StringVar(&c.EgressAllow, "egress-allow", env("EGRESS_ALLOW", ""), "initial comma-separated CIDRs workbenches may always reach, e.g. lab services (WORKBENCH_EGRESS_ALLOW)")
	fs.IntVar(&c.LoginMemoryMiB, "login-memory-mib", c.envInt("LOGIN_MEMORY_MIB", 128), "memory concurrent password checks may take together, in MiB; sets how many run at once (WORKBENCH_LOGIN_MEMORY_MIB)")
	fs.StringVar(&c.PprofAddr, "pprof-addr", env("PPROF_ADDR", ""), "serve /debug/pprof on this listen address, to admins' API tokens only, e.g. 127.0.0.1:6060; off when empty (WORKBENCH_PPROF_ADDR)")
	fs.StringVar(&c.MetricsAddr, "metrics-addr", env("METRICS_ADDR", ""), "serve /metrics on this listen address only, e.g. 127.0.0.1:9090 (WORKBENCH_METRICS_ADDR)")
	fs.StringVar(&c.ProxyUpstream, "proxy-upstream", env("PROXY_UPSTREAM", "lean"), "how the /wb/ proxy reaches Jupyter: lean (its own HTTP/1.1 client for plain requests) | reverseproxy (httputil.ReverseProxy for everything, as before) (WORKBENCH_PROXY_UPSTREAM)")
	fs.IntVar(&c.ProxyMaxBodyMiB, "proxy-max-body-mib", c.envInt("PROXY_MAX_BODY_MIB", 512), "largest request body the /wb/ proxy passes on to Jupyter, MiB; keep it equal to the images' Jupyter max_body_size (512 by default); -1 = no limit (WORKBENCH_PROXY_MAX_BODY_MIB)")
	fs.StringVar(&c.SSHAddr, "ssh-addr", env("SSH_ADDR", ""), "serve SSH into workbenches on this listen address, e.g. :2222; off when empty (WORKBENCH_SSH_ADDR)")
	fs.StringVar(&c.OIDCIssuer, "oidc-issuer", env("OIDC_ISSUER", ""), "single sign-on: the OpenID Connect issuer URL, e.g. https://sso.example.org/realms/lab; off when empty (WORKBENCH_OIDC_ISSUER)")
	fs.StringVar(&c.OIDCClientID, "oidc-client-id", env("OIDC_CLIENT_ID", ""), "single sign-on: the client id registered at the provider (WORKBENCH_OIDC_CLIENT_ID)")
	fs.StringVar(&c.OIDCScopes, "oidc-scopes", env("OIDC_SCOPES", "openid profile email groups"), "single sign-on: scopes to ask for, space-separated (WORKBENCH_OIDC_SCOPES)")
	fs.StringVar(&c.OIDCUsernameClaim, "oidc-username-claim", env("OIDC_USERNAME_CLAIM", "preferred_username"), "single sign-on: the ID token claim that names the account (WORKBENCH_OIDC_USERNAME_CLAIM)")
	fs.StringVar(&c.OIDCGroupsClaim, "oidc-groups-claim", env("OIDC_GROUPS_CLAIM", "groups"), "single sign-on: the ID token claim listing the user's groups (WORKBENCH_OIDC_GROUPS_CLAIM)")
	fs.StringVar(&c.OIDCGroupMap, "oidc-group-map", env("OIDC_GROUP_MAP", ""), "single sign-on: directory group to portal group, e.g. 'cn=ml,ou=groups=ml-lab;physics=physics'; empty: same names (WORKBENCH_OIDC_GROUP_MAP)")
	fs.StringVar(&c.OIDCLabel, "oidc-label", env("OIDC_LABEL", "single sign-on"), "single sign-on: the provider's name on the sign-in button (WORKBENCH_OIDC_LABEL)")
	fs.StringVar(&c.LocalLogin, "local-login", env("LOCAL_LOGIN", "all"), "who may sign in with a portal password: all | admins (with single sign-on) (WORKBENCH_LOCAL_LOGIN)")
	c.OIDCClientSecret = os.Getenv("WORKBENCH_OIDC_CLIENT_SECRET") // a secret: environment only
	fs.StringVar(&c.SMTPAddr, "smtp-addr", env("SMTP_ADDR", ""), "mail GPU-free notifications through this SMTP server host:port; off when empty (WORKBENCH_SMTP_ADDR)")
	fs.StringVar(&c.SMTPFrom, "smtp-from", env("SMTP_FROM", "workbench@localhost"), "sender address of notification mail (WORKBENCH_SMTP_FROM)")
	fs.StringVar(&c.SMTPUsername, "smtp-username", env("SMTP_USERNAME", ""), "SMTP user for PLAIN auth, sent only over TLS (WORKBENCH_SMTP_USERNAME)")
	fs.StringVar(&c.NotifyWebhook, "notify-webhook", env("NOTIFY_WEBHOOK", ""), "POST GPU-free notifications as JSON to this URL; off when empty (WORKBENCH_NOTIFY_WEBHOOK)")
	fs.IntVar(&c.SavedImageQuotaGiB, "saved-image-quota-gib", c.envInt("SAVED_IMAGE_QUOTA_GIB", 50), "storage one user's saved images may take, GiB; -1 = no limit (WORKBENCH_SAVED_IMAGE_QUOTA_GIB)")
	c.SMTPPassword = os.Getenv("WORKBENCH_SMTP_PASSWORD")                // a secret: environment only
	c.NotifyWebhookSecret = os.Getenv("WORKBENCH_NOTIFY_WEBHOOK_SECRET") // a secret: environment only
	c.MetricsToken = os.Getenv("WORKBENCH_METRICS_TOKEN")                // a secret: environment only
	// The admin password is read from the environment only: a flag would show in `ps`.
	c.AdminPassword = os.Getenv("WORKBENCH_ADMIN_PASSWORD")
	c.bindKubeFlags(fs)
}

// Validate checks every setting and returns one clear line naming the first
// bad one.
func (c *Config) Validate() error {
	if len(c.envErrs) > 0 {
		return fmt.Errorf("invalid settings: %s", strings.Join(c.envErrs, "; "))
	}
	if c.SampleEvery == 0 {
		c.SampleEvery = 15 * time.Second
	}
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		return fmt.Errorf("invalid WORKBENCH_ADDR / --addr %q: want host:port such as :8080", c.Addr)
	}
	if strings.TrimSpace(c.DataDir) == "" {
		return errors.New("invalid WORKBENCH_DATA_DIR / --data-dir: must not be empty")
	}
	if c.SMTPAddr != "" {
		if _, _, err := net.SplitHostPort(c.SMTPAddr); err != nil {
			return fmt.Errorf("invalid WORKBENCH_SMTP_ADDR / --smtp-addr %q: want host:port such as mail.example.org:587", c.SMTPAddr)
		}
	}
	if c.NotifyWebhook != "" {
		if u, err := url.Parse(c.NotifyWebhook); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("invalid WORKBENCH_NOTIFY_WEBHOOK / --notify-webhook %q: want an http(s) URL", c.NotifyWebhook)
		}
	}
	if err := c.validateKube(); err != nil {
		return err
	}
	m, err := gpu.ParseMode(c.GPUs)
	if err != nil {
		return fmt.Errorf("invalid WORKBENCH_GPUS / --gpus %q: %v", c.GPUs, err)
	}
	c.gpuMode = m
	if c.PublicURL != "" {
		u, err := url.Parse(c.PublicURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
			return fmt.Errorf("invalid WORKBENCH_PUBLIC_URL / --public-url %q: want http(s)://host[:port] with no path", c.PublicURL)
		}
		c.PublicURL = strings.TrimSuffix(c.PublicURL, "/")
	}
	if err := c.validateNotebookDomain(); err != nil {
		return err
	}
	if !models.ISOCurrency(c.Currency) {
		return fmt.Errorf("invalid WORKBENCH_CURRENCY / --currency %q: want a currency code of ISO 4217 such as USD or CNY", c.Currency)
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		return fmt.Errorf("invalid WORKBENCH_LOG_FORMAT / --log-format %q: want text or json", c.LogFormat)
	}
	if _, err := parseLevel(c.LogLevel); err != nil {
		return fmt.Errorf("invalid WORKBENCH_LOG_LEVEL / --log-level %q: want debug, info, warn or error", c.LogLevel)
	}
	if c.GPUDemoLoad && c.gpuMode.Kind != gpu.KindMock {
		return fmt.Errorf("invalid WORKBENCH_GPU_DEMO_LOAD / --gpu-demo-load: only with simulated GPUs (WORKBENCH_GPUS=mock:*)")
	}
	if c.MockMIG != "" {
		if c.gpuMode.Kind != gpu.KindMock {
			return fmt.Errorf("invalid WORKBENCH_MOCK_MIG / --mock-mig: only with simulated GPUs (WORKBENCH_GPUS=mock:*); partition real GPUs with nvidia-smi mig (docs/gpu-units.md)")
		}
		if _, err := gpu.ParseMockMIG(c.MockMIG); err != nil {
			return fmt.Errorf("invalid WORKBENCH_MOCK_MIG / --mock-mig: %v", err)
		}
	}
	if c.GPUIdlePercent == 0 {
		c.GPUIdlePercent = gpu.DefaultIdleThresholdPercent
	}
	if c.GPUIdlePercent < 1 || c.GPUIdlePercent > 100 {
		return fmt.Errorf("invalid WORKBENCH_GPU_IDLE_THRESHOLD / --gpu-idle-threshold %d: must be between 1 and 100 (percent)", c.GPUIdlePercent)
	}
	if c.GPURollupRetention != "" {
		d, err := parseRetention(c.GPURollupRetention)
		if err != nil {
			return fmt.Errorf("invalid WORKBENCH_GPU_ROLLUP_RETENTION / --gpu-rollup-retention %q: %v", c.GPURollupRetention, err)
		}
		c.Workbenches.GPURollupRetention = d
	}
	if c.SampleEvery < time.Second {
		return fmt.Errorf("invalid WORKBENCH_SAMPLE_INTERVAL / --sample-interval %s: must be at least 1s", c.SampleEvery)
	}
	if c.SessionIdle == 0 {
		c.SessionIdle = 12 * time.Hour
	}
	if c.SessionMaxAge == 0 {
		c.SessionMaxAge = 7 * 24 * time.Hour
	}
	if c.SessionIdle <= 0 || c.SessionMaxAge <= 0 || c.SessionIdle > c.SessionMaxAge {
		return fmt.Errorf("invalid WORKBENCH_SESSION_IDLE / WORKBENCH_SESSION_MAX_AGE (%s / %s): both positive, idle not above max age", c.SessionIdle, c.SessionMaxAge)
	}
	for _, cidr := range c.TrustedProxies() {
		if _, _, err := net.ParseCIDR(cidr); err != nil && net.ParseIP(cidr) == nil {
			return fmt.Errorf("invalid WORKBENCH_TRUSTED_PROXIES entry %q: want a CIDR such as 10.0.0.0/8 or an IP", cidr)
		}
	}
	egress, err := orchestrator.ParseEgressPolicy(c.Egress, c.EgressAllow)
	if err != nil {
		return fmt.Errorf("invalid WORKBENCH_EGRESS / WORKBENCH_EGRESS_ALLOW: %v", err)
	}
	c.Workbenches.Egress = egress
	if v, ok := setting("MIN_CHARGE"); ok {
		if d, err := time.ParseDuration(v); err != nil || d < 0 {
			return fmt.Errorf("invalid WORKBENCH_MIN_CHARGE %q: want a duration such as 60s, or 0 for none", v)
		}
	}
	w := c.Workbenches
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"RECONCILE_INTERVAL", w.ReconcileEvery}, {"CULL_INTERVAL", w.CullEvery}, {"ORPHAN_GRACE", w.OrphanGrace},
		{"IDLE_TIMEOUT", w.DefaultIdle}, {"MIN_IDLE_TIMEOUT", w.MinIdle}, {"MAX_IDLE_TIMEOUT", w.MaxIdle}} {
		if d.v < 0 {
			return fmt.Errorf("invalid WORKBENCH_%s: want a positive duration such as 30s or 10m", d.name)
		}
	}
	if w.MinIdle > 0 && w.MaxIdle > 0 && w.MinIdle > w.MaxIdle {
		return fmt.Errorf("invalid WORKBENCH_MIN_IDLE_TIMEOUT %s: above WORKBENCH_MAX_IDLE_TIMEOUT %s", w.MinIdle, w.MaxIdle)
	}
	if c.MetricsAddr != "" {
		if _, _, err := net.SplitHostPort(c.MetricsAddr); err != nil {
			return fmt.Errorf("invalid WORKBENCH_METRICS_ADDR / --metrics-addr %q: want host:port such as 127.0.0.1:9090", c.MetricsAddr)
		}
	}
	switch c.ProxyUpstream {
	case "", "lean", "reverseproxy":
	default:
		return fmt.Errorf("invalid WORKBENCH_PROXY_UPSTREAM / --proxy-upstream %q: want lean or reverseproxy", c.ProxyUpstream)
	}
	if c.ProxyMaxBodyMiB < -1 || c.ProxyMaxBodyMiB > 1<<20 {
		return fmt.Errorf("invalid WORKBENCH_PROXY_MAX_BODY_MIB / --proxy-max-body-mib %d: want a number of MiB such as 512 (Jupyter's max_body_size), or -1 for no limit", c.ProxyMaxBodyMiB)
	}
	if c.PprofAddr != "" {
		if _, _, err := net.SplitHostPort(c.PprofAddr); err != nil {
			return fmt.Errorf("invalid WORKBENCH_PPROF_ADDR / --pprof-addr %q: want host:port such as 127.0.0.1:6060", c.PprofAddr)
		}
		if c.PprofAddr == c.Addr && !strings.HasSuffix(c.Addr, ":0") {
			return fmt.Errorf("invalid WORKBENCH_PPROF_ADDR %q: it must differ from the portal's address", c.PprofAddr)
		}
	}
	if c.MetricsToken != "" && len(c.MetricsToken) < 16 {
		return errors.New("invalid WORKBENCH_METRICS_TOKEN: use at least 16 random characters")
	}
	if c.LoginMemoryMiB < 0 {
		return fmt.Errorf("invalid WORKBENCH_LOGIN_MEMORY_MIB / --login-memory-mib %d: want a positive number of MiB such as 128", c.LoginMemoryMiB)
	}
	if err := c.validateOIDC(); err != nil {
		return err
	}
	if c.AdminPassword != "" && len(c.AdminPassword) < 10 {
		return errors.New("invalid WORKBENCH_ADMIN_PASSWORD: must be at least 10 characters")
	}
	return nil
}

// noneIfZero maps an explicit 0 to the manager's "none" (negative); a zero
// value in orchestrator.Options means "the default".
// ProxyMaxBody is ProxyMaxBodyMiB in bytes, as proxy.Options.MaxBody
// takes it (0: the proxy's default, Jupyter's 512 MiB; negative: none).
func (c *Config) ProxyMaxBody() int64 {
	if c.ProxyMaxBodyMiB < 0 {
		return -1
	}
	return int64(c.ProxyMaxBodyMiB) << 20
}

func noneIfZero(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

// setting reads WORKBENCH_<name>. Set but empty counts as not set, so the
// default holds: docker-compose.yml passes every setting as
// ${WORKBENCH_<name>:-}, and a `.env` without the line must not turn a
// default into "" (an empty idle timeout, no OIDC scopes).
func setting(name string) (string, bool) {
	v, ok := os.LookupEnv("WORKBENCH_" + name)
	return v, ok && v != ""
}

func env(name, def string) string {
	if v, ok := setting(name); ok {
		return v
	}
	return def
}

// parseRetention reads a retention period: a Go duration ("840h") or
// whole days ("35d", or a bare number of days), at least one hour.
func parseRetention(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	var d time.Duration
	if days, ok := strings.CutSuffix(v, "d"); ok || isDigits(v) {
		if !ok {
			days = v
		}
		n, err := strconv.Atoi(days)
		if err != nil || n < 0 || n > 100*365 {
			return 0, fmt.Errorf("want a duration like 840h or a number of days like 35d")
		}
		d = time.Duration(n) * 24 * time.Hour
	} else {
		var err error
		if d, err = time.ParseDuration(v); err != nil {
			return 0, fmt.Errorf("want a duration like 840h or a number of days like 35d")
		}
	}
	if d < time.Hour {
		return 0, fmt.Errorf("must be at least 1h (the rollups back the utilisation dashboard and measured energy)")
	}
	return d, nil
}

func isDigits(v string) bool {
	for _, r := range v {
		if r < '0' || r > '9' {
			return false
		}
	}
	return v != ""
}

// envDuration, envInt and envBool read a typed setting; a value that does
// not parse is kept for Validate to report as it was typed (it read as -1,
// which for the saved-image quota meant "no limit", and a boolean took
// anything but "true" for false).
func (c *Config) envDuration(name string, def time.Duration) time.Duration {
	if v, ok := setting(name); ok {
		if d, err := time.ParseDuration(v); err == nil {
			return d
		}
		c.badEnv(name, v, "a duration such as 90s, 15m or 12h")
	}
	return def
}

func (c *Config) envInt(name string, def int) int {
	if v, ok := setting(name); ok {
		if n, err := strconv.Atoi(v); err == nil {
			return n
		}
		c.badEnv(name, v, "a whole number")
	}
	return def
}

func (c *Config) envBool(name string) bool {
	v, ok := setting(name)
	if !ok {
		return false
	}
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true
	case "0", "false", "no", "off":
		return false
	}
	c.badEnv(name, v, "true or false")
	return false
}

func (c *Config) badEnv(name, v, want string) {
	c.envErrs = append(c.envErrs, fmt.Sprintf("WORKBENCH_%s=%q is not %s", name, v, want))
}
