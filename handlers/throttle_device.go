package handlers

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"time"
)

// Device tokens (OWASP's "device cookies" against slow guessing): a
// browser that logged in as a user gets a random token in a cookie sent
// only to /login; while it is known for that user, the login from it is
// not held back by its address's delay (LoginThrottle.ReserveFrom). The
// tokens live in memory with the failure counts: a restart forgets both,
// and the browser is trusted again at its next login.

// deviceCookie names the cookie; deviceTrustFor is how long a token is
// trusted after its last use.
const (
	deviceCookie   = "wb_device"
	deviceTrustFor = 90 * 24 * time.Hour
	maxDevices     = 100_000
)

type deviceMark struct {
	username string
	last     time.Time
}

func deviceKey(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// TrustDevice makes a new token for a browser that just logged in as
// username, and forgets the one it had (old, "" for none).
func (t *LoginThrottle) TrustDevice(username, old string) string {
	token := rand.Text()
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	if t.devices == nil {
		t.devices = map[string]deviceMark{}
	}
	if old != "" {
		delete(t.devices, deviceKey(old))
	}
	if len(t.devices) >= maxDevices {
		for k, d := range t.devices {
			if now.Sub(d.last) >= deviceTrustFor {
				delete(t.devices, k)
			}
		}
		if len(t.devices) >= maxDevices {
			return "" // full of live tokens: this browser is not trusted
		}
	}
	t.devices[deviceKey(token)] = deviceMark{username: username, last: now}
	return token
}

// DeviceTrusted reports whether token is a browser's that logged in as
// username within deviceTrustFor.
func (t *LoginThrottle) DeviceTrusted(username, token string) bool {
	if token == "" {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	d, ok := t.devices[deviceKey(token)]
	if !ok || t.now().Sub(d.last) >= deviceTrustFor {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(d.username), []byte(username)) == 1
}
