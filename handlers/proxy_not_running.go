package handlers

import (
	"net/http"
	"strings"

	"workbench/models"
	"workbench/templates"
	"workbench/templates/i18n"
)

// ProxyNotRunning is the page a person sees in the notebook tab
// (/wb/{id}/…) when the workbench is not running: why it stopped (idle,
// budget, an administrator, the container exited with code N, a failure),
// a Start button (a plain same-origin form, like every portal form) and a
// link back to the workbench page. While the workbench is on its way (or
// stopping) the page says so and reloads itself. The proxy calls it only
// after Resolve found the caller owns the workbench.
func (h *Handler) ProxyNotRunning(w http.ResponseWriter, r *http.Request, id string) {
	ctx := r.Context()
	e, err := h.proxyUser(r)
	userID := e.userID
	var wb *models.Workbench
	var u *models.User
	if err == nil {
		wb, err = h.store.WorkbenchByID(ctx, id)
	}
	if err == nil && wb.OwnerID != userID {
		err = errNotFound
	}
	if err == nil {
		u, err = h.store.UserByID(ctx, userID)
	}
	if err != nil {
		h.log.Warn("not-running page", "workbench", id, "err", err)
		http.Error(w, "Workbench not running: start it from the portal, then reload this page.", http.StatusServiceUnavailable)
		return
	}
	v := templates.NotRunningView{ID: wb.ID, Name: wb.Name, State: wb.State, Why: whyNotRunning(wb), StopError: wb.StopError,
		CanStart: wb.State == models.StateStopped || wb.State == models.StateFailed,
		OnItsWay: wb.Active()}
	ctx = i18n.WithLocale(ctx, requestLocale(r, u))
	w.Header().Set("Content-Language", i18n.FromContext(ctx).Lang())
	p := templates.Page{Title: i18n.T(ctx, "%s is not running", wb.Name), Path: r.URL.Path, Here: r.URL.RequestURI(), Version: h.cfg.Version,
		User: &templates.NavUser{Username: u.Username, Name: u.Name(), IsAdmin: u.IsAdmin()}}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	// This page is the portal's own, though served under /wb/: its Start
	// form must not be taken for a notebook's request (refuseFromNotebook
	// goes by the Referer), so it sends none.
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(http.StatusServiceUnavailable)
	if err := templates.NotRunningPage(p, v).Render(ctx, w); err != nil {
		h.log.Error("render not-running page", "workbench", id, "err", err)
	}
}

// whyNotRunning says in one sentence why the workbench is not running. The
// recorded reasons are already written for people ("stopped after 1h0m0s
// without activity (idle timeout)", "stopped by an administrator (root)",
// "the container exited (code 1)", "stopped: monthly budget reached …").
func whyNotRunning(wb *models.Workbench) string {
	switch {
	case wb.State == models.StateFailed && wb.Reason != "":
		return "It failed: " + wb.Reason
	case wb.State == models.StateFailed:
		return "It failed."
	case wb.State == models.StateStopping:
		return "It is stopping."
	case wb.Launching():
		return "It is starting (" + wb.State + "). This page reloads by itself until JupyterLab answers."
	case wb.Reason != "":
		return "It was " + trimStopped(wb.Reason) + "."
	default:
		return "It was stopped by you (from the portal or the API)."
	}
}

// trimStopped makes a recorded reason read after "It was ": "stopped …"
// reasons as they are, others ("the container exited (code 1)") as
// "stopped because …".
func trimStopped(reason string) string {
	if strings.HasPrefix(reason, "stopped") {
		return reason
	}
	return "stopped because " + reason
}
