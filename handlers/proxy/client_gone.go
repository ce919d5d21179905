package proxy

import (
	"context"
	"errors"
	"net/http"
)

// StatusClientClosed is the status recorded (never seen by anyone) for a
// request whose client went away before its answer: nginx's 499. Access
// logs and metrics can tell it from a failure the client received.
const StatusClientClosed = 499

// ClientGone reports whether err, met while serving r, is only the client
// having gone away (its request context cancelled): not a failure of the
// portal, so not logged as an error, and nothing worth answering.
func ClientGone(r *http.Request, err error) bool {
	return errors.Is(err, context.Canceled) || r.Context().Err() != nil
}
