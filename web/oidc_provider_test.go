package web_test

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/coreos/go-oidc/v3/oidc/oidctest"
)

// testIdP is a small but real OpenID Connect provider on loopback for the
// single sign-on tests: discovery and JWKS (go-oidc's oidctest), an
// authorization endpoint with a sign-in form a browser fills, and a token
// endpoint that checks the client, the redirect URI and PKCE (S256) and
// answers with an RS256-signed ID token. Tamper makes the next ID token
// wrong in one way, to see the portal refuse it.
type testIdP struct {
	t        *testing.T
	srv      *httptest.Server
	key      *rsa.PrivateKey
	otherKey *rsa.PrivateKey // signs "bad signature" tokens under the same kid

	clientID, clientSecret string

	mu     sync.Mutex
	users  map[string]idpUser // by the login typed on the form
	codes  map[string]idpCode
	tamper string // "", "audience", "expired", "signature", "nonce"
	// authorizeQueries are the query strings the portal sent browsers with.
	authorizeQueries []url.Values
	// tokenRequests counts code exchanges (also refused ones).
	tokenRequests int
}

type idpUser struct {
	Subject, Username, Email, Name string
	Groups                         []string
}

type idpCode struct {
	user                                 idpUser
	clientID, redirect, nonce, challenge string
	authTime                             time.Time
}

const idpKeyID = "test-key-1"

func newTestIdP(t *testing.T) *testIdP {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	p := &testIdP{t: t, key: key, otherKey: other, clientID: "workbench", clientSecret: "s3cret-client",
		users: map[string]idpUser{}, codes: map[string]idpCode{}}
	disco := &oidctest.Server{PublicKeys: []oidctest.PublicKey{{PublicKey: key.Public(), KeyID: idpKeyID, Algorithm: oidc.RS256}}}
	mux := http.NewServeMux()
	mux.Handle("GET /.well-known/openid-configuration", disco)
	mux.Handle("GET /keys", disco)
	mux.HandleFunc("GET /auth", p.authorizeForm)
	mux.HandleFunc("POST /auth", p.authorize)
	mux.HandleFunc("POST /token", p.token)
	p.srv = httptest.NewServer(mux)
	t.Cleanup(p.srv.Close)
	disco.SetIssuer(p.srv.URL)
	return p
}

func (p *testIdP) setUser(login string, u idpUser) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.users[login] = u
}

func (p *testIdP) setTamper(mode string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tamper = mode
}

func (p *testIdP) lastAuthorizeQuery() url.Values {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.authorizeQueries) == 0 {
		return nil
	}
	return p.authorizeQueries[len(p.authorizeQueries)-1]
}

// authorizeForm is the provider's sign-in page: one field for the login.
func (p *testIdP) authorizeForm(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p.mu.Lock()
	p.authorizeQueries = append(p.authorizeQueries, q)
	p.mu.Unlock()
	if q.Get("client_id") != p.clientID || q.Get("response_type") != "code" || q.Get("redirect_uri") == "" {
		http.Error(w, "bad authorization request", http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprintf(w, `<!doctype html><html><body><h1 data-testid="idp-page">Test directory</h1>
<form method="post" action="/auth?%s"><label>Login <input name="login" data-testid="idp-login"></label>
<button type="submit" data-testid="idp-signin">Sign in</button></form></body></html>`, html.EscapeString(r.URL.RawQuery))
}

// authorize issues a code for the typed login and sends the browser back.
func (p *testIdP) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p.mu.Lock()
	u, ok := p.users[r.PostFormValue("login")]
	p.mu.Unlock()
	redirect, err := url.Parse(q.Get("redirect_uri"))
	if err != nil || q.Get("client_id") != p.clientID {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	back := redirect.Query()
	back.Set("state", q.Get("state"))
	if !ok {
		back.Set("error", "access_denied")
		back.Set("error_description", "unknown user")
	} else {
		if q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" {
			http.Error(w, "PKCE S256 required", http.StatusBadRequest)
			return
		}
		code := rand.Text()
		p.mu.Lock()
		p.codes[code] = idpCode{user: u, clientID: q.Get("client_id"), redirect: q.Get("redirect_uri"),
			nonce: q.Get("nonce"), challenge: q.Get("code_challenge"), authTime: time.Now()}
		p.mu.Unlock()
		back.Set("code", code)
	}
	redirect.RawQuery = back.Encode()
	http.Redirect(w, r, redirect.String(), http.StatusFound)
}

// token exchanges a code (once) for an ID token.
func (p *testIdP) token(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tokenRequests++
	fail := func(code string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		json.NewEncoder(w).Encode(map[string]string{"error": code})
	}
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.PostFormValue("client_id"), r.PostFormValue("client_secret")
	}
	if id != p.clientID || secret != p.clientSecret {
		fail("invalid_client")
		return
	}
	c, ok := p.codes[r.PostFormValue("code")]
	delete(p.codes, r.PostFormValue("code")) // a code works once
	if !ok || r.PostFormValue("grant_type") != "authorization_code" || r.PostFormValue("redirect_uri") != c.redirect || c.clientID != id {
		fail("invalid_grant")
		return
	}
	sum := sha256.Sum256([]byte(r.PostFormValue("code_verifier")))
	if base64.RawURLEncoding.EncodeToString(sum[:]) != c.challenge {
		fail("invalid_grant") // PKCE: not the client that started the flow
		return
	}
	now := time.Now()
	claims := map[string]any{
		"iss": p.srv.URL, "aud": p.clientID, "sub": c.user.Subject, "iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(),
		"auth_time": c.authTime.Unix(), "nonce": c.nonce,
		"preferred_username": c.user.Username, "email": c.user.Email, "name": c.user.Name, "groups": c.user.Groups,
	}
	key := p.key
	switch p.tamper {
	case "audience":
		claims["aud"] = "another-client"
	case "expired":
		claims["iat"], claims["exp"] = now.Add(-2*time.Hour).Unix(), now.Add(-time.Hour).Unix()
	case "signature":
		key = p.otherKey
	case "nonce":
		claims["nonce"] = "a-nonce-from-another-sign-in"
	}
	raw, _ := json.Marshal(claims)
	idToken := oidctest.SignIDToken(key, idpKeyID, oidc.RS256, string(raw))
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"access_token": rand.Text(), "token_type": "Bearer", "expires_in": 300, "id_token": idToken})
}
