package handlers

import (
	"context"
	"fmt"
	"time"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/templates"
)

// imageStatuses tells, per catalog image, whether it is on this server and
// its size, any pre-pull of it, and (for admins) its last Test image run.
// It reports whether a pre-pull is under way.
func (h *Handler) imageStatuses(ctx context.Context, images []models.Image, admin bool) (map[int64]templates.ImageStatus, bool) {
	out := make(map[int64]templates.ImageStatus, len(images))
	var tests map[int64]models.ImageCheck
	if admin {
		var err error
		if tests, err = h.store.LatestImageChecks(ctx); err != nil {
			h.log.Warn("latest image tests", "err", err)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	engineDown, pulling := false, false
	for _, img := range images {
		s := templates.ImageStatus{Presence: "unknown"}
		if !engineDown {
			present, size, err := h.wbs.ImageSize(ctx, img.Image)
			switch {
			case err != nil:
				engineDown = true
			case present:
				s.Presence, s.Size = "present", templates.MB(size)
			default:
				s.Presence = "absent"
			}
		}
		if p, ok := h.wbs.PrePullStatus(img.Image); ok && (p.Running || p.Error != "") {
			pulling = pulling || p.Running
			s.Pull = &templates.ImagePullView{Running: p.Running, Percent: p.Percent, Error: p.Error, Details: p.Details,
				Progress: pullProgressText(p.DoneBytes, p.TotalBytes, p.Percent)}
			if p.Mirror != "" {
				s.Pull.Progress += " from the mirror " + p.Mirror
			}
		}
		if t, ok := tests[img.ID]; ok {
			s.LastTest = &templates.ImageTestSummary{State: t.State, Message: t.Message, URL: imageTestURL(img.ID, t.ID)}
		}
		out[img.ID] = s
	}
	return out, pulling
}

// pullProgressText is "120 MB of 800 MB (15%)", or what is known so far.
func pullProgressText(done, total int64, pct int) string {
	if total <= 0 {
		return "starting…"
	}
	return fmt.Sprintf("%s of %s (%d%%)", templates.MB(done), templates.MB(total), pct)
}

// imagePull: POST /admin/images/{id}/pull. The pull runs in the background;
// the catalog shows its progress, also after a reload.
func (h *Handler) imagePull(c *gin.Context) {
	img, ok := h.imageFromParam(c)
	if !ok {
		return
	}
	if err := h.wbs.PrePull(c.Request.Context(), img, currentUser(c).Username); err != nil {
		h.flashError(c, trc(c, "Could not pull %s: %s.", img.Image, h.refusalClause(c, err)))
		h.seeOther(c, "/catalog")
		return
	}
	h.record(c, "image.pull", img.Name, nil, map[string]any{"image": img.Image})
	h.flash(c, trc(c, "Pulling %s in the background; its progress shows on its card.", img.Image))
	h.seeOther(c, "/catalog")
}
