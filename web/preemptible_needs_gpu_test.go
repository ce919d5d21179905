package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestPreemptibleWithoutGPUIsRefused: preemptible asked on a flavor without
// GPUs is refused with its own code, by the API and beside the form's box,
// and nothing is recorded. It was dropped in silence (202, "preemptible":
// false): the user believed they got the discount. With auto-resume too,
// the one refusal says to leave both off. The form keeps what was typed.
func TestPreemptibleWithoutGPUIsRefused(t *testing.T) {
	p := newPortal(t)
	alice := tokenFor(t, p, "alice", "user")
	for body, want := range map[string]string{
		`{"name":"cpu-spot","image":"PyTorch (CUDA 12)","flavor":"CPU small","preemptible":true}`:                    "leave preemptible off",
		`{"name":"cpu-spot","image":"PyTorch (CUDA 12)","flavor":"CPU small","preemptible":true,"auto_resume":true}`: "leave preemptible and auto-resume off",
	} {
		code, out := p.api("POST", "/api/v1/workbenches", alice, body)
		e, _ := out["error"].(map[string]any)
		msg, _ := e["message"].(string)
		if code != http.StatusBadRequest || errCode(out) != "preemptible_needs_gpu" || !strings.Contains(msg, want) {
			t.Errorf("%s: %d %v, want 400 preemptible_needs_gpu saying %q", body, code, out, want)
		}
	}
	if _, list := p.api("GET", "/api/v1/workbenches", alice, ""); len(list["items"].([]any)) != 0 {
		t.Errorf("refused launches recorded: %v", list["items"])
	}

	zh, en := p.readersSignedIn("alice", "alice-password")
	form := url.Values{"name": {"cpu-spot"}, "image": {"PyTorch (CUDA 12)"}, "flavor": {"CPU small"}, "idle_minutes": {"90"},
		"queue": {"on"}, "preemptible": {"on"}}
	for _, c := range []struct {
		client *http.Client
		want   string
	}{{en, "a flavor without GPUs is never preempted and has no preemptible price"}, {zh, "没有 GPU 的规格从不会被抢占，也没有可抢占价格"}} {
		res, body := p.postFormBody(c.client, "/workbenches", form)
		doc := mpDoc(t, body)
		if got := strings.TrimSpace(doc.Find(`[data-testid=error-preemptible]`).Text()); res.StatusCode != http.StatusBadRequest || !strings.Contains(got, c.want) {
			t.Errorf("form: %d, error beside preemptible %q, want %q", res.StatusCode, got, c.want)
		}
		box := doc.Find(`[data-testid=launch-preemptible]`)
		if _, checked := box.Attr("checked"); !checked || box.AttrOr("aria-describedby", "") != "error-preemptible" || box.AttrOr("aria-invalid", "") != "true" {
			t.Errorf("preemptible box after the refusal: checked %v, described by %q", checked, box.AttrOr("aria-describedby", ""))
		}
		for sel, want := range map[string]string{
			`input[name=name]`:            "cpu-spot",
			`input[name=idle_minutes]`:    "90",
			`input[name=flavor][checked]`: "CPU small",
		} {
			if got := doc.Find(sel).AttrOr("value", ""); got != want {
				t.Errorf("%s after the refusal: %q, want %q", sel, got, want)
			}
		}
	}
	if _, list := p.api("GET", "/api/v1/workbenches", alice, ""); len(list["items"].([]any)) != 0 {
		t.Errorf("refused form launches recorded: %v", list["items"])
	}
}
