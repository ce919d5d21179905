// Package handlers holds the portal's HTTP actions: one Handler struct with
// its dependencies, one route table (routes.go) and one file per action.
package handlers

import (
	"log/slog"
	"time"

	"github.com/alexedwards/scs/v2"

	"workbench/models"
	"workbench/orchestrator"
)

// Config is what the handlers need to know about the deployment.
type Config struct {
	PublicURL string // e.g. https://gpu.example.org; "" when unset
	Currency  string
	Version   string
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
	cfg       Config
	log       *slog.Logger
	started   time.Time
}

// New builds the Handler.
func New(store *models.Store, sessions *scs.SessionManager, pool *orchestrator.Pool, wbs *orchestrator.Manager, cfg Config, log *slog.Logger) *Handler {
	return &Handler{
		store:     store,
		sessions:  sessions,
		pool:      pool,
		wbs:       wbs,
		throttle:  NewLoginThrottle(5, 20, 15*time.Minute),
		proxyAuth: newProxyAuthCache(),
		cfg:       cfg,
		log:       log,
		started:   time.Now(),
	}
}
