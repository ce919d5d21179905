package handlers

import (
	"context"
	"errors"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/orchestrator"
	"workbench/templates"
	"workbench/templates/i18n"
)

// launchForm shows the launch page: images, flavors with free GPUs, name.
func (h *Handler) launchForm(c *gin.Context) {
	opt := h.wbs.Options()
	// Waiting for a free GPU is the form's default (issue 12 §2).
	v := templates.LaunchView{IdleMinutes: int64(opt.DefaultIdle / time.Minute), Image: c.Query("image"), Flavor: c.Query("flavor"), Queue: true,
		Reservation: c.Query("reservation")}
	h.renderLaunch(c, http.StatusOK, v)
}

// launchClasses are the priority classes the launch form offers u: for a
// user only those up to the highest default of their launches (a class
// above it is refused, "only administrators may choose it", so the form
// offered a choice that could only fail), with u's own default marked (it
// marked the portal's, which a group default replaces).
func (h *Handler) launchClasses(ctx context.Context, u *models.User, fls []models.Flavor) ([]templates.ClassOption, error) {
	classes, err := h.store.PriorityClasses(ctx)
	if err != nil {
		return nil, err
	}
	def, err := h.store.LaunchDefaultClass(ctx, u.ID, 0)
	if err != nil {
		return nil, err
	}
	top := def.Rank
	for i := range fls { // a flavor's own default may rank higher
		if fd, err := h.store.LaunchDefaultClass(ctx, u.ID, fls[i].ID); err == nil {
			top = max(top, fd.Rank)
		}
	}
	var out []templates.ClassOption
	for _, pc := range classes {
		if pc.Rank > top && !u.IsAdmin() {
			continue
		}
		out = append(out, templates.ClassOption{Name: pc.Name, Description: seededText(ctx, pc.Description), Preemptible: pc.Preemptible, Default: pc.Name == def.Name})
	}
	return out, nil
}

func (h *Handler) renderLaunch(c *gin.Context, status int, v templates.LaunchView) {
	ctx := c.Request.Context()
	opt := h.wbs.Options()
	v.MinIdle, v.MaxIdle = int64(opt.MinIdle/time.Minute), int64(opt.MaxIdle/time.Minute)
	v.Simulated = h.pool.Simulated()
	v.PriceChanges = h.priceChangesAhead(c)
	imgs, err := h.store.ListImagesFor(ctx, currentUser(c).ID, true)
	if err != nil {
		h.fail(c, err)
		return
	}
	lim, err := h.store.EffectiveQuota(ctx, currentUser(c).ID)
	if err != nil {
		h.fail(c, err)
		return
	}
	imgs = slices.DeleteFunc(imgs, func(img models.Image) bool { return !imageAllowed(lim, img.Name) })
	// The idle timeout offered is the one the user's quota allows: the
	// portal's default of 60 was refused to a user whose quota asks 90 or more.
	if lim.MinIdleMinutes != nil {
		v.MinIdle = max(v.MinIdle, *lim.MinIdleMinutes)
	}
	if lim.MaxIdleMinutes != nil {
		v.MaxIdle = min(v.MaxIdle, *lim.MaxIdleMinutes)
	}
	if c.Request.Method == http.MethodGet && v.MinIdle <= v.MaxIdle {
		v.IdleMinutes = min(max(v.IdleMinutes, v.MinIdle), v.MaxIdle)
	}
	fls, err := h.store.ListFlavors(ctx, true)
	if err != nil {
		h.fail(c, err)
		return
	}
	if v.Classes, err = h.launchClasses(ctx, currentUser(c), fls); err != nil {
		h.fail(c, err)
		return
	}
	gpus, err := h.pool.List(ctx)
	if err != nil {
		h.fail(c, err)
		return
	}
	// Units others' active bookings hold back now are not free to this
	// user: a launch would be refused them ("reserved for someone else
	// now"), so the form counts them apart.
	held, err := h.heldForOthers(ctx, currentUser(c))
	if err != nil {
		h.fail(c, err)
		return
	}
	// What a launch of each would be told (Pool.Need, the launch's rule).
	needs, err := h.pool.Needs(ctx, fls)
	if err != nil {
		h.fail(c, err)
		return
	}
	v.Facts, v.Unavailable, v.Waits, v.PreemptibleRates = map[string]templates.ImageFacts{}, map[string]string{}, map[string]string{}, map[string]string{}
	rates := map[string]int64{}
	// Whether each image is on this server and its size: the catalog's
	// statuses (one engine inspect per image, as the catalog page does).
	statuses, _ := h.imageStatuses(ctx, imgs, false)
	for _, img := range imgs {
		card := imageCard(ctx, img)
		card.SharedBy = h.sharedBy(ctx, img, currentUser(c))
		v.Images = append(v.Images, card)
		v.Facts[img.Name] = withPresence(imageFacts(img), statuses[img.ID])
	}
	for i, f := range fls {
		rate, err := h.wbs.Billing().HourlyRate(ctx, orchestrator.FlavorShape(&fls[i]))
		if err != nil {
			h.log.Warn("price flavor", "flavor", f.Name, "err", err)
		} else {
			rates[f.Name] = rate
		}
		free, booked := freeUnitsFor(gpus, f), 0
		if f.GPUCount > 0 {
			free, booked = lessBooked(free, held[unitPoolOf(f)])
		}
		// A flavor that asks for more CPUs or memory than this server has
		// can never run here; one that fits the pool but not what is free
		// now can wait in the queue; one the pool can never hold cannot be
		// chosen.
		if why, waits := h.launchRule(ctx, lim, &fls[i], gpus, needs[f.ID], free); why != "" {
			v.Unavailable[f.Name] = why
		} else if waits != "" {
			v.Waits[f.Name] = waits
		}
		if f.GPUCount > 0 {
			if pr, err := h.wbs.Billing().HourlyRate(ctx, orchestrator.WorkbenchShape(&fls[i], true)); err == nil && pr != rate {
				v.PreemptibleRates[f.Name] = rateTextIn(ctx, pr, h.cfg.Currency)
			}
		}
		v.Flavors = append(v.Flavors, templates.FlavorRow{ID: f.ID, Name: f.Name, GPUModel: f.GPUModel, GPUCount: f.GPUCount,
			CPUCores: f.CPUMilli.Cores(), MemoryGiB: models.FormatMemoryGiB(f.MemoryMiB), ShmMiB: f.ShmMiB, Enabled: f.Enabled, FreeGPUs: free, BookedByOthers: booked,
			PerHour: rateTextIn(ctx, rate, h.cfg.Currency), UnitText: unitTextT(ctx, f), FreeNoun: freeNoun(f), Shared: f.Shared(), SharedLabel: i18n.T(ctx, sharedLabel)})
	}
	if v.Reservations, err = h.launchReservations(ctx, currentUser(c), fls); err != nil {
		h.fail(c, err)
		return
	}
	h.preselect(ctx, currentUser(c).ID, &v, imgs, fls, rates)
	h.render(c, status, templates.LaunchPage(h.workPage(c, i18n.T(c.Request.Context(), "New workbench")), v))
}

// maxIdleMinutes is the most minutes a time.Duration holds: beyond any
// idle range, so that the launch refuses it with the range.
const maxIdleMinutes = int64(math.MaxInt64 / time.Minute)

// launch handles the launch form.
func (h *Handler) launch(c *gin.Context) {
	v := templates.LaunchView{Name: strings.TrimSpace(c.PostForm("name")), Image: c.PostForm("image"), Flavor: c.PostForm("flavor"),
		Queue: c.PostForm("queue") == "on", Priority: c.PostForm("priority"), Preemptible: c.PostForm("preemptible") == "on",
		AutoResume: c.PostForm("auto_resume") == "on", Reservation: strings.TrimSpace(c.PostForm("reservation"))}
	// An empty field (cleared, or a client that leaves it out) is the
	// default idle stop, as 0 is for the API.
	var minutes int64
	var err error
	if text := strings.TrimSpace(c.PostForm("idle_minutes")); text != "" {
		minutes, err = strconv.ParseInt(text, 10, 64)
		if errors.Is(err, strconv.ErrRange) {
			// A whole number, only beyond int64 (ParseInt gives its
			// bound): out of the idle range, which the launch names
			// ("must be a whole number of minutes" was untrue).
			err = nil
		}
		// In minutes, bounded so that the Duration does not wrap around
		// (99999999999999 min wrapped to an arbitrary idle timeout).
		minutes = min(max(minutes, -maxIdleMinutes), maxIdleMinutes)
	}
	if err != nil {
		v.Errors = templates.FormErrors{"idle_timeout": fieldMessage(c.Request.Context(), "must be a whole number of minutes")}
		h.renderLaunch(c, http.StatusBadRequest, v)
		return
	}
	v.IdleMinutes = minutes
	// The booking to use (the form's "reservation" select, a booking's
	// number; empty: none named, the launch still uses the owner's
	// bookings of its units).
	var reservation int64
	if text := strings.TrimPrefix(v.Reservation, "#"); text != "" {
		if reservation, err = strconv.ParseInt(text, 10, 64); err != nil || reservation <= 0 {
			v.Errors = templates.FormErrors{"reservation": i18n.T(c.Request.Context(), "Reservation: give the reservation's number.")}
			h.renderLaunch(c, http.StatusBadRequest, v)
			return
		}
	}
	wb, err := h.wbs.Launch(c.Request.Context(), currentUser(c), orchestrator.LaunchRequest{Name: v.Name, Image: v.Image,
		Flavor: v.Flavor, IdleTimeout: time.Duration(minutes) * time.Minute,
		Queue: v.Queue, Priority: v.Priority, Preemptible: v.Preemptible, AutoResume: v.AutoResume, Reservation: reservation})
	var ve *models.ValidationError
	again := "" // the workbench this form made when it was sent twice
	if errors.As(err, &ve) && ve.Field == "name" {
		again = h.sameLaunchJustMade(c, v)
	}
	switch {
	case again != "":
		// The form sent twice (a double click, a resubmitted page): the
		// second answers like the first, with the workbench it made.
		h.seeOther(c, "/workbenches/"+again)
	case errors.As(err, &ve) && ve.Field == "reservation":
		v.Errors = templates.FormErrors{"reservation": i18n.T(c.Request.Context(), "Reservation: %s", i18n.ReasonClause(c.Request.Context(), ve.Message))}
		h.renderLaunch(c, http.StatusBadRequest, v)
	case errors.As(err, &ve):
		v.Errors = templates.FormErrors{ve.Field: fieldMessage(c.Request.Context(), ve.Message)}
		h.renderLaunch(c, http.StatusBadRequest, v)
	case err != nil:
		e := h.classify(err)
		if e.Status >= 500 && e.Status != http.StatusServiceUnavailable {
			h.fail(c, err)
			return
		}
		// One sentence after the page's words (refusalClause), as the
		// Start flash: the bare refusal read "quota exceeded: the monthly
		// budget is used up", lower-case and without a full stop.
		v.Errors = templates.FormErrors{"_": i18n.T(c.Request.Context(), "Could not launch: %s.", h.refusalClause(c, err))}
		h.renderLaunch(c, e.Status, v)
	default:
		h.seeOther(c, "/workbenches/"+wb.ID)
	}
}

// apiLaunch: POST /api/v1/workbenches {name, image, flavor,
// idle_timeout_seconds, queue, priority, preemptible, auto_resume,
// reservation}.
func (h *Handler) apiLaunch(c *gin.Context) {
	var body struct {
		Name               string   `json:"name"`
		Image              nameOrID `json:"image"`
		Flavor             nameOrID `json:"flavor"`
		IdleTimeoutSeconds int64    `json:"idle_timeout_seconds"`
		Queue              bool     `json:"queue"`
		Priority           string   `json:"priority"`
		Preemptible        bool     `json:"preemptible"`
		AutoResume         bool     `json:"auto_resume"`
		Reservation        int64    `json:"reservation"`
	}
	if !h.bindJSON(c, &body) {
		return
	}
	ctx := c.Request.Context()
	wb, err := h.wbs.Launch(ctx, currentUser(c), orchestrator.LaunchRequest{Name: strings.TrimSpace(body.Name), Image: string(body.Image),
		Flavor: string(body.Flavor), IdleTimeout: time.Duration(body.IdleTimeoutSeconds) * time.Second,
		Queue: body.Queue, Priority: body.Priority, Preemptible: body.Preemptible, AutoResume: body.AutoResume, Reservation: body.Reservation})
	if err != nil {
		h.fail(c, err)
		return
	}
	c.Header("Location", "/api/v1/workbenches/"+wb.ID)
	h.writeWorkbench(c, http.StatusAccepted, wb)
}

// sameLaunchJustMade is the id of the caller's workbench of the form's name,
// image and flavor made in the last minute ("" when none): a launch form
// sent twice. The second was refused as a name already taken and showed an
// error page for a launch that had worked.
func (h *Handler) sameLaunchJustMade(c *gin.Context, v templates.LaunchView) string {
	ctx := c.Request.Context()
	wbs, err := h.store.ListWorkbenches(ctx, currentUser(c).ID)
	if err != nil {
		return ""
	}
	for _, wb := range wbs {
		if wb.Name != v.Name || h.wbs.Now().Sub(wb.CreatedAt) > time.Minute {
			continue
		}
		img, err1 := h.store.ImageByNameOrID(ctx, v.Image)
		fl, err2 := h.store.FlavorByNameOrID(ctx, v.Flavor)
		if err1 == nil && err2 == nil && img.ID == wb.ImageID && fl.ID == wb.FlavorID {
			return wb.ID
		}
	}
	return ""
}
