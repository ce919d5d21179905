package handlers

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"workbench/models"
	"workbench/orchestrator"
	"workbench/templates"
	"workbench/templates/i18n"
)

// ProxyNotRunning is the page a person sees in the notebook tab
// (/wb/{id}/…) when the workbench is not running: why it stopped (idle,
// budget, an administrator, the container exited with code N, a failure,
// preempted, waiting in the queue), a Start button (stopped, failed or
// preempted) (a plain same-origin form, like every portal form) and a
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
		lc := i18n.WithLocale(ctx, requestLocale(r, nil))
		http.Error(w, i18n.T(lc, "Workbench not running: start it from the portal, then reload this page."), http.StatusServiceUnavailable)
		return
	}
	ctx = i18n.WithLocale(ctx, requestLocale(r, u))
	v := notRunningView(ctx, wb)
	if strings.HasPrefix(r.URL.Path, orchestrator.BaseURL(wb.ID)) && r.Method == http.MethodGet {
		v.Back = r.URL.RequestURI()
	}
	// The top bar (the unread count too) and banner of every portal page.
	p := h.pageFor(ctx, r, u, i18n.T(ctx, "%s is not running", wb.Name))
	if v.CanStart {
		// Start would be refused past a monthly limit: the banner of the
		// workbench page says so before the click does.
		p.Budget = h.budgetWarningFor(r.WithContext(ctx), u)
	}
	// The portal's own page, though served under /wb/: its Start form
	// sends only its origin, and it is framed by no one.
	portalPageHeaders(w, i18n.FromContext(ctx).Lang())
	w.WriteHeader(http.StatusServiceUnavailable)
	if err := templates.NotRunningPage(p, v).Render(ctx, w); err != nil {
		h.log.Error("render not-running page", "workbench", id, "err", err)
	}
}

// notRunningView is what the not-running page shows of wb: why, Start
// for every state a workbench can be started from (stopped, failed,
// preempted), and a reload while it is on its way or queued.
func notRunningView(lc context.Context, wb *models.Workbench) templates.NotRunningView {
	v := templates.NotRunningView{ID: wb.ID, Name: wb.Name, State: wb.State, Why: whyNotRunning(lc, wb), StopError: wb.StopError,
		CanStart: slices.Contains(models.RestartableStates, wb.State),
		// A stop for a limit says so itself ("… (your files are kept)").
		FilesKeptSaid: strings.Contains(wb.Reason, "(your files are kept)")}
	switch {
	case wb.Active():
		v.ReloadSeconds = 3
	case wb.State == models.StateQueued:
		v.ReloadSeconds = 15 // a queue moves slowly; the page follows it
	}
	return v
}

// whyNotRunning says in the reader's language why the workbench is not
// running. The recorded reasons are written in English for people
// ("stopped after 1h0m0s without activity (idle timeout)", "stopped by an
// administrator (root)", "the container exited (code 1)", "stopped:
// monthly budget reached …"); the common ones are translated (stopReasonT),
// others are shown as recorded inside a translated sentence.
func whyNotRunning(lc context.Context, wb *models.Workbench) string {
	switch {
	case wb.State == models.StateFailed && wb.Reason != "":
		return i18n.T(lc, "It failed: %s.", i18n.ReasonClause(lc, wb.Reason)) // after a colon: a clause (refusalClause)
	case wb.State == models.StateFailed:
		return i18n.T(lc, "It failed.")
	case wb.State == models.StateStopping:
		return i18n.T(lc, "It is stopping.")
	case wb.State == models.StateQueued:
		return queuedWhy(lc, wb)
	case wb.Launching():
		return i18n.T(lc, "It is starting (%s). This page reloads by itself until JupyterLab answers.", templates.StateLabel(lc, wb.State))
	case wb.State == models.StatePreempted && wb.AutoResume && wb.PreemptedFor != "":
		// What the launch it yielded to asked for: a 4-GPU run taken for a
		// launch one GPU short read only "a higher-priority launch". From
		// the column the stop kept, not read back out of the reason.
		return i18n.T(lc, "It was preempted: a higher-priority launch needed its GPUs (%s). It goes back in the queue by itself and resumes when GPUs free up; you can also start it now.",
			i18n.Reason(lc, wb.PreemptedFor))
	case wb.State == models.StatePreempted && wb.PreemptedFor != "":
		return i18n.T(lc, "It was preempted: a higher-priority launch needed its GPUs (%s). Start it again when you like.", i18n.Reason(lc, wb.PreemptedFor))
	case wb.State == models.StatePreempted && wb.AutoResume:
		return i18n.T(lc, "It was preempted: a higher-priority launch needed its GPUs. It goes back in the queue by itself and resumes when GPUs free up; you can also start it now.")
	case wb.State == models.StatePreempted:
		return i18n.T(lc, "It was preempted: a higher-priority launch needed its GPUs. Start it again when you like.")
	case strings.HasPrefix(wb.Reason, "stopped"):
		return i18n.T(lc, "It was %s.", stopReasonT(lc, wb.Reason))
	case wb.Reason != "":
		// After a colon, as a clause (refusalClause): "It was stopped
		// because copied with the data of another install …" read badly.
		return i18n.T(lc, "It was stopped: %s.", i18n.ReasonClause(lc, wb.Reason))
	default:
		return i18n.T(lc, "It was stopped by you (from the portal or the API).")
	}
}

// queuedWhy words a queued workbench: waiting for free GPUs (after a
// preemption: waiting to resume, with what the launch it yielded to asked
// for when the stop kept it), with its place in the queue when known.
func queuedWhy(lc context.Context, wb *models.Workbench) string {
	resume := strings.HasPrefix(wb.Reason, "preempted")
	// Kept only by auto-resume's own requeue (models.Requeue.Resume), so
	// a queued workbench with it is always one waiting to resume.
	yieldedTo := wb.PreemptedFor
	switch {
	case yieldedTo != "" && wb.QueuePosition > 0:
		return i18n.T(lc, "It was preempted: a higher-priority launch needed its GPUs (%s). It waits in the queue to resume (position %d) and starts by itself when GPUs free up; the workbench page shows the queue. This page reloads by itself.",
			i18n.Reason(lc, yieldedTo), wb.QueuePosition)
	case yieldedTo != "":
		return i18n.T(lc, "It was preempted: a higher-priority launch needed its GPUs (%s). It waits in the queue to resume and starts by itself when GPUs free up; the workbench page shows the queue. This page reloads by itself.",
			i18n.Reason(lc, yieldedTo))
	case resume && wb.QueuePosition > 0:
		return i18n.T(lc, "It was preempted by a higher-priority launch and waits in the queue to resume (position %d). It starts by itself when GPUs free up; the workbench page shows the queue. This page reloads by itself.", wb.QueuePosition)
	case resume:
		return i18n.T(lc, "It was preempted by a higher-priority launch and waits in the queue to resume. It starts by itself when GPUs free up; the workbench page shows the queue. This page reloads by itself.")
	case wb.QueuePosition > 0:
		return i18n.T(lc, "It is waiting in the queue for free GPUs (position %d). It starts by itself when its turn comes; the workbench page shows the queue. This page reloads by itself.", wb.QueuePosition)
	default:
		return i18n.T(lc, "It is waiting in the queue for free GPUs. It starts by itself when its turn comes; the workbench page shows the queue. This page reloads by itself.")
	}
}

// stopReasonT is a recorded reason in lc's language, as the workbench page
// words it (i18n.Reason): the figures inside it too ("在 1 分钟 无活动后被
// 停止"), where a pattern of its own left "1 min" in English.
func stopReasonT(lc context.Context, reason string) string {
	return i18n.Reason(lc, reason)
}

// PortalContentSecurityPolicy allows only the portal's own scripts, styles
// and images; no inline script, and no framing of the portal. Set on every
// portal page (web's securityHeaders) and on the portal's own pages under
// /wb/ (ProxyNotRunning, ProxyNotFound), where proxied Jupyter keeps its
// own policy.
const PortalContentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'"
