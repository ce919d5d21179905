package handlers

import (
	"context"
	"time"

	"workbench/models"
)

// Device tokens (OWASP's "device cookies" against slow guessing): a
// browser that logged in as a user gets a random token in a cookie sent
// only to /login; while it is live for that user, the login from it is
// not held back by its address's delay (LoginThrottle.ReserveFrom). The
// tokens are kept by the store (models/login_device.go, their SHA-256
// only), so a restart keeps them; the failure counts stay in memory.

// deviceCookie names the cookie; deviceTrustFor is how long a token is
// trusted after the login that gave it.
const (
	deviceCookie   = "wb_device"
	deviceTrustFor = models.LoginDeviceTrustFor
)

// deviceStore is where the tokens are kept (*models.Store).
type deviceStore interface {
	NewLoginDevice(ctx context.Context, userID int64, old string, now time.Time) (string, error)
	LoginDeviceTrusted(ctx context.Context, username, token string, now time.Time) (bool, error)
}

// TrustDevice makes a new token for a browser that just logged in as the
// user userID, and forgets the one it had (old, "" for none). "" (and no
// error) when the store holds as many live tokens as it keeps.
func (t *LoginThrottle) TrustDevice(ctx context.Context, userID int64, old string) (string, error) {
	return t.devices.NewLoginDevice(ctx, userID, old, t.now())
}

// DeviceTrusted reports whether token is a browser's that logged in as
// username within deviceTrustFor.
func (t *LoginThrottle) DeviceTrusted(ctx context.Context, username, token string) (bool, error) {
	return t.devices.LoginDeviceTrusted(ctx, username, token, t.now())
}
