package handlers

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/templates"
	"workbench/templates/i18n"
)

// savedImagesPage lists the images the user saved, their sizes and the
// storage quota they count against.
func (h *Handler) savedImagesPage(c *gin.Context) {
	ctx := c.Request.Context()
	u := currentUser(c)
	imgs, err := h.store.SavedImagesOf(ctx, u.ID)
	if err != nil {
		h.fail(c, err)
		return
	}
	used, err := h.store.SavedImageBytes(ctx, u.ID)
	if err != nil {
		h.fail(c, err)
		return
	}
	groups, err := h.store.UserGroups(ctx, u.ID)
	if err != nil {
		h.fail(c, err)
		return
	}
	v := templates.SavedImagesView{Used: sizeText(used), Groups: groups}
	if q := h.wbs.Options().SavedImageQuotaBytes; q > 0 {
		v.Quota = sizeText(q)
	}
	for _, img := range imgs {
		v.Items = append(v.Items, templates.SavedImageRow{ID: img.ID, Name: img.Name, Size: sizeText(img.SizeBytes),
			Description: imageDescription(ctx, img), Shared: strings.Join(img.SharedGroups, ", "), Created: templates.WhenIn(c.Request.Context(), &img.CreatedAt)})
	}
	h.render(c, http.StatusOK, templates.SavedImagesPage(h.page(c, i18n.T(c.Request.Context(), "My images")), v))
}

func sizeText(b int64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	}
	return fmt.Sprintf("%d KiB", (b+1023)/1024)
}

// sharedBy is the saver's username when img is a saved image of someone
// other than viewer (one shared with a group of the viewer's): launching it
// runs the saver's files with the viewer's home and, in path mode, in the
// portal's origin with the viewer's session, so the card says whose they
// are. "" for catalog images and the viewer's own.
func (h *Handler) sharedBy(ctx context.Context, img models.Image, viewer *models.User) string {
	if !img.Saved() || img.OwnerID == viewer.ID {
		return ""
	}
	u, err := h.store.UserByID(ctx, img.OwnerID)
	if err != nil {
		return i18n.T(ctx, "another user")
	}
	return u.Username
}

// ownedSavedImage loads the :id saved image of the current user; anyone
// else's (and catalog entries) are a 404.
func (h *Handler) ownedSavedImage(c *gin.Context) (*models.Image, bool) {
	id, _ := strconv.ParseInt(c.Param("id"), 10, 64)
	img, err := h.store.ImageByID(c.Request.Context(), id)
	if err != nil || !img.Saved() || img.OwnerID != currentUser(c).ID {
		h.fail(c, errNotFound)
		return nil, false
	}
	return img, true
}

// savedImageDelete removes one of the user's saved images (refused while a
// workbench uses it).
func (h *Handler) savedImageDelete(c *gin.Context) {
	img, ok := h.ownedSavedImage(c)
	if !ok {
		return
	}
	ctx := c.Request.Context()
	if !h.askedFirst(c, templates.ConfirmView{Question: i18n.T(ctx, "Delete image %s? Workbenches cannot be launched from it any more.", img.Name),
		Yes: i18n.T(ctx, "Delete"), Back: "/images/saved"}) {
		return
	}
	if err := h.wbs.DeleteSavedImage(c.Request.Context(), img); err != nil {
		if isAPI(c) {
			h.fail(c, err)
			return
		}
		h.flashError(c, i18n.T(c.Request.Context(), "Could not delete %s: %s.", img.Name, h.refusalClause(c, err)))
		h.seeOther(c, "/images/saved")
		return
	}
	h.record(c, "image.delete", img.Name, img, nil)
	if isAPI(c) {
		c.Status(http.StatusNoContent)
		return
	}
	h.flash(c, i18n.T(c.Request.Context(), "Image %s deleted.", img.Name))
	h.seeOther(c, "/images/saved")
}

// savedImageShare sets the groups a saved image is shared with: only
// groups the owner belongs to.
func (h *Handler) savedImageShare(c *gin.Context) {
	img, ok := h.ownedSavedImage(c)
	if !ok {
		return
	}
	var groups []string
	if isAPI(c) {
		var b struct {
			Groups []string `json:"groups"`
		}
		if !h.bindJSON(c, &b) {
			return
		}
		groups = b.Groups
	} else {
		for _, g := range strings.Split(c.PostForm("groups"), ",") {
			if g = strings.TrimSpace(g); g != "" {
				groups = append(groups, g)
			}
		}
	}
	ctx := c.Request.Context()
	mine, err := h.store.UserGroups(ctx, currentUser(c).ID)
	if err == nil {
		for _, g := range groups {
			if !slices.Contains(mine, g) {
				err = &models.ValidationError{Field: "groups", Message: fmt.Sprintf("you are not in group %q", g)}
				break
			}
		}
	}
	if err == nil {
		err = h.audited(c, func(tx *models.Store) (models.AuditRecord, error) {
			return auditRec("image.share", img.Name, img.SharedGroups, groups), tx.ShareImage(ctx, img.ID, groups)
		})
	}
	if err != nil {
		if isAPI(c) {
			h.fail(c, err)
			return
		}
		h.flashError(c, i18n.T(c.Request.Context(), "Could not share %s: %s.", img.Name, h.refusalClause(c, err)))
		h.seeOther(c, "/images/saved")
		return
	}
	if isAPI(c) {
		c.JSON(http.StatusOK, gin.H{"id": img.ID, "shared_groups": nonNil(groups)})
		return
	}
	h.flash(c, i18n.T(c.Request.Context(), "Sharing of %s saved.", img.Name))
	h.seeOther(c, "/images/saved")
}

// adminImagePromote makes a user's saved image a catalog entry (admin,
// sudo): visible to everyone, no longer in its saver's quota.
func (h *Handler) adminImagePromote(c *gin.Context) {
	id, _ := strconv.ParseInt(c.Param("id"), 10, 64)
	ctx := c.Request.Context()
	img, err := h.store.ImageByID(ctx, id)
	if err == nil && !img.Saved() {
		err = errNotFound
	}
	if err == nil {
		err = h.audited(c, func(tx *models.Store) (models.AuditRecord, error) {
			return auditRec("image.promote", img.Name, img.OwnerID, 0), tx.PromoteImage(ctx, id)
		})
	}
	if err != nil {
		h.fail(c, err)
		return
	}
	if isAPI(c) {
		promoted, _ := h.store.ImageByID(ctx, id)
		c.JSON(http.StatusOK, promoted)
		return
	}
	h.flash(c, i18n.T(c.Request.Context(), "Image %s is now in the catalog.", img.Name))
	h.seeOther(c, "/catalog")
}
