package handlers

import (
	"errors"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"workbench/handlers/proxy"
	"workbench/models"
	"workbench/orchestrator"
	"workbench/templates"
)

// extraPortPath recognises /wb/{id}/port/{n}/… (an image's extra HTTP
// port) and returns n and the prefix to strip. Both the decoded and the
// escaped path must carry the prefix, and dot segments must not climb out
// of it, so the port checked here is the port the request reaches.
func extraPortPath(r *http.Request, id string) (int, string, bool) {
	base := "/wb/" + id + "/port/"
	p := r.URL.Path
	if !strings.HasPrefix(p, base) {
		return 0, "", false
	}
	digits, _, _ := strings.Cut(p[len(base):], "/")
	port, err := strconv.Atoi(digits)
	if err != nil || port <= 0 || port > 65535 || strconv.Itoa(port) != digits {
		return 0, "", false
	}
	prefix := base + digits
	if !strings.HasPrefix(r.URL.EscapedPath(), prefix) {
		return 0, "", false
	}
	if c := path.Clean(p); c != prefix && !strings.HasPrefix(c, prefix+"/") {
		return 0, "", false
	}
	return port, prefix, true
}

// portTarget is the extra port of the caller's own running workbench; the
// Jupyter token is not sent there (the app is not Jupyter).
func (h *Handler) portTarget(r *http.Request, id string, e proxyAuthEntry, port int, prefix string) (proxy.Target, error) {
	t, err := h.wbs.PortTarget(r.Context(), id, e.userID, port)
	switch {
	case errors.Is(err, orchestrator.ErrNoWorkbench):
		return proxy.Target{}, e.noWorkbench()
	case errors.Is(err, orchestrator.ErrNoPort):
		return proxy.Target{}, proxy.ErrNoPort
	case errors.Is(err, orchestrator.ErrPaused):
		return proxy.Target{}, proxy.ErrPaused
	case errors.Is(err, orchestrator.ErrNotRunning):
		return proxy.Target{}, proxy.ErrNotReady
	case err != nil:
		return proxy.Target{}, err
	}
	return proxy.Target{BaseURL: &url.URL{Scheme: "http", Host: t.Endpoint}, UserID: e.userID, Grant: e.grant, StripPrefix: prefix}, nil
}

// workbenchAccess fills the workbench page's other ways in: buttons to the
// image's extra ports and the ssh command line.
func (h *Handler) workbenchAccess(c *gin.Context, wb *models.Workbench, v *templates.WorkbenchView) {
	if img, err := h.store.ImageByID(c.Request.Context(), wb.ImageID); err == nil {
		v.ExtraPorts = slices.Clone(img.ExtraPorts)
	}
	// The owner's own ports (workbench_ports.go) after the image's.
	v.UserPorts = wb.ExtraPorts
	for _, p := range wb.ExtraPorts {
		if !slices.Contains(v.ExtraPorts, p) {
			v.ExtraPorts = append(v.ExtraPorts, p)
		}
	}
	if host, port := h.sshEndpoint(c); port != "" {
		v.SSH = "ssh -p " + port + " " + wb.Name + "@" + host
	}
}
