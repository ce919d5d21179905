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
// form goes on to its result page, which refreshes itself until it is done.
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
		h.flashError(c, "Could not test "+img.Name+": "+classify(err).Message)
		seeOther(c, "/catalog")
		return
	}
	h.record(c, "image.test", img.Name, nil, map[string]any{"test_id": chk.ID})
	if isAPI(c) {
		c.JSON(http.StatusAccepted, chk)
		return
	}
	seeOther(c, imageTestURL(img.ID, chk.ID))
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
	h.render(c, http.StatusOK, templates.ImageCheckPage(h.page(c, "Test of "+img.Name), imageCheckView(img, chk)))
}

func imageCheckView(img *models.Image, chk *models.ImageCheck) templates.ImageCheckView {
	v := templates.ImageCheckView{ImageID: img.ID, ImageName: img.Name, ImageRef: img.Image, State: chk.State,
		Message: chk.Message, Details: chk.Details, StartedBy: chk.StartedBy, Started: templates.When(&chk.StartedAt)}
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
		v.Steps = append(v.Steps, templates.CheckStepRow{Name: s, Label: checkStepLabels[s], State: st})
	}
	return v
}

var checkStepLabels = map[string]string{
	orchestrator.CheckStepImage:   "The image is on this server or can be pulled",
	orchestrator.CheckStepStart:   "A container starts from it (without GPUs)",
	orchestrator.CheckStepUser:    "It runs as the configured user",
	orchestrator.CheckStepJupyter: "Jupyter answers on {port} under {base_url} with the token",
	orchestrator.CheckStepHome:    "The home path is writable",
}
