package web_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"workbench/handlers"
	"workbench/models"
	"workbench/orchestrator"
)

// strictAPI sends one API request and decodes its answer strictly: a 2xx
// body into want (unknown or missing-type fields fail), an error body into
// handlers.APIError. It returns the status.
func (p *testPortal) strictAPI(method, path, token, body string, want any) int {
	p.t.Helper()
	code, b := p.apiBytes(method, path, token, body)
	if code == http.StatusNoContent {
		if len(b) != 0 {
			p.t.Errorf("%s %s: 204 with a body: %s", method, path, b)
		}
		return code
	}
	into := want
	var apiErr handlers.APIError
	if code >= 400 {
		into = &apiErr
	}
	if err := strictDecode(b, into); err != nil {
		p.t.Errorf("%s %s (%d): %v\n%s", method, path, code, err, b)
	}
	if code >= 400 && (apiErr.Error.Code == "" || apiErr.Error.Message == "") {
		p.t.Errorf("%s %s (%d): error without code or message: %s", method, path, code, b)
	}
	return code
}

// strictDecode decodes exactly one JSON value into v, refusing fields v
// does not have.
func strictDecode(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("the body does not decode strictly into %T: %w", v, err)
	}
	if dec.More() {
		return errors.New("more than one JSON value")
	}
	return nil
}

// Every answer of a driven API session — a user's and an admin's, errors
// included — decodes strictly into the response types of
// handlers/api_types.go, so those types are the whole of the JSON contract
// (SPEC §8's fixed names and the fields added beside them).
func TestAPIResponsesDecodeIntoTheirTypes(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	user := tokenFor(t, p, "alice", "user")
	admin := tokenFor(t, p, "root", "admin")
	alice, _ := p.srv.Store.UserByUsername(ctx, "alice")
	wb := &models.Workbench{Name: "w1", OwnerID: alice.ID, ImageID: 1, FlavorID: 1}
	if err := p.srv.Store.CreateWorkbench(ctx, wb, models.GPUNeed{}, nil); err != nil {
		t.Fatal(err)
	}
	status := func(want, got int, what string) {
		t.Helper()
		if got != want {
			t.Errorf("%s: status %d, want %d", what, got, want)
		}
	}

	// A user's session.
	status(401, p.strictAPI("GET", "/api/v1/me", "", "", nil), "me without a token")
	var me handlers.APIMe
	status(200, p.strictAPI("GET", "/api/v1/me", user, "", &me), "me")
	if me.Username != "alice" {
		t.Errorf("me: %+v", me)
	}
	var gpus handlers.APIGPUList
	status(200, p.strictAPI("GET", "/api/v1/gpus", user, "", &gpus), "gpus")
	if len(gpus.Items) != 8 || gpus.Items[0].UUID == "" || !gpus.Simulated {
		t.Errorf("gpus: %+v", gpus)
	}
	var imgs handlers.APIList[handlers.APIImage]
	status(200, p.strictAPI("GET", "/api/v1/images", user, "", &imgs), "images")
	var fls handlers.APIList[handlers.APIFlavor]
	status(200, p.strictAPI("GET", "/api/v1/flavors", user, "", &fls), "flavors")
	if len(imgs.Items) == 0 || len(fls.Items) == 0 || fls.Items[0].MemoryGiB == "" {
		t.Errorf("catalog: %d images, %d flavors %+v", len(imgs.Items), len(fls.Items), fls.Items)
	}
	var wbs handlers.APIPage[handlers.APIWorkbench]
	status(200, p.strictAPI("GET", "/api/v1/workbenches", user, "", &wbs), "workbenches")
	if len(wbs.Items) != 1 || wbs.Items[0].ID != wb.ID || wbs.Items[0].GPUs == nil {
		t.Errorf("workbenches: %+v", wbs)
	}
	var one handlers.APIWorkbench
	status(200, p.strictAPI("GET", "/api/v1/workbenches/"+wb.ID, user, "", &one), "workbench")
	status(404, p.strictAPI("GET", "/api/v1/workbenches/nope", user, "", nil), "missing workbench")
	status(400, p.strictAPI("POST", "/api/v1/workbenches", user, `{"name":"x","image":"no such image","flavor":"none"}`, nil), "bad launch")
	status(400, p.strictAPI("POST", "/api/v1/workbenches", user, `{"name":`, nil), "broken JSON")
	var usage handlers.APIUsage
	status(200, p.strictAPI("GET", "/api/v1/usage?group_by=gpu_model", user, "", &usage), "usage")
	status(400, p.strictAPI("GET", "/api/v1/usage?group_by=colour", user, "", nil), "bad grouping")
	var toks handlers.APIList[handlers.APIToken]
	status(200, p.strictAPI("GET", "/api/v1/tokens", user, "", &toks), "tokens")
	var made handlers.APITokenCreated
	status(201, p.strictAPI("POST", "/api/v1/tokens", user, `{"name":"ci","expires_days":7}`, &made), "token create")
	if made.Token == "" || made.Item.Name != "ci" {
		t.Errorf("token create: %+v", made)
	}
	var keys handlers.APIList[handlers.APISSHKey]
	status(200, p.strictAPI("GET", "/api/v1/ssh-keys", user, "", &keys), "ssh keys")
	status(400, p.strictAPI("POST", "/api/v1/ssh-keys", user, `{"name":"k","public_key":"not a key"}`, nil), "bad ssh key")
	status(403, p.strictAPI("GET", "/api/v1/admin/prices", user, "", nil), "prices as a user")
	var watch handlers.APIItem[handlers.APIGPUWatch]
	status(201, p.strictAPI("POST", "/api/v1/gpu-watches", user, `{"gpu_model":"NVIDIA H100 80GB HBM3"}`, &watch), "gpu watch")
	var watches handlers.APIList[handlers.APIGPUWatch]
	status(200, p.strictAPI("GET", "/api/v1/gpu-watches", user, "", &watches), "gpu watches")
	var notes handlers.APIPage[handlers.APINotification]
	status(200, p.strictAPI("GET", "/api/v1/notifications", user, "", &notes), "notifications")

	// An admin's session.
	var img handlers.APIImage
	status(201, p.strictAPI("POST", "/api/v1/images", admin, `{"name":"lab2","image":"quay.io/jupyter/base-notebook:latest","start_command":"start-notebook.py --ServerApp.base_url={base_url} --IdentityProvider.token={token} --port={port}","run_as_user":"1000","home_path":"/home/jovyan"}`, &img), "image create")
	var fl handlers.APIFlavor
	status(201, p.strictAPI("POST", "/api/v1/flavors", admin, `{"name":"half","gpu_model":"NVIDIA H100 80GB HBM3","gpu_count":1,"cpu_cores":2,"memory_gib":0.5,"shm_mib":256}`, &fl), "flavor create")
	if fl.MemoryMiB != 512 || fl.MemoryGiB != "0.5" || fl.ShmMiB != 256 {
		t.Errorf("flavor create: %+v", fl)
	}
	status(400, p.strictAPI("POST", "/api/v1/flavors", admin, `{"name":"","gpu_count":-1}`, nil), "bad flavor")
	var q handlers.APIQuotaSubject
	status(200, p.strictAPI("GET", "/api/v1/admin/quotas/default", admin, "", &q), "default quota")
	status(200, p.strictAPI("PUT", "/api/v1/admin/quotas/users/alice", admin, `{"max_gpus":2,"max_gpus_per_model":{},"budget_per_month_micros":5000000}`, &q), "user quota put")
	status(200, p.strictAPI("GET", "/api/v1/admin/quotas/users/alice", admin, "", &q), "user quota")
	if q.Quota.MaxGPUs == nil || *q.Quota.MaxGPUs != 2 || q.Effective == nil || q.Overridden == nil {
		t.Errorf("user quota: %+v", q)
	}
	status(404, p.strictAPI("GET", "/api/v1/admin/quotas/users/nobody", admin, "", nil), "quota of nobody")
	var prices handlers.APIPrices
	status(200, p.strictAPI("GET", "/api/v1/admin/prices", admin, "", &prices), "prices")
	var added handlers.APIPricesAdded
	status(200, p.strictAPI("PUT", "/api/v1/admin/prices", admin, `{"rates":[{"resource":"cpu","rate_micros":1000}]}`, &added), "prices put")
	if len(prices.Current) == 0 || len(added.Added) != 1 {
		t.Errorf("prices: %d current, %d added", len(prices.Current), len(added.Added))
	}
	var users handlers.APIPage[handlers.APIUser]
	status(200, p.strictAPI("GET", "/api/v1/admin/users", admin, "", &users), "users")
	var nu handlers.APIUser
	status(201, p.strictAPI("POST", "/api/v1/admin/users", admin, `{"username":"bob","password":"bob-password-1","role":"user"}`, &nu), "user create")
	status(409, p.strictAPI("POST", "/api/v1/admin/users", admin, `{"username":"bob","password":"bob-password-1","role":"user"}`, nil), "user twice")
	var credit handlers.APILedgerLine
	status(201, p.strictAPI("POST", "/api/v1/admin/ledger/credits", admin, `{"user":"alice","amount_micros":1000000,"reason":"welcome"}`, &credit), "credit")
	var reversed handlers.APIList[handlers.APILedgerLine]
	status(201, p.strictAPI("POST", "/api/v1/admin/ledger/reversals", admin, `{"ids":[`+strconv.FormatInt(credit.ID, 10)+`],"reason":"oops"}`, &reversed), "reversal")
	if credit.AmountMicros != -1000000 || len(reversed.Items) != 1 || reversed.Items[0].Reverses == nil {
		t.Errorf("credit %+v, reversal %+v", credit, reversed)
	}
	var egress handlers.APIEgress
	status(200, p.strictAPI("GET", "/api/v1/admin/egress", admin, "", &egress), "egress")
	if egress.Allow == nil {
		t.Errorf("egress: %+v", egress)
	}
	status(400, p.strictAPI("PUT", "/api/v1/admin/egress", admin, `{"mode":"sideways"}`, nil), "bad egress")
	var est handlers.APICalcEstimate
	status(200, p.strictAPI("POST", "/api/v1/calculator/estimate", user, `{"gpu_model":"NVIDIA H100 80GB HBM3","gpu_count":1,"cpu_cores":4,"memory_gib":16,"total_hours":10}`, &est), "estimate")
	if est.TotalMicros <= 0 || len(est.Lines) == 0 {
		t.Errorf("estimate: %+v", est)
	}
	var tco handlers.APICalcTCO
	status(200, p.strictAPI("POST", "/api/v1/calculator/tco", user, `{}`, &tco), "tco")
	if tco.OwnedPerGPUHourMicros <= 0 || len(tco.ByUtilization) == 0 {
		t.Errorf("tco: %+v", tco)
	}
	var cloud handlers.APICloudPrices
	status(200, p.strictAPI("GET", "/api/v1/cloud-prices", user, "", &cloud), "cloud prices")
	if len(cloud.Items) == 0 || len(cloud.Settings.Discounts) == 0 {
		t.Errorf("cloud prices: %d rows, settings %+v", len(cloud.Items), cloud.Settings)
	}
	var settings handlers.APICalcSettings
	status(200, p.strictAPI("GET", "/api/v1/admin/calculator/settings", admin, "", &settings), "calculator settings")
	var applied handlers.APIRateApplied
	status(200, p.strictAPI("POST", "/api/v1/admin/calculator/apply-rate", admin, `{"gpu_model":"NVIDIA H100 80GB HBM3"}`, &applied), "apply rate")
	status(400, p.strictAPI("POST", "/api/v1/calculator/estimate", user, `{"flavor":"","gpu_count":-3}`, nil), "bad estimate")
	status(404, p.strictAPI("GET", "/api/v1/no-such-thing", user, "", nil), "unknown route")
	var health handlers.APIHealth
	status(200, p.strictAPI("GET", "/healthz", "", "", &health), "healthz")
	if health.Status != "ok" {
		t.Errorf("healthz: %+v", health)
	}

	// The live updates: every message of the event stream decodes strictly
	// into APIStateEvent — the stored state first, then a change (a failed
	// stop, which is the one that carries error).
	events := p.stateEvents(wb.ID, user)
	first := <-events
	if first.ID != wb.ID || first.State == "" || first.At.IsZero() {
		t.Errorf("first state event: %+v", first)
	}
	p.srv.Manager.Events().Publish(orchestrator.Update{ID: wb.ID, State: models.StateStopping, Progress: 40,
		Reason: "stop requested", Error: "engine unreachable", At: time.Now()})
	if next := <-events; next.State != models.StateStopping || next.Error != "engine unreachable" || next.Progress != 40 {
		t.Errorf("published state event: %+v", next)
	}
	// A deletion is the last event: the stream ends after it (it went on
	// with keepalives until the client gave up).
	p.srv.Manager.Events().Publish(orchestrator.Update{ID: wb.ID, State: orchestrator.StateDeleted, At: time.Now()})
	if last := <-events; last.State != "deleted" {
		t.Errorf("deletion event: %+v", last)
	}
	select {
	case ev, open := <-events:
		if open {
			t.Errorf("an event after the deletion: %+v", ev)
		}
	case <-time.After(time.Minute): // generous: the end follows at once
		t.Error("the event stream did not end after the deletion")
	}
}

// stateEvents follows GET /workbenches/{id}/events and delivers each
// `event: state` message, decoded strictly into handlers.APIStateEvent, on
// the channel (closed when the stream ends). The stream ends with the test.
func (p *testPortal) stateEvents(id, token string) <-chan handlers.APIStateEvent {
	p.t.Helper()
	t := p.t
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.ts.URL+"/api/v1/workbenches/"+id+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatalf("events: %v", err)
	}
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/event-stream" {
		res.Body.Close()
		cancel()
		t.Fatalf("events: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	out := make(chan handlers.APIStateEvent, 16)
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); res.Body.Close(); <-done })
	go func() {
		defer close(done)
		defer close(out)
		sc := bufio.NewScanner(res.Body)
		event := ""
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				var ev handlers.APIStateEvent
				if event != "state" {
					t.Errorf("events: data for event %q: %s", event, line)
				} else if err := strictDecode([]byte(strings.TrimPrefix(line, "data: ")), &ev); err != nil {
					t.Errorf("events: %v\n%s", err, line)
				}
				out <- ev
			}
		}
	}()
	return out
}
