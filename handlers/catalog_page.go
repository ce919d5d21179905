package handlers

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/templates"
	"workbench/templates/i18n"
)

func (h *Handler) catalogPage(c *gin.Context) {
	ctx := c.Request.Context()
	admin := currentUser(c).IsAdmin()
	images, err := h.store.ListImages(ctx, !admin)
	if !admin && err == nil {
		images, err = h.store.ListImagesFor(ctx, currentUser(c).ID, true)
	}
	if err != nil {
		h.fail(c, err)
		return
	}
	flavors, err := h.store.ListFlavors(ctx, !admin)
	if err != nil {
		h.fail(c, err)
		return
	}
	gpus, err := h.pool.List(ctx)
	if err != nil {
		h.fail(c, err)
		return
	}
	// What a launch of each would be told (Pool.Need, the launch's rule).
	needs, err := h.pool.Needs(ctx, flavors)
	if err != nil {
		h.fail(c, err)
		return
	}
	// "Free now" is what the viewer may take, as on the launch form:
	// units others' active bookings hold back now are counted apart. An
	// administrator sees the pool as nobody's: free units no booking
	// holds, and those every active booking holds, their own included
	// (their own launches are held to others' bookings as anyone's are).
	var held map[models.UnitPool]int
	if admin {
		held, err = h.heldForAnyone(ctx)
	} else {
		held, err = h.heldForOthers(ctx, currentUser(c))
	}
	if err != nil {
		h.fail(c, err)
		return
	}
	v := templates.CatalogView{IsAdmin: admin, AllBookings: admin, Unavailable: map[string]string{}, Waits: map[string]string{}}
	statuses, pulling := h.imageStatuses(ctx, images, admin)
	v.Pulling, v.NoReload = pulling, c.Query("reload") == "off"
	for _, img := range images {
		card := imageCard(ctx, img)
		card.Status = statuses[img.ID]
		card.SharedBy = h.sharedBy(ctx, img, currentUser(c))
		v.Images = append(v.Images, card)
	}
	for i, f := range flavors {
		// A flavor this server can never launch says so, as the launch
		// form's disabled card does: "Free now: 7 GPUs" beside an 8-GPU
		// flavor read as "it fits". One held back by drained or
		// out-of-order GPUs says that, as the form's card does: it is not
		// ruled out.
		v.Unavailable[f.Name], v.Waits[f.Name] = h.serverRulesOut(ctx, &flavors[i], gpus, needs[f.ID])
		free, booked := freeUnitsFor(gpus, f), 0
		if f.GPUCount > 0 {
			free, booked = lessBooked(free, held[unitPoolOf(f)])
		}
		v.Flavors = append(v.Flavors, templates.FlavorRow{ID: f.ID, Name: f.Name, GPUModel: f.GPUModel, GPUCount: f.GPUCount,
			CPUCores: f.CPUMilli.Cores(), MemoryGiB: models.FormatMemoryGiB(f.MemoryMiB), ShmMiB: f.ShmMiB, Enabled: f.Enabled, FreeGPUs: free, BookedByOthers: booked,
			UnitText: unitTextT(ctx, f), FreeNoun: freeNoun(f), Shared: f.Shared(), SharedLabel: i18n.T(ctx, sharedLabel)})
	}
	h.render(c, http.StatusOK, templates.CatalogPage(h.page(c, trc(c, "Catalog")), v))
}

func imageCard(ctx context.Context, img models.Image) templates.ImageCard {
	return templates.ImageCard{ID: img.ID, Name: img.Name, Image: img.Image, Description: imageDescription(ctx, img),
		Tags: img.TagList(), Enabled: img.Enabled, Saved: img.Saved(), Size: sizeText(img.SizeBytes)}
}

// imageDescription is img's description for a reader of ctx's language: the
// portal's own words (a saved image's, written with reasonf; a default
// image's) are translated, an administrator's are shown as written.
func imageDescription(ctx context.Context, img models.Image) string {
	if img.Saved() {
		return i18n.Reason(ctx, img.Description)
	}
	return seededText(ctx, img.Description)
}
