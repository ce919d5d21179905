package proxy

import (
	"errors"
	"net/http"
	"strings"
)

// originPolicy is the CSRF check for proxied paths. Jupyter skips its own
// XSRF check for token-authenticated requests, and the proxy adds the token
// to every request, so without this check any site could drive a user's
// notebook through the ambient portal session cookie.
type originPolicy struct {
	trusted map[string]bool // lower-cased scheme://host[:port]
	scheme  string          // fixed scheme of the own origin; "" = from r.TLS
}

func newOriginPolicy(trusted []string, scheme string) *originPolicy {
	m := make(map[string]bool, len(trusted))
	for _, o := range trusted {
		o = strings.ToLower(strings.TrimRight(strings.TrimSpace(o), "/"))
		if o != "" {
			m[o] = true
		}
	}
	return &originPolicy{trusted: m, scheme: scheme}
}

// check returns nil when r may pass. Safe methods pass unless they are a
// protocol upgrade: a WebSocket handshake is a GET, so
// http.CrossOriginProtection lets it through, yet it opens a read/write
// channel to the kernels.
func (op *originPolicy) check(r *http.Request) error {
	upgrade := isUpgrade(r)
	if !upgrade {
		switch r.Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
			return nil
		}
	}

	origin := r.Header.Get("Origin")
	// An explicitly trusted origin passes whatever Sec-Fetch-Site says,
	// as with http.CrossOriginProtection.AddTrustedOrigin.
	if origin != "" && op.trusted[strings.ToLower(origin)] {
		return nil
	}

	if sfs := r.Header.Get("Sec-Fetch-Site"); sfs != "" {
		switch {
		case sfs == "same-origin":
			return nil
		case sfs == "none" && !upgrade:
			// A user-initiated navigation (bookmark, address bar): no
			// other site caused it.
			return nil
		default:
			return errors.New("Sec-Fetch-Site is " + sfs)
		}
	}

	if origin != "" {
		if strings.EqualFold(origin, op.ownOrigin(r)) {
			return nil
		}
		return errors.New("origin " + origin + " is not this portal")
	}

	if upgrade {
		// Browsers always send Origin on WebSocket handshakes; a missing
		// one is not worth the risk of guessing.
		return errors.New("WebSocket handshake without Origin")
	}
	// Neither header: not a browser (browsers send Origin on every
	// cross-origin unsafe request), so there is no ambient cookie to abuse.
	return nil
}

// ownOrigin is scheme://host of the request as the client addressed it.
func (op *originPolicy) ownOrigin(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if op.scheme != "" {
		scheme = op.scheme
	}
	return scheme + "://" + r.Host
}

// isUpgrade reports whether r asks to switch protocols (WebSocket, or
// anything else ReverseProxy would tunnel).
func isUpgrade(r *http.Request) bool {
	if r.Header.Get("Upgrade") == "" {
		return false
	}
	for _, v := range r.Header.Values("Connection") {
		for tok := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(tok), "upgrade") {
				return true
			}
		}
	}
	return false
}
