package web_test

import (
	"net/http"
	"testing"
)

// TestAPIRefusesEmptyQueryValues: in the API a parameter given empty is
// refused as a bad value is (400 invalid_<name>), on every endpoint and
// for every parameter it reads. ?month= answered this month's lines and
// ?user= everyone's usage, while ?limit= on the same lists was 400: a
// script whose variable was unset got another month's, or the whole
// lab's, figures as the ones it asked for. Nothing is done: the refusal
// comes before the handler (the ids below need not exist).
func TestAPIRefusesEmptyQueryValues(t *testing.T) {
	p := newPortal(t)
	ada := tokenFor(t, p, "ada", "user")
	admin := tokenFor(t, p, "root", "admin")
	cases := []struct{ method, path, token, param string }{
		// The lists and the usage summary.
		{"GET", "/api/v1/usage/lines?month=", ada, "month"},
		{"GET", "/api/v1/usage/lines?month=2026-10&limit=", ada, "limit"},
		{"GET", "/api/v1/usage/lines?cursor=", ada, "cursor"},
		{"GET", "/api/v1/usage/lines?user=", ada, "user"},
		{"GET", "/api/v1/usage/lines?user=", admin, "user"},
		{"GET", "/api/v1/usage?from=", ada, "from"},
		{"GET", "/api/v1/usage?to=", ada, "to"},
		{"GET", "/api/v1/usage?group_by=", ada, "group_by"},
		{"GET", "/api/v1/usage?user=", admin, "user"},
		{"GET", "/api/v1/workbenches?all=", admin, "all"},
		{"GET", "/api/v1/workbenches?all", admin, "all"}, // a bare flag is an empty value, not true
		{"GET", "/api/v1/workbenches?limit=", ada, "limit"},
		{"GET", "/api/v1/workbenches?cursor=", ada, "cursor"},
		{"GET", "/api/v1/admin/users?limit=", admin, "limit"},
		{"GET", "/api/v1/admin/users?cursor=", admin, "cursor"},
		{"GET", "/api/v1/notifications?limit=", ada, "limit"},
		{"GET", "/api/v1/notifications?cursor=", ada, "cursor"},
		// The other endpoints that read parameters: the same rule.
		{"GET", "/api/v1/workbenches/wb-x/logs?tail=", ada, "tail"},
		{"GET", "/api/v1/workbenches/wb-x/logs?follow=", ada, "follow"},
		{"POST", "/api/v1/workbenches/wb-x/start?mode=", ada, "mode"},
		{"POST", "/api/v1/workbenches/wb-x/start?queue=", ada, "queue"},
		{"POST", "/api/v1/workbenches/wb-x/stop?force=", ada, "force"},
		{"DELETE", "/api/v1/workbenches/wb-x?delete_data=", ada, "delete_data"},
		{"DELETE", "/api/v1/admin/users/999?confirm=", admin, "confirm"},
		{"GET", "/api/v1/admin/utilisation?bucket=", admin, "bucket"},
		{"GET", "/api/v1/admin/utilisation?from=", admin, "from"},
		{"GET", "/api/v1/admin/utilisation?to=", admin, "to"},
		{"GET", "/api/v1/admin/reservations/unused?from=", admin, "from"},
		{"GET", "/api/v1/admin/reservations/unused?to=", admin, "to"},
		{"GET", "/api/v1/admin/reservations/unused?format=", admin, "format"},
		{"GET", "/api/v1/admin/simulate?days=", admin, "days"},
		{"GET", "/api/v1/admin/simulate?engine=", admin, "engine"},
		{"GET", "/api/v1/admin/simulate?policy=queue-fair&policy=", admin, "policy"},
		{"GET", "/api/v1/admin/simulate?mig=", admin, "mig"},
		{"GET", "/api/v1/admin/simulate?model=", admin, "model"},
		{"GET", "/api/v1/admin/simulate?gpus=", admin, "gpus"},
		{"GET", "/api/v1/admin/simulate?shared_gpus=", admin, "shared_gpus"},
		{"GET", "/api/v1/admin/simulate?slices=", admin, "slices"},
	}
	for _, tc := range cases {
		code, body := p.api(tc.method, tc.path, tc.token, "")
		if want := tc.param + ": is given empty; give a value, or leave the parameter out for its default"; code != http.StatusBadRequest ||
			errCode(body) != "invalid_"+tc.param || errMessage(body) != want {
			t.Errorf("%s %s: %d %v, want 400 invalid_%s %q", tc.method, tc.path, code, body, tc.param, want)
		}
	}
	// An unknown parameter is still named first, whatever its value.
	if code, body := p.api("GET", "/api/v1/usage/lines?months=", ada, ""); code != http.StatusBadRequest || errCode(body) != "unknown_parameter" {
		t.Errorf("?months=: %d %v, want 400 unknown_parameter", code, body)
	}
	// Left out, each takes its default as before.
	for _, tc := range []struct{ path, token string }{
		{"/api/v1/usage/lines", ada}, {"/api/v1/usage", admin}, {"/api/v1/workbenches?limit=5", ada},
		{"/api/v1/notifications", ada}, {"/api/v1/admin/users", admin},
	} {
		if code, body := p.api("GET", tc.path, tc.token, ""); code != http.StatusOK {
			t.Errorf("GET %s: %d %v", tc.path, code, body)
		}
	}
}
