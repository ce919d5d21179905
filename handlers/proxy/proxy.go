package proxy

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"net/url"
	"time"

	"workbench/templates/i18n"
)

// Target is where one workbench's Jupyter server listens.
type Target struct {
	BaseURL *url.URL // scheme and host are used, e.g. http://172.18.0.5:8888; the path is ignored
	Token   string   // the workbench's Jupyter token, sent as "Authorization: token …"
	// StripPrefix, when set, is removed from the path before it goes
	// upstream: an extra port's app (/wb/{id}/port/{n}/…) is served at its
	// root, unlike Jupyter, which runs under /wb/{id}/.
	StripPrefix string
	// UserID and Grant identify who the request was authenticated as and
	// by what (a session), so Options.Live can end it on revocation.
	UserID int64
	Grant  string
}

// ErrNotFound is returned (or wrapped) by Resolve for missing workbenches and
// for workbenches the caller does not own. Both map to 404 so that ids cannot
// be probed.
var ErrNotFound = errors.New("workbench not found")

// ErrBadToken is returned by Resolve for a request whose workbench-scoped
// token does not open this workbench: unknown, expired, revoked, a
// disabled user's, or made for another workbench. It maps to 403 whatever
// the id (so ids still cannot be probed), and says so: a Jupyter client
// (VS Code) asks for a new token on 403, where a 404 sent its user looking
// for a wrong server address.
var ErrBadToken = errors.New("workbench token refused")

// ErrAPIToken is returned by Resolve for a request that carries a portal
// API token where a workbench token belongs: 403, saying which token opens
// a workbench (an IDE client set up with the wrong one was told "There is
// no such workbench"). Answered whatever the id, so ids cannot be probed.
var ErrAPIToken = errors.New("an API token does not open a workbench")

// ErrNoPort is returned by Resolve for the caller's own workbench when it
// serves no app on the extra port asked (/wb/{id}/port/{n}/): 404, saying
// the port is what is missing, not the workbench.
var ErrNoPort = errors.New("no app on this port")

// ErrSignIn is returned by Resolve for a request that carries no portal
// session (never signed in, signed out, expired). A browser navigation is
// sent to sign in (Options.SignIn), whatever the id, so nothing is learnt
// about it; other requests get the 404 of ErrNotFound.
var ErrSignIn = errors.New("no portal session")

// ErrNotReady is returned (or wrapped) by Resolve when the workbench exists
// and is owned by the caller but its Jupyter server is not running.
var ErrNotReady = errors.New("workbench not running")

// ErrPaused is returned (or wrapped) by Resolve when the caller's
// workbench runs but its container is known to be paused outside the
// portal (`docker pause`): its Jupyter accepts connections and never
// answers.
var ErrPaused = errors.New("workbench paused")

// Options configures a Proxy.
type Options struct {
	// Resolve authenticates the request, checks that the caller owns the
	// workbench and returns where its Jupyter listens. Required.
	Resolve func(r *http.Request, workbenchID string) (Target, error)
	// OnActivity is called for every proxied HTTP request, when a WebSocket
	// opens and closes, and while WebSocket data flows (at most once per
	// ActivityInterval per connection). It runs on the request path, so it
	// must be cheap. Optional.
	OnActivity func(workbenchID string, at time.Time)
	// ActivityInterval throttles OnActivity for WebSocket traffic;
	// default 10s.
	ActivityInterval time.Duration
	// TrustedOrigins are extra origins ("https://portal.example") allowed to
	// send unsafe requests and WebSocket upgrades; the request's own
	// scheme://host is always allowed.
	TrustedOrigins []string
	// SessionCookieName is the portal's session cookie, never forwarded to
	// Jupyter and never settable by it.
	SessionCookieName string
	// StateCookieName, when set, is one more of the portal's cookies
	// stripped the same way: the notebook host's state cookie, which
	// binds a one-time code to the browser.
	StateCookieName string
	// NotRunning, when set, answers a browser navigation (Accept: text/html)
	// to a workbench Resolve found not running (ErrNotReady): the portal's
	// own page saying why, with a Start button. Other requests, and all
	// when it is nil, get a short 503 message.
	NotRunning func(w http.ResponseWriter, r *http.Request, workbenchID string)
	// NotFound, when set, answers a browser navigation (Accept: text/html)
	// to an address that opens no workbench of the caller's: one Resolve
	// found missing or someone else's (ErrNotFound), one without a session
	// that SignIn does not take, or a malformed one.
	// It must answer every such id alike (the portal's 404 page), so ids
	// cannot be probed. Other requests, and all when it is nil, get a
	// short 404 message.
	NotFound func(w http.ResponseWriter, r *http.Request)
	// SignIn, when set, answers a browser navigation (GET, Accept:
	// text/html) that Resolve found without a session (ErrSignIn): the
	// portal's sign-in, coming back here after.
	SignIn func(w http.ResponseWriter, r *http.Request)
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Transport defaults to NewTransport(). When it is set, every
	// request goes through it (httputil.ReverseProxy), none takes the
	// lean path (lean.go).
	Transport http.RoundTripper
	// ReverseProxyOnly sends every request through httputil.ReverseProxy
	// and Transport, as before the lean path existed: for comparing the
	// two (BenchmarkProxySmallGET) and as a way back should the lean path
	// misbehave.
	ReverseProxyOnly bool
	// Live, when set, tracks requests in flight so revocation can end them.
	Live *Live
	// ScopedTokenPrefix marks workbench-scoped tokens ("wbk_"); see
	// scoped_token.go. Empty: none are recognised.
	ScopedTokenPrefix string
	// Scheme is the scheme browsers use to reach this proxy ("https"
	// behind a TLS-terminating reverse proxy); it completes the request's
	// own origin for the CSRF check. Default: from the connection.
	Scheme string
	// Metrics, when set, counts requests and bytes (see NewMetrics).
	Metrics *Metrics
	// Locale, when set, gives the request's context in the reader's
	// language, for the proxy's own short pages (not found, starting, bad
	// gateway). Nil: English.
	Locale func(r *http.Request) context.Context
	// MaxBody is the largest request body passed on to Jupyter (not to an
	// extra port's app, which has limits of its own): one that declares
	// more is answered 413, saying how to send big files, before any of
	// it goes upstream; one of unknown length is cut there
	// (body_limit.go). 0: DefaultMaxBody, Jupyter's own limit; negative:
	// none (Jupyter answers).
	MaxBody int64
	// SSH says the portal serves SSH into workbenches, so the answer to a
	// body over MaxBody names scp and sftp as a way to copy big files.
	SSH bool
}

// Proxy serves /wb/{id}/… by forwarding to the workbench's Jupyter.
type Proxy struct {
	opts    Options
	log     *slog.Logger
	origins *originPolicy
	rp      *httputil.ReverseProxy
	pool    *upstreamPool // nil: no lean path
	bufs    *bufPool
	maxBody int64 // Options.MaxBody resolved (noBodyLimit: none)
}

type ctxKey struct{}

// reqInfo travels in the request context from ServeHTTP to the
// ReverseProxy hooks, so one shared ReverseProxy serves every workbench.
type reqInfo struct {
	id     string
	target Target
	scoped bool // authenticated by a workbench-scoped token
	// capped: the cap on a body of unknown length (limitUnknownLength),
	// for the 413 to read the rest from; nil otherwise.
	capped *cappedBody
}

// New returns a Proxy. It panics if o.Resolve is nil, a wiring bug that
// would otherwise let every request through unauthenticated.
func New(o Options) *Proxy {
	if o.Resolve == nil {
		panic("proxy.New: Options.Resolve is required")
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	var pool *upstreamPool
	if o.Transport == nil {
		o.Transport = NewTransport()
		if !o.ReverseProxyOnly {
			pool = newUpstreamPool()
		}
	}
	if o.ActivityInterval <= 0 {
		o.ActivityInterval = 10 * time.Second
	}
	p := &Proxy{opts: o, log: o.Logger, origins: newOriginPolicy(o.TrustedOrigins, o.Scheme), pool: pool, bufs: newBufPool(), maxBody: maxBody(o)}
	p.rp = &httputil.ReverseProxy{
		Rewrite:        p.rewrite,
		ModifyResponse: p.modifyResponse,
		ErrorHandler:   p.errorHandler,
		Transport:      o.Transport,
		// Zero: the ReverseProxy flushes after every write for responses
		// of unknown length (streams, long polls) and for event streams,
		// so they reach the browser as they are produced; a response of
		// known length goes out in buffer-sized writes. Flushing those too
		// (-1) cost a syscall per small response: 0.61× nginx's throughput
		// instead of 0.80× in BenchmarkProxyHTTP.
		FlushInterval: 0,
		ErrorLog:      slog.NewLogLogger(o.Logger.Handler(), slog.LevelWarn),
		BufferPool:    p.bufs,
	}
	return p
}

// ServeHTTP expects r.URL.Path to start with /wb/{id}.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if m := p.opts.Metrics; m != nil {
		cw := &countingWriter{ResponseWriter: w, m: m}
		defer func() {
			if cw.code == 0 && isUpgrade(r) {
				cw.code = http.StatusSwitchingProtocols // hijacked: ReverseProxy wrote the 101 itself
			}
			m.request(cw.code)
		}()
		w = cw
		if r.Body != nil && r.Body != http.NoBody {
			r.Body = countingBody{ReadCloser: r.Body, c: m.toWB}
		}
	}
	id, res := parsePath(r.URL)
	switch res {
	case pathNotFound:
		p.notFound(w, r)
		return
	case pathRedirect:
		loc := "/wb/" + id + "/"
		if r.URL.RawQuery != "" {
			loc += "?" + r.URL.RawQuery
		}
		// 308 keeps the method and body, unlike 301/302.
		http.Redirect(w, r, loc, http.StatusPermanentRedirect)
		return
	}

	// CSRF before Resolve: a forged request must never reach Jupyter, and
	// answering 403 regardless of the id reveals nothing about it.
	_, scoped := ScopedToken(r, p.opts.ScopedTokenPrefix)
	if err := p.origins.check(r); err != nil && !scoped {
		p.log.Info("proxy: cross-origin request refused",
			"workbench", id, "method", r.Method, "origin", r.Header.Get("Origin"),
			"sec_fetch_site", r.Header.Get("Sec-Fetch-Site"), "reason", err)
		lc := p.locale(r)
		writeError(lc, w, r, http.StatusForbidden, i18n.T(lc, "Forbidden"),
			i18n.T(lc, "Cross-origin request refused: %s.", err.Error()), false)
		return
	}
	if scoped && loadsAsCode(r) {
		p.log.Info("proxy: workbench token used by a page's script or style refused", "workbench", id, "sec_fetch_dest", r.Header.Get("Sec-Fetch-Dest"))
		lc := p.locale(r)
		writeError(lc, w, r, http.StatusForbidden, i18n.T(lc, "Forbidden"),
			i18n.T(lc, "A workbench token opens a notebook for a client such as an IDE; a web page cannot load script or styles with it."), false)
		return
	}

	started := time.Now()
	t, err := p.opts.Resolve(r, id)
	switch {
	case err == nil && (t.BaseURL == nil || t.BaseURL.Host == ""):
		p.log.Error("proxy: resolver returned no target", "workbench", id)
		lc := p.locale(r)
		writeError(lc, w, r, http.StatusInternalServerError, i18n.T(lc, "Internal error"), i18n.T(lc, "The workbench has no address."), false)
		return
	case errors.Is(err, ErrSignIn) && p.opts.SignIn != nil && wantsHTML(r) && (r.Method == http.MethodGet || r.Method == http.MethodHead):
		p.opts.SignIn(w, r)
		return
	case errors.Is(err, ErrNotFound) || errors.Is(err, ErrSignIn):
		p.notFound(w, r)
		return
	case errors.Is(err, ErrNoPort):
		lc := p.locale(r)
		writeError(lc, w, r, http.StatusNotFound, i18n.T(lc, "Not found"),
			i18n.T(lc, "This workbench serves no app on that port: add the port under Extra ports on the workbench's page, then open it from there."), false)
		return
	case errors.Is(err, ErrBadToken):
		lc := p.locale(r)
		writeError(lc, w, r, http.StatusForbidden, i18n.T(lc, "Token refused"),
			i18n.T(lc, "This workbench token is unknown, expired or revoked, or was made for another workbench. Create a new one on the workbench's page, under Access tokens."), false)
		return
	case errors.Is(err, ErrAPIToken):
		lc := p.locale(r)
		writeError(lc, w, r, http.StatusForbidden, i18n.T(lc, "Token refused"),
			i18n.T(lc, "This is a portal API token (wbt_…): it opens the portal's API, not a workbench. Create a workbench token (wbk_…) on the workbench's page, under Access tokens."), false)
		return
	case errors.Is(err, ErrPaused):
		// Answered at once from what the portal knows, not after a wait
		// on a frozen Jupyter. The transport has no response-header
		// timeout to catch that instead, on purpose: a legitimate request
		// (a big download being prepared, a slow API call of a user's
		// app) may take minutes before its headers, and such a timeout
		// would cut it. A paused container is answered here; one that
		// hangs for another reason is the owner's to see.
		w.Header().Set("Retry-After", "10")
		lc := p.locale(r)
		writeError(lc, w, r, http.StatusServiceUnavailable, i18n.T(lc, "Workbench paused"),
			i18n.T(lc, "This workbench's container was paused outside the portal (docker pause), so JupyterLab cannot answer. An administrator can unpause it; this page retries by itself."), true)
		return
	case errors.Is(err, ErrNotReady):
		if p.opts.NotRunning != nil && wantsHTML(r) {
			p.opts.NotRunning(w, r, id)
			return
		}
		lc := p.locale(r)
		writeError(lc, w, r, http.StatusServiceUnavailable, i18n.T(lc, "Workbench not running"),
			i18n.T(lc, "This workbench is not running. Start it from the portal, then reload this page."), false)
		return
	case err != nil && ClientGone(r, err):
		p.log.Debug("proxy: client went away during resolve", "workbench", id)
		w.WriteHeader(StatusClientClosed)
		return
	case err != nil:
		p.log.Error("proxy: resolve failed", "workbench", id, "err", err)
		lc := p.locale(r)
		writeError(lc, w, r, http.StatusInternalServerError, i18n.T(lc, "Internal error"), i18n.T(lc, "Could not look up the workbench."), false)
		return
	}

	if t.StripPrefix != "" && r.URL.Path == t.StripPrefix {
		// /wb/{id}/port/6006 → …/6006/, as /wb/{id} → /wb/{id}/: an app's
		// relative links resolve against its own root only with the slash.
		loc := t.StripPrefix + "/"
		if r.URL.RawQuery != "" {
			loc += "?" + r.URL.RawQuery
		}
		http.Redirect(w, r, loc, http.StatusPermanentRedirect)
		return
	}
	// Refused here, before either path sends anything upstream: Jupyter
	// would close the connection with a bare 400 (body_limit.go).
	if r.ContentLength > p.maxBody && t.StripPrefix == "" {
		p.refuseTooLarge(w, r, id, r.Body)
		return
	}
	p.activity(id)
	upgrade := isUpgrade(r)
	if !upgrade {
		// Long polls and streams outlive any server-wide WriteTimeout;
		// the proxy must not cut them. Hijacked (WebSocket) connections
		// have their deadlines cleared by net/http itself.
		_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
	}
	if !upgrade && p.leanOK(r) {
		p.serveLean(w, r, started, &reqInfo{id: id, target: t, scoped: scoped})
		return
	}
	ctx := r.Context()
	if p.opts.Live != nil && t.UserID != 0 {
		// Only a request that revocation may have to end needs its own
		// cancel (a context costs five allocations).
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		defer p.opts.Live.add(t.UserID, t.Grant, id, started, cancel)()
	}
	var capped *cappedBody
	if !upgrade {
		capped = p.limitUnknownLength(r, t)
		p.watchRequestBody(r, id) // a long upload counts as activity (transfer_activity.go)
	}
	ic := &infoCtx{Context: ctx, ri: reqInfo{id: id, target: t, scoped: scoped, capped: capped}}
	p.rp.ServeHTTP(guardWriter{w}, r.WithContext(ic))
}

// notFound answers an address that opens no workbench of the caller's:
// the portal's page for a browser navigation (Options.NotFound), else
// the short message.
func (p *Proxy) notFound(w http.ResponseWriter, r *http.Request) {
	if p.opts.NotFound != nil && wantsHTML(r) {
		p.opts.NotFound(w, r)
		return
	}
	lc := p.locale(r)
	writeError(lc, w, r, http.StatusNotFound, i18n.T(lc, "Not found"), i18n.T(lc, "There is no such workbench."), false)
}

func (p *Proxy) activity(id string) {
	if p.opts.OnActivity != nil {
		p.opts.OnActivity(id, time.Now())
	}
}

func infoFrom(ctx context.Context) *reqInfo {
	ri, _ := ctx.Value(ctxKey{}).(*reqInfo)
	return ri
}

// infoCtx carries a request's reqInfo: context.WithValue plus the reqInfo
// in one allocation instead of two. Done, Err and the cancel-context lookup
// go to the parent, so contexts derived from it (the transport's) are
// cancelled with it without a goroutine.
type infoCtx struct {
	context.Context
	ri reqInfo
}

func (c *infoCtx) Value(key any) any {
	if _, ok := key.(ctxKey); ok {
		return &c.ri
	}
	return c.Context.Value(key)
}
