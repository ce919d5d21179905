package handlers

import (
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/orchestrator"
)

// apiReservations: GET /api/v1/reservations, the bookings not yet over
// (everyone's: the pool's timeline is public; names only for admins, one's
// own and one's groups').
func (h *Handler) apiReservations(c *gin.Context) {
	rows, err := h.reservationRows(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"items": nonNil(rows)})
}

func (h *Handler) reservationRows(c *gin.Context) ([]APIReservation, error) {
	ctx := c.Request.Context()
	now := h.wbs.Now()
	list, err := h.store.Reservations(ctx, now)
	if err != nil {
		return nil, err
	}
	u := currentUser(c)
	// Only the names this viewer may see are read (never every user).
	names := map[int64]string{}
	out := make([]APIReservation, 0, len(list))
	for _, r := range list {
		j := apiReservation(&r, "another user", now)
		j.forViewer = r.For(u.ID)
		if u.IsAdmin() || r.UserID == u.ID || r.For(u.ID) {
			if _, ok := names[r.UserID]; !ok {
				booker, err := h.store.UserByID(ctx, r.UserID)
				if err != nil {
					return nil, err
				}
				names[r.UserID] = booker.Username
			}
			j.User = names[r.UserID]
		} else {
			j.Note, j.CreatedBy, j.Group = "", "", ""
		}
		out = append(out, j)
	}
	return out, nil
}

// apiReservationCreate: POST /api/v1/reservations {gpu_model, unit_kind
// (gpu, mig or slice; gpu when absent), mig_profile, units, starts_at,
// ends_at, note}; an admin may book for another user ("user"); "group"
// holds the units for a group's members (one's own group; an admin's, any).
func (h *Handler) apiReservationCreate(c *gin.Context) {
	var body struct {
		GPUModel   string    `json:"gpu_model"`
		UnitKind   string    `json:"unit_kind"`
		MIGProfile string    `json:"mig_profile"`
		Units      int       `json:"units"`
		StartsAt   time.Time `json:"starts_at"`
		EndsAt     time.Time `json:"ends_at"`
		Note       string    `json:"note"`
		User       string    `json:"user"`
		Group      string    `json:"group"`
	}
	if !h.bindJSON(c, &body) {
		return
	}
	ctx := c.Request.Context()
	owner := currentUser(c)
	if body.User != "" && body.User != owner.Username {
		if !owner.IsAdmin() {
			h.fail(c, errForbidden)
			return
		}
		u, err := h.liveUserNamed(ctx, body.User)
		if err != nil {
			h.fail(c, &models.ValidationError{Field: "user", Message: "no user " + strconv.Quote(body.User)})
			return
		}
		owner = u
	}
	req := orchestrator.ReserveRequest{Kind: body.UnitKind, Model: body.GPUModel, Profile: body.MIGProfile,
		Units: body.Units, Start: body.StartsAt, End: body.EndsAt, Note: body.Note, By: currentUser(c)}
	if body.Group != "" {
		g, err := h.store.GroupByName(ctx, body.Group)
		switch {
		case err != nil && !currentUser(c).IsAdmin():
			// As for a group the caller is not in (orchestrator.Reserve):
			// which group names exist is not a user's to learn.
			h.fail(c, &models.ValidationError{Field: "group", Message: models.Reasonf("you are not in the group %s; book for yourself or a group of yours", body.Group)})
			return
		case err != nil:
			h.fail(c, &models.ValidationError{Field: "group", Message: "no group " + strconv.Quote(body.Group)})
			return
		}
		req.Group = g
	}
	r, err := h.wbs.Reserve(ctx, owner, req)
	if err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, apiReservation(r, owner.Username, h.wbs.Now()))
}

// apiReservationDelete: DELETE /api/v1/reservations/{id} (its owner or an
// admin) releases it.
func (h *Handler) apiReservationDelete(c *gin.Context) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil {
		h.fail(c, models.ErrNotFound)
		return
	}
	if err := h.wbs.CancelReservation(c.Request.Context(), currentUser(c), id); err != nil {
		h.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}
