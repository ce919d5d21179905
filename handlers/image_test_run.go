package handlers

import (
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/orchestrator"
	"workbench/templates"
)

// imageFromParam loads the :id catalog image.
func (h *Handler) imageFromParam(c *gin.Context) (*models.Image, bool) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil {
		h.fail(c, errNotFound)
		return nil, false
	}
	img, err := h.store.ImageByID(c.Request.Context(), id)
	if err != nil {
		h.fail(c, err)
		return nil, false
	}
	return img, true
}

// imageTestStart: POST /admin/images/{id}/test (form) and
// POST /api/v1/images/{id}/test. The dry launch runs in the background; the
// form goes on to its result page, which follows the run until it is done
// (in place with JavaScript, by a slow reload without).
func (h *Handler) imageTestStart(c *gin.Context) {
	img, ok := h.imageFromParam(c)
	if !ok {
		return
	}
	chk, err := h.wbs.TestImage(c.Request.Context(), img, currentUser(c).Username)
	if err != nil {
		if isAPI(c) {
			h.fail(c, err)
			return
		}
		h.flashError(c, trc(c, "Could not test %s: %s", img.Name, classify(err).Message))
		h.seeOther(c, "/catalog")
		return
	}
	h.record(c, "image.test", img.Name, nil, map[string]any{"test_id": chk.ID})
	if isAPI(c) {
		c.JSON(http.StatusAccepted, chk)
		return
	}
	h.seeOther(c, imageTestURL(img.ID, chk.ID))
}

func imageTestURL(imageID, testID int64) string {
	return "/admin/images/" + strconv.FormatInt(imageID, 10) + "/tests/" + strconv.FormatInt(testID, 10)
}

// imageTestResult: GET /admin/images/{id}/tests/{test} and its API twin.
func (h *Handler) imageTestResult(c *gin.Context) {
	img, ok := h.imageFromParam(c)
	if !ok {
		return
	}
	tid, err := strconv.ParseInt(c.Param("test"), 10, 64)
	if err != nil {
		h.fail(c, errNotFound)
		return
	}
	chk, err := h.store.ImageCheckByID(c.Request.Context(), img.ID, tid)
	if err != nil {
		h.fail(c, err)
		return
	}
	if isAPI(c) {
		c.JSON(http.StatusOK, chk)
		return
	}
	h.render(c, http.StatusOK, templates.ImageCheckPage(h.page(c, trc(c, "Test of %s", img.Name)), imageCheckView(c, img, chk)))
}

func imageCheckView(c *gin.Context, img *models.Image, chk *models.ImageCheck) templates.ImageCheckView {
	v := templates.ImageCheckView{ImageID: img.ID, ImageName: img.Name, ImageRef: img.Image, State: chk.State,
		Message: checkMessageT(c, chk.Message), Details: chk.Details, StartedBy: chk.StartedBy, Started: templates.When(&chk.StartedAt),
		Path: imageTestURL(img.ID, chk.ID), NoReload: c.Query("reload") == "off"}
	reached := false
	for _, s := range orchestrator.CheckSteps {
		st := "passed"
		switch {
		case chk.State == models.CheckPassed:
		case s == chk.Step && chk.State == models.CheckFailed:
			st, reached = "failed", true
		case s == chk.Step:
			st, reached = "running", true
		case reached || chk.Step == "":
			st = "pending"
		}
		v.Steps = append(v.Steps, templates.CheckStepRow{Name: s, Label: checkStepLabel(c, s), State: st})
	}
	return v
}

// checkStepLabel says what a check step checks, in the reader's language.
func checkStepLabel(c *gin.Context, step string) string {
	switch step {
	case orchestrator.CheckStepImage:
		return trc(c, "The image is on this server or can be pulled")
	case orchestrator.CheckStepStart:
		return trc(c, "A container starts from it (without GPUs)")
	case orchestrator.CheckStepUser:
		return trc(c, "It runs as the configured user")
	case orchestrator.CheckStepJupyter:
		return trc(c, "Jupyter answers on {port} under {base_url} with the token")
	case orchestrator.CheckStepHome:
		return trc(c, "The home path is writable")
	}
	return step
}
