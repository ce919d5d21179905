package handlers

import (
	"log/slog"
	"net/http"

	"workbench/handlers/proxy"
)

// errStoreUnavailable answers a request the portal cannot serve because the
// store failed while telling who is asking. It is a 503, never a logout:
// the session stays, and the next request (once the store answers) works.
var errStoreUnavailable = newError(http.StatusServiceUnavailable, "store_unavailable",
	"the portal's database did not answer; try again in a moment")

// storeUnavailable logs the store's error (the answer hides it) and
// returns errStoreUnavailable for h.fail.
// A client that went away is not the store failing: the error is passed on
// as is, and h.fail records it quietly.
func storeUnavailable(log *slog.Logger, r *http.Request, err error) error {
	if proxy.ClientGone(r, err) {
		return err
	}
	log.Error("store failed while loading the user", "err", err)
	return errStoreUnavailable
}
