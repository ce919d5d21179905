// Package handlers holds the portal's HTTP actions: one Handler struct with
// its dependencies, one route table (routes.go) and one file per action.
package handlers

import (
	"log/slog"
	"time"

	"github.com/alexedwards/scs/v2"

	"workbench/handlers/proxy"
	"workbench/models"
	"workbench/orchestrator"
)

// Config is what the handlers need to know about the deployment.
type Config struct {
	PublicURL string // e.g. https://gpu.example.org; "" when unset
	Currency  string
	Version   string
	// NotebookDomain, when set, serves each workbench on its own origin
	// {id}.NotebookDomain (see notebook_host.go); "" is path mode.
	NotebookDomain string
	// LoginMemory bounds the memory concurrent password hashes and checks
	// may take together, in bytes (0: models.DefaultHashMemory); it sizes
	// the store's hash gate, shared by logins, sudo and password changes.
	LoginMemory int64
	// SSHAddr is where the portal serves SSH into workbenches ("" off).
	SSHAddr string
	// OIDC is single sign-on (oidc_config.go); off without an issuer.
	OIDC OIDCConfig
	// SendsEmail is whether the operator set up email (SMTP): the
	// notifications page says so beside the user's email choice.
	SendsEmail bool
}

// Handler holds every dependency of the HTTP actions.
type Handler struct {
	store    *models.Store
	sessions *scs.SessionManager
	pool     *orchestrator.Pool
	wbs      *orchestrator.Manager
	throttle *LoginThrottle
	// proxyAuth caches session→user for the Jupyter proxy's hot path.
	proxyAuth *proxyAuthCache
	// live is every proxied request in flight, so revocation can end them.
	live *proxy.Live
	// closeSSH ends a user's open SSH connections (web/sshgate's
	// CloseUser); nil when the portal serves no SSH.
	closeSSH func(userID int64, by, why string) int
	// oidc is the single sign-on client; nil when SSO is off.
	oidc    *oidcClient
	cfg     Config
	log     *slog.Logger
	started time.Time
}

// SetSSHCloser hands the handler the SSH server's way to close a user's
// open connections, so that disabling a user or resetting their password
// ends their SSH sessions at once. Called before the handler serves.
func (h *Handler) SetSSHCloser(closeUser func(userID int64, by, why string) int) {
	h.closeSSH = closeUser
}

// New builds the Handler.
func New(store *models.Store, sessions *scs.SessionManager, pool *orchestrator.Pool, wbs *orchestrator.Manager, cfg Config, log *slog.Logger) *Handler {
	store.SetHashMemory(cfg.LoginMemory)
	h := &Handler{
		store:     store,
		sessions:  sessions,
		pool:      pool,
		wbs:       wbs,
		throttle:  NewLoginThrottle(store),
		proxyAuth: newProxyAuthCache(),
		live:      proxy.NewLive(),
		cfg:       cfg,
		log:       log,
		started:   time.Now(),
	}
	if cfg.OIDC.Enabled() {
		h.oidc = &oidcClient{cfg: cfg.OIDC}
	}
	return h
}
