package web_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"net/http"
	"path/filepath"
	"testing"

	"workbench/models"
	"workbench/web"
)

// /healthz is unauthenticated: when the database fails it says only that.
func TestHealthzSaysOnlyNotOK(t *testing.T) {
	p := newPortal(t)
	if err := p.srv.Store.Close(); err != nil {
		t.Fatal(err)
	}
	res, body := p.get(p.client(), "/healthz")
	var got map[string]any
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatalf("healthz body %q: %v", body, err)
	}
	if res.StatusCode != http.StatusServiceUnavailable || len(got) != 1 || got["status"] != "unavailable" {
		t.Errorf("healthz with the database closed: %d %s, want 503 {\"status\":\"unavailable\"} only", res.StatusCode, body)
	}
}

// A store error while loading the session's user is a 503, not a logout:
// once the store answers again the same session is still logged in.
func TestStoreErrorDoesNotLogOut(t *testing.T) {
	var dataDir string
	p := newPortal(t, func(c *web.Config) { dataDir = c.DataDir })
	if _, err := p.srv.Store.CreateUser(context.Background(), models.NewUser{Username: "ada", Password: "ada-password-1", Role: "user"}); err != nil {
		t.Fatal(err)
	}
	c := p.client()
	p.login(c, "ada", "ada-password-1")
	if res, _ := p.get(c, "/gpus"); res.StatusCode != http.StatusOK {
		t.Fatalf("logged in: /gpus %d", res.StatusCode)
	}
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(dataDir, models.DBFileName)+"?_busy_timeout=10000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// Make the users table briefly unreadable (a transient store failure).
	if _, err := db.Exec(`ALTER TABLE users RENAME TO users_away`); err != nil {
		t.Fatal(err)
	}
	res, _ := p.get(c, "/gpus")
	if _, err := db.Exec(`ALTER TABLE users_away RENAME TO users`); err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("with the users table unreadable: %d (Location %q), want 503", res.StatusCode, res.Header.Get("Location"))
	}
	if res, _ := p.get(c, "/gpus"); res.StatusCode != http.StatusOK {
		t.Errorf("after the store recovered: /gpus %d (Location %q), want 200: the session was lost", res.StatusCode, res.Header.Get("Location"))
	}
}
