package web

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/alexedwards/scs/v2"

	"workbench/handlers/proxy"
)

// scs calls its ErrorFunc in two places: when the session cannot be loaded
// (before any handler ran: the ErrorFunc must answer) and when it cannot be
// saved, from inside the handler's first Write/WriteHeader, just before
// the handler's own header goes out. Answering 500 there made net/http log
// "superfluous response.WriteHeader call" (from statusRecorder) and sent
// the 500 instead of the handler's answer. withSessions marks the request
// once the handler runs, so the ErrorFunc knows which case it is in.
// (When the handler wrote nothing at all, scs saves after it returns; a
// failure then is answered 500 as before.)
type sessionPhase struct{ inHandler, handlerDone bool }

type sessionPhaseKey struct{}

// withSessions is sm.LoadAndSave(next) with the phase mark.
func withSessions(sm *scs.SessionManager, next http.Handler) http.Handler {
	inner := sm.LoadAndSave(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ph, ok := r.Context().Value(sessionPhaseKey{}).(*sessionPhase); ok {
			ph.inHandler = true
			defer func() { ph.handlerDone = true }()
		}
		next.ServeHTTP(w, r)
	}))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inner.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), sessionPhaseKey{}, &sessionPhase{})))
	})
}

// sessionErrorFunc answers a session store failure: a 500 when loading
// failed; when saving failed the handler answers (nothing is written here).
// A client that went away is logged at debug: its request was cancelled.
func sessionErrorFunc(log *slog.Logger) func(http.ResponseWriter, *http.Request, error) {
	return func(w http.ResponseWriter, r *http.Request, err error) {
		ph, _ := r.Context().Value(sessionPhaseKey{}).(*sessionPhase)
		// saving: scs is saving from inside the handler's first write,
		// which goes on to write the handler's own header.
		saving := ph != nil && ph.inHandler && !ph.handlerDone
		switch {
		case proxy.ClientGone(r, err):
			log.Debug("session: client went away", "path", r.URL.Path, "saving", saving, "err", err)
		case saving:
			log.Error("session not saved", "path", r.URL.Path, "err", err)
		default:
			log.Error("session", "path", r.URL.Path, "err", err)
		}
		if saving {
			return
		}
		if proxy.ClientGone(r, err) {
			w.WriteHeader(proxy.StatusClientClosed)
			return
		}
		http.Error(w, "session error", http.StatusInternalServerError)
	}
}
