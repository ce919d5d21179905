package web_test

import (
	"strings"
	"testing"
)

// TestOneCoreIsSingular: a one-core flavor reads "1 CPU core" on the launch
// form and "1 core" in the calculator's flavor list and line items (they
// read "1 CPU cores", "1 cores"); two cores stay plural.
func TestOneCoreIsSingular(t *testing.T) {
	p := newPortal(t)
	admin := tokenFor(t, p, "admin", "admin")
	if code, out := p.api("POST", "/api/v1/flavors", admin, `{"name":"CPU one","cpu_cores":1,"memory_gib":2}`); code != 201 {
		t.Fatalf("flavor: %d %v", code, out)
	}
	c := p.client()
	tokenFor(t, p, "alice", "user")
	p.login(c, "alice", "alice-password")
	_, page := p.get(c, "/workbenches/new")
	text := strings.Join(strings.Fields(mpDoc(t, page).Find(`body`).Text()), " ")
	if !strings.Contains(text, "1 CPU core · 2 GiB memory") || strings.Contains(text, "1 CPU cores") {
		t.Errorf("launch form: want \"1 CPU core · 2 GiB memory\", no \"1 CPU cores\"")
	}
	_, page = p.get(c, "/calculator?flavor=CPU+one&duration=total&total_hours=1")
	doc := mpDoc(t, page)
	option := strings.TrimSpace(doc.Find(`option[value="CPU one"]`).Text())
	if option != "CPU one, 1 core, 2 GiB" {
		t.Errorf("calculator option %q, want \"CPU one, 1 core, 2 GiB\"", option)
	}
	text = strings.Join(strings.Fields(doc.Find(`body`).Text()), " ")
	if strings.Contains(text, "1 cores") || !strings.Contains(text, "1 core") {
		t.Errorf("calculator text says \"1 cores\" or lacks \"1 core\"")
	}
}
