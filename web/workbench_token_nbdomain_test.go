package web_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestWorkbenchTokenNotebookDomain: with a notebook domain the portal's
// /wb/{id}/ sends browsers to the notebook host, but a Jupyter client with
// a workbench token is served there directly (sandboxed), and a client
// without one still gets the redirect.
func TestWorkbenchTokenNotebookDomain(t *testing.T) {
	np := newNBPortal(t)
	alice := tokenFor(t, np.testPortal, "alice", "user")
	code, wb := np.api("POST", "/api/v1/workbenches", alice, `{"name":"nb","image":"fake","flavor":"CPU small"}`)
	if code != http.StatusAccepted {
		t.Fatalf("launch: %d %v", code, wb)
	}
	id := wb["id"].(string)
	waitState(t, np.testPortal, alice, id, "running")
	code, out := np.api("POST", "/api/v1/workbenches/"+id+"/tokens", alice, `{"name":"vscode"}`)
	if code != http.StatusCreated {
		t.Fatalf("token: %d %v", code, out)
	}
	tok := out["token"].(string)
	if su := out["server_url"].(string); su != np.portal+"/wb/"+id+"/" {
		t.Errorf("server_url %q, want the portal's path", su)
	}
	c := np.client()
	res, body := np.do(c, "GET", np.portal+"/wb/"+id+"/api/kernels", map[string]string{"Authorization": "token " + tok})
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Security-Policy") != "sandbox" {
		t.Fatalf("token client with a notebook domain: %d csp=%q %.200s", res.StatusCode, res.Header.Get("Content-Security-Policy"), body)
	}
	res, _ = np.do(c, "GET", np.portal+"/wb/"+id+"/api/kernels", nil)
	if res.StatusCode == http.StatusOK || strings.Contains(res.Header.Get("Location"), "token") {
		t.Fatalf("no token with a notebook domain: %d %q", res.StatusCode, res.Header.Get("Location"))
	}
}
