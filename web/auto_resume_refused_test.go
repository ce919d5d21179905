package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestAutoResumeWithoutPreemptibleIsRefused: auto-resume asked of a run
// that is never preempted (neither preemptible nor of a preemptible class,
// or a flavor without GPUs) is refused with its own code, by the API and
// beside the form's box, and nothing is recorded. It was dropped in silence
// (202, "auto_resume": false): the user believed the run came back by
// itself. The form keeps everything typed.
func TestAutoResumeWithoutPreemptibleIsRefused(t *testing.T) {
	p := newPortal(t)
	alice := tokenFor(t, p, "alice", "user")
	for _, body := range []string{
		`{"name":"spot","image":"PyTorch (CUDA 12)","flavor":"1x H100 80GB HBM3","queue":true,"auto_resume":true}`,
		`{"name":"spot","image":"PyTorch (CUDA 12)","flavor":"CPU small","auto_resume":true}`,
	} {
		code, out := p.api("POST", "/api/v1/workbenches", alice, body)
		e, _ := out["error"].(map[string]any)
		msg, _ := e["message"].(string)
		if code != http.StatusBadRequest || errCode(out) != "auto_resume_needs_preemptible" || !strings.Contains(msg, "auto-resume off") {
			t.Errorf("%s: %d %v, want 400 auto_resume_needs_preemptible", body, code, out)
		}
	}
	if _, list := p.api("GET", "/api/v1/workbenches", alice, ""); len(list["items"].([]any)) != 0 {
		t.Errorf("refused launches recorded: %v", list["items"])
	}

	zh, en := p.readersSignedIn("alice", "alice-password")
	form := url.Values{"name": {"spot-run"}, "image": {"PyTorch (CUDA 12)"}, "flavor": {"1x H100 80GB HBM3"}, "idle_minutes": {"90"},
		"queue": {"on"}, "priority": {"batch"}, "auto_resume": {"on"}}
	for _, c := range []struct {
		client *http.Client
		want   string
	}{{en, "only a preemptible run is resumed after a preemption"}, {zh, "只有可抢占的运行才会在被抢占后自动恢复"}} {
		res, body := p.postFormBody(c.client, "/workbenches", form)
		doc := mpDoc(t, body)
		if got := strings.TrimSpace(doc.Find(`[data-testid=error-auto_resume]`).Text()); res.StatusCode != http.StatusBadRequest || !strings.Contains(got, c.want) {
			t.Errorf("form: %d, error beside auto-resume %q, want %q", res.StatusCode, got, c.want)
		}
		box := doc.Find(`[data-testid=launch-auto-resume]`)
		if _, checked := box.Attr("checked"); !checked || box.AttrOr("aria-describedby", "") != "error-auto_resume" || box.AttrOr("aria-invalid", "") != "true" {
			t.Errorf("auto-resume box after the refusal: checked %v, described by %q", checked, box.AttrOr("aria-describedby", ""))
		}
		// What was typed and chosen is still there.
		kept := map[string]string{
			`input[name=name]`:         doc.Find(`input[name=name]`).AttrOr("value", ""),
			`input[name=idle_minutes]`: doc.Find(`input[name=idle_minutes]`).AttrOr("value", ""),
			`select[name=priority]`:    doc.Find(`select[name=priority] option[selected]`).AttrOr("value", ""),
			`input[name=image]`:        doc.Find(`input[name=image][checked]`).AttrOr("value", ""),
			`input[name=flavor]`:       doc.Find(`input[name=flavor][checked]`).AttrOr("value", ""),
		}
		for sel, want := range map[string]string{`input[name=name]`: "spot-run", `input[name=idle_minutes]`: "90", `select[name=priority]`: "batch",
			`input[name=image]`: "PyTorch (CUDA 12)", `input[name=flavor]`: "1x H100 80GB HBM3"} {
			if kept[sel] != want {
				t.Errorf("%s after the refusal: %q, want %q", sel, kept[sel], want)
			}
		}
		if _, checked := doc.Find(`[data-testid=launch-queue]`).Attr("checked"); !checked {
			t.Errorf("queue box lost after the refusal")
		}
	}
	if _, list := p.api("GET", "/api/v1/workbenches", alice, ""); len(list["items"].([]any)) != 0 {
		t.Errorf("refused form launches recorded: %v", list["items"])
	}

	// A preemptible class is a preemptible run: auto-resume holds without
	// the box.
	code, wb := p.api("POST", "/api/v1/workbenches", alice, `{"name":"spot-class","image":"PyTorch (CUDA 12)","flavor":"1x H100 80GB HBM3","queue":true,"priority":"preemptible","auto_resume":true}`)
	if code != http.StatusAccepted || wb["preemptible"] != true || wb["auto_resume"] != true {
		t.Errorf("preemptible class with auto_resume: %d %v", code, wb)
	}
}
