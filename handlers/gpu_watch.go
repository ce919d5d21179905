package handlers

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/templates"
	"workbench/templates/i18n"
)

// "Notify me when a GPU frees": users watch a GPU model (fires when one
// GPU of it is free) or a flavor (fires when the flavor can start: enough
// units of its kind free for it); the portal's GPUWatcher
// (orchestrator/gpu_watch.go) writes one in-app notification per watch,
// and sends it by email and webhook when the operator configured them.

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
	v.EmailNotices, v.SendsEmail, v.HasEmail = u.EmailWorkbenchNotices, h.cfg.SendsEmail, u.Email != ""
	if v.Models, err = h.pool.Models(ctx); err != nil {
		h.fail(c, err)
		return
	}
	flavors, err := h.store.ListFlavors(ctx, false)
	if err != nil {
		h.fail(c, err)
		return
	}
	// Only flavors the user's quota lets them launch are worth waiting for.
	lim, err := h.store.EffectiveQuota(ctx, u.ID)
	if err != nil {
		h.fail(c, err)
		return
	}
	names := map[int64]string{}
	for _, f := range flavors {
		names[f.ID] = f.Name
		if f.Enabled && f.GPUCount > 0 && quotaRulesOut(lim, f) == "" {
			if need, err := h.pool.Need(ctx, &f); err == nil && need.NeverFits() {
				continue // it could never start, so never fire
			}
			v.Flavors = append(v.Flavors, templates.WatchFlavor{Name: f.Name, Need: unitTextT(ctx, f)})
		}
	}
	for _, n := range notes {
		v.Notifications = append(v.Notifications, templates.NotificationRow{Message: n.Message, Link: n.Link, At: templates.WhenIn(ctx, &n.CreatedAt), Unread: n.ReadAt == nil})
	}
	for _, w := range watches {
		row := templates.GPUWatchRow{ID: w.ID, Model: w.GPUModel, Since: templates.WhenIn(ctx, &w.CreatedAt)}
		if w.FlavorID != nil {
			row.Flavor = names[*w.FlavorID]
		}
		if w.NotifiedAt != nil {
			row.Notified = templates.WhenIn(ctx, w.NotifiedAt)
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

// gpuWatchCreate: the notifications page's forms. gpu_model watches a
// model; flavor (the other form) watches a flavor.
func (h *Handler) gpuWatchCreate(c *gin.Context) {
	model, flavor := c.PostForm("gpu_model"), c.PostForm("flavor")
	_, fl, err := h.createGPUWatch(c, model, flavor)
	if err != nil {
		var ve *models.ValidationError
		if errors.As(err, &ve) {
			h.renderNotifications(c, http.StatusBadRequest, templates.NotificationsView{Model: model, Flavor: flavor, Errors: templates.FormErrors{ve.Field: fieldMessage(c.Request.Context(), ve.Message)}})
			return
		}
		h.fail(c, err)
		return
	}
	if fl != nil { // named as the page lists it, also when the form gave its id
		h.flash(c, i18n.T(c.Request.Context(), "You will be notified here when flavor %s can start.", fl.Name))
	} else {
		h.flash(c, i18n.T(c.Request.Context(), "You will be notified here when a %s GPU is free.", model))
	}
	h.seeOther(c, "/notifications")
}

// createGPUWatch watches flavor (by name or id; returned) when it is
// given, else GPU model model.
func (h *Handler) createGPUWatch(c *gin.Context, model, flavor string) (*models.GPUWatch, *models.Flavor, error) {
	ctx := c.Request.Context()
	var known []string
	var fl *models.Flavor
	if flavor != "" && strings.TrimSpace(model) != "" {
		// One watch is of a model or of a flavor: the model was dropped
		// without a word when both came.
		return nil, nil, &models.ValidationError{Field: "flavor", Message: "watch a GPU model or a flavor, not both"}
	}
	if flavor != "" {
		var err error
		fl, err = h.store.FlavorByNameOrID(ctx, flavor)
		if errors.Is(err, models.ErrNotFound) {
			return nil, nil, &models.ValidationError{Field: "flavor", Message: "choose an enabled flavor with GPUs"}
		} else if err != nil {
			return nil, nil, err
		}
		// A flavor asking more than the server's layout has never fires:
		// refused now, as its launch is.
		if need, err := h.pool.Need(ctx, fl); err != nil {
			return nil, nil, err
		} else if need.NeverFits() {
			return nil, nil, &models.ValidationError{Field: "flavor", Message: "this flavor needs more GPUs than this server has, so it could never start: choose a smaller one"}
		}
	} else {
		var err error
		if known, err = h.pool.Models(ctx); err != nil {
			return nil, nil, err
		}
	}
	var w *models.GPUWatch
	err := h.audited(c, func(tx *models.Store) (models.AuditRecord, error) {
		var err error
		if fl != nil {
			w, err = tx.CreateFlavorWatch(ctx, currentUser(c).ID, fl)
		} else {
			w, err = tx.CreateGPUWatch(ctx, currentUser(c).ID, model, known)
		}
		return auditRec("gpu_watch.create", currentUser(c).Username, nil, w), err
	})
	return w, fl, err
}

func (h *Handler) gpuWatchDelete(c *gin.Context) {
	if h.deleteGPUWatch(c) {
		h.flash(c, i18n.T(c.Request.Context(), "Watch deleted."))
		h.seeOther(c, "/notifications")
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

// apiNotifications: GET /api/v1/notifications?limit=&cursor=, the
// caller's, newest first, a page at a time (api_paging.go); the first
// page is the newest 100, all this answered before it paged.
func (h *Handler) apiNotifications(c *gin.Context) {
	limit, after, ok := h.apiPageParams(c, "notifications")
	if !ok {
		return
	}
	beforeID, err := idCursor(after)
	if err != nil {
		h.fail(c, err)
		return
	}
	notes, err := h.store.NotificationsBefore(c.Request.Context(), currentUser(c).ID, beforeID, limit+1)
	if err != nil {
		h.fail(c, err)
		return
	}
	writeAPIPage(c, "notifications", notes, limit, func(n *models.Notification) string { return idCursorOf(n.ID) }, apiNotification)
}

func (h *Handler) apiGPUWatches(c *gin.Context) {
	ws, err := h.store.ListGPUWatches(c.Request.Context(), currentUser(c).ID)
	if err != nil {
		h.fail(c, err)
		return
	}
	names, err := h.flavorNames(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, mapList(ws, func(w *models.GPUWatch) APIGPUWatch { return apiGPUWatch(w, names) }))
}

// flavorNames maps every flavor's id to its name.
func (h *Handler) flavorNames(c *gin.Context) (map[int64]string, error) {
	fls, err := h.store.ListFlavors(c.Request.Context(), false)
	names := make(map[int64]string, len(fls))
	for _, f := range fls {
		names[f.ID] = f.Name
	}
	return names, err
}

// apiGPUWatchCreate: POST /api/v1/gpu-watches {"gpu_model": "NVIDIA H100 80GB HBM3"}
// (one GPU of the model free) or {"flavor": "8×H100"} (name or id: the
// flavor can start).
func (h *Handler) apiGPUWatchCreate(c *gin.Context) {
	var body struct {
		GPUModel string `json:"gpu_model"`
		Flavor   string `json:"flavor"`
	}
	if !h.bindJSON(c, &body) {
		return
	}
	w, _, err := h.createGPUWatch(c, body.GPUModel, body.Flavor)
	if err != nil {
		h.fail(c, err)
		return
	}
	names, err := h.flavorNames(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, APIItem[APIGPUWatch]{Item: apiGPUWatch(w, names)})
}

func (h *Handler) apiGPUWatchDelete(c *gin.Context) {
	if h.deleteGPUWatch(c) {
		c.Status(http.StatusNoContent)
	}
}
