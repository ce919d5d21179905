package handlers

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/templates"
	"workbench/templates/i18n"
)

// "Notify me when a GPU frees": users watch a GPU model; the portal's
// GPUWatcher (orchestrator/gpu_watch.go) writes one in-app notification
// per watch when a GPU of that model is free. Email and webhooks are not
// sent (the portal has no SMTP or webhook settings yet).

func (h *Handler) notificationsPage(c *gin.Context) {
	h.renderNotifications(c, http.StatusOK, templates.NotificationsView{})
}

func (h *Handler) renderNotifications(c *gin.Context, status int, v templates.NotificationsView) {
	ctx := c.Request.Context()
	u := currentUser(c)
	notes, err := h.store.ListNotifications(ctx, u.ID, 50)
	if err != nil {
		h.fail(c, err)
		return
	}
	watches, err := h.store.ListGPUWatches(ctx, u.ID)
	if err != nil {
		h.fail(c, err)
		return
	}
	if v.Models, err = h.pool.Models(ctx); err != nil {
		h.fail(c, err)
		return
	}
	for _, n := range notes {
		v.Notifications = append(v.Notifications, templates.NotificationRow{Message: n.Message, Link: n.Link, At: templates.When(&n.CreatedAt), Unread: n.ReadAt == nil})
	}
	for _, w := range watches {
		row := templates.GPUWatchRow{ID: w.ID, Model: w.GPUModel, Since: templates.When(&w.CreatedAt)}
		if w.NotifiedAt != nil {
			row.Notified = templates.When(w.NotifiedAt)
		}
		v.Watches = append(v.Watches, row)
	}
	if status == http.StatusOK {
		// Seen once shown; a failed write only leaves them marked unread.
		if err := h.store.MarkNotificationsRead(ctx, u.ID); err != nil {
			h.log.Warn("mark notifications read", "err", err)
		}
	}
	h.render(c, status, templates.NotificationsPage(h.page(c, i18n.T(c.Request.Context(), "Notifications")), v))
}

func (h *Handler) gpuWatchCreate(c *gin.Context) {
	model := c.PostForm("gpu_model")
	if _, err := h.createGPUWatch(c, model); err != nil {
		var ve *models.ValidationError
		if errors.As(err, &ve) {
			h.renderNotifications(c, http.StatusBadRequest, templates.NotificationsView{Model: model, Errors: templates.FormErrors{ve.Field: fieldMessage(c.Request.Context(), ve.Message)}})
			return
		}
		h.fail(c, err)
		return
	}
	h.flash(c, i18n.T(c.Request.Context(), "You will be notified here when a %s GPU is free.", model))
	seeOther(c, "/notifications")
}

func (h *Handler) createGPUWatch(c *gin.Context, model string) (*models.GPUWatch, error) {
	known, err := h.pool.Models(c.Request.Context())
	if err != nil {
		return nil, err
	}
	var w *models.GPUWatch
	err = h.audited(c, func(tx *models.Store) (models.AuditRecord, error) {
		var err error
		w, err = tx.CreateGPUWatch(c.Request.Context(), currentUser(c).ID, model, known)
		return auditRec("gpu_watch.create", currentUser(c).Username, nil, w), err
	})
	return w, err
}

func (h *Handler) gpuWatchDelete(c *gin.Context) {
	if h.deleteGPUWatch(c) {
		h.flash(c, i18n.T(c.Request.Context(), "Watch deleted."))
		seeOther(c, "/notifications")
	}
}

func (h *Handler) deleteGPUWatch(c *gin.Context) bool {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err == nil {
		err = h.store.DeleteGPUWatch(c.Request.Context(), currentUser(c).ID, id)
	} else {
		err = errNotFound
	}
	if err != nil {
		h.fail(c, err)
		return false
	}
	return true
}

func (h *Handler) apiNotifications(c *gin.Context) {
	notes, err := h.store.ListNotifications(c.Request.Context(), currentUser(c).ID, 100)
	if err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, mapList(notes, apiNotification))
}

func (h *Handler) apiGPUWatches(c *gin.Context) {
	ws, err := h.store.ListGPUWatches(c.Request.Context(), currentUser(c).ID)
	if err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, mapList(ws, apiGPUWatch))
}

// apiGPUWatchCreate: POST /api/v1/gpu-watches {"gpu_model": "NVIDIA H100 80GB HBM3"}.
func (h *Handler) apiGPUWatchCreate(c *gin.Context) {
	var body struct {
		GPUModel string `json:"gpu_model"`
	}
	if !h.bindJSON(c, &body) {
		return
	}
	w, err := h.createGPUWatch(c, body.GPUModel)
	if err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, APIItem[APIGPUWatch]{Item: apiGPUWatch(w)})
}

func (h *Handler) apiGPUWatchDelete(c *gin.Context) {
	if h.deleteGPUWatch(c) {
		c.Status(http.StatusNoContent)
	}
}
