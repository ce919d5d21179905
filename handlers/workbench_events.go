package handlers

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"workbench/orchestrator"
)

// workbenchEvents streams a workbench's state changes as server-sent events:
// first the current state, then every change, with a comment line every
// 15 s so proxies keep the connection open.
func (h *Handler) workbenchEvents(c *gin.Context) {
	wb, ok := h.ownedWorkbench(c)
	if !ok {
		return
	}
	defer h.trackStream(c)()
	updates, cancel := h.wbs.Events().Subscribe(wb.ID)
	defer cancel()
	w := c.Writer
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	sendEvent := func(e APIStateEvent) bool {
		b, _ := json.Marshal(e)
		if _, err := fmt.Fprintf(w, "event: state\ndata: %s\n\n", b); err != nil {
			return false
		}
		w.Flush()
		return true
	}
	send := func(u orchestrator.Update) bool { return sendEvent(apiStateEvent(u)) }
	// The state as its page shows it: stopped, for a stop not recorded yet.
	wb, unrecorded := h.shownWorkbench(wb)
	first := apiStateEvent(orchestrator.Update{ID: wb.ID, State: wb.State, Progress: wb.Progress, Reason: wb.Reason, Error: wb.StopError, At: wb.UpdatedAt})
	first.StopNotRecorded = unrecorded
	if !sendEvent(first) {
		return
	}
	keepalive := time.NewTicker(15 * time.Second)
	defer keepalive.Stop()
	for {
		select {
		case <-c.Request.Context().Done():
			return
		case u, ok := <-updates:
			if !ok || !send(u) {
				return
			}
			if u.State == orchestrator.StateDeleted {
				return // nothing follows a deletion: the stream ends
			}
		case <-keepalive.C:
			if _, err := fmt.Fprint(w, ": keepalive\n\n"); err != nil {
				return
			}
			w.Flush()
		}
	}
}
