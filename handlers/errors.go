package handlers

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/gin-gonic/gin"

	"workbench/handlers/proxy"
	"workbench/models"
	"workbench/orchestrator"
	"workbench/templates"
	"workbench/templates/i18n"
)

// apiError is an error with an HTTP status and a stable code for scripts.
type apiError struct {
	Status  int
	Code    string
	Message string
}

func (e *apiError) Error() string { return e.Message }

func newError(status int, code, msg string) error {
	return &apiError{Status: status, Code: code, Message: msg}
}

// The generic refusals, each with what to do next.
const (
	forbiddenMessage = "you are not allowed to do this; ask an admin if you need it"
	notFoundMessage  = "not found: it may have been deleted, or the link is out of date; go back to the list and pick it again"
	// apiNotFoundMessage is notFoundMessage for a script: it follows no
	// link and has no list to go back to.
	apiNotFoundMessage = "not found: it may have been deleted, or the id or name in the address is wrong; list them again and use a current one"
)

// storageUnavailableMessage answers any change while the database cannot
// be written (models.Unwritable).
const storageUnavailableMessage = "the portal cannot save changes right now: the disk of its database is full or read-only, and an administrator has to free or fix it (the portal's log says so); running workbenches keep running, and nothing you did was saved; try again later"

var (
	errUnauthorized = newError(http.StatusUnauthorized, "unauthorized", "log in or send an API token")
	errForbidden    = newError(http.StatusForbidden, "forbidden", forbiddenMessage)
	errNotFound     = newError(http.StatusNotFound, "not_found", notFoundMessage)
)

// classify maps any error to the status, code and message the client sees.
// Unknown errors become a 500 whose message hides the internals.
func classify(err error) *apiError {
	var ae *apiError
	var ve *models.ValidationError
	var re *orchestrator.RefusedError
	var se *orchestrator.ErrState
	var ste *orchestrator.StopError
	var ce *models.ConflictError
	var ure *orchestrator.UnrecordedStopError
	var spe *orchestrator.StopPendingError
	switch {
	case errors.As(err, &ure):
		// Stopped, but not recorded: not a failure to retry or force.
		return &apiError{http.StatusServiceUnavailable, "stop_not_recorded", ure.Error()}
	case errors.As(err, &spe):
		// Refused until that stop is recorded (by itself): the same code,
		// what waits for it in the message.
		return &apiError{http.StatusServiceUnavailable, "stop_not_recorded", spe.Message}
	case models.Unwritable(err):
		// Nothing can be recorded until the disk is freed or fixed: a
		// "try again" 500 sent users round in circles.
		return &apiError{http.StatusServiceUnavailable, "storage_unavailable", storageUnavailableMessage}
	case errors.As(err, &ce):
		return &apiError{http.StatusConflict, "conflict", ce.Message}
	case errors.As(err, &ste) && errors.Is(err, orchestrator.ErrEngineUnavailable):
		// Forcing would fail the same way; the stop is recorded and
		// reconciliation finishes it once the engine answers.
		return &apiError{http.StatusServiceUnavailable, "engine_unavailable", "the Docker engine is not reachable, so the container could not be stopped yet; the stop is recorded and finishes by itself when the engine is back (the workbench shows stopping until then)"}
	case errors.As(err, &ste):
		return &apiError{http.StatusBadGateway, "stop_failed", models.Reasonf("%s; retry, or force the stop (force=true)", ste.Message)}
	case errors.As(err, &re) && re.Code == "quota_exceeded":
		return &apiError{http.StatusUnprocessableEntity, re.Code, re.Message}
	case errors.As(err, &re) && re.Code == "not_booker":
		return &apiError{http.StatusForbidden, re.Code, re.Message}
	case errors.As(err, &re):
		return &apiError{http.StatusConflict, re.Code, re.Message}
	case errors.As(err, &se):
		return &apiError{http.StatusConflict, "invalid_state", se.Message}
	case errors.Is(err, orchestrator.ErrEngineUnavailable):
		return &apiError{http.StatusServiceUnavailable, "engine_unavailable", "the Docker engine is not reachable, so workbenches cannot be launched or changed right now; try again in a minute, and tell an admin if it lasts"}
	case errors.As(err, &ae):
		return ae
	case errors.Is(err, errors.ErrUnsupported):
		// What the container runtime does not have (on Kubernetes: saving
		// as an image, image archives, pre-pulls): the runtime's words say
		// what to do instead (docs/kubernetes.md).
		return &apiError{http.StatusNotImplemented, "not_available", err.Error()}
	case errors.As(err, &ve) && ve.Taken && ve.Code != "":
		// A conflict of its own kind (a cap on credentials reached:
		// too_many_tokens): its code, and its message alone, which says
		// what to do rather than which field it sits beside on a form.
		return &apiError{http.StatusConflict, ve.Code, ve.Message}
	case errors.As(err, &ve) && ve.Taken:
		// Well formed but already in use: a conflict (SPEC §8), named by
		// its field in the message as a bad value is.
		return &apiError{http.StatusConflict, "conflict", ve.Error()}
	case errors.As(err, &ve) && ve.Code != "":
		return &apiError{http.StatusBadRequest, ve.Code, ve.Error()}
	case errors.As(err, &ve):
		return &apiError{http.StatusBadRequest, "invalid_" + ve.Field, ve.Error()}
	case errors.Is(err, models.ErrNotFound):
		return &apiError{http.StatusNotFound, "not_found", notFoundMessage}
	case errors.Is(err, models.ErrConflict):
		return &apiError{http.StatusConflict, "conflict", err.Error() + "; edit the existing one, or use another name"}
	default:
		return &apiError{http.StatusInternalServerError, "internal", "something went wrong on the server (it has been logged); try again, and tell an admin if it keeps happening"}
	}
}

// engineDownKube is engine_unavailable's message on Kubernetes.
const engineDownKube = "the Kubernetes API server is not reachable, so workbenches cannot be launched or changed right now; try again in a minute, and tell an admin if it lasts"

// classify is the package's classify, naming the runtime in use: on
// Kubernetes an unreachable "engine" is the cluster's API server.
func (h *Handler) classify(err error) *apiError {
	// /healthz tells it from now on, not at the next probe.
	h.store.NoteWriteRefused(err)
	e := classify(err)
	if e.Code == "engine_unavailable" && h.pool.OnKubernetes() {
		return &apiError{e.Status, e.Code, engineDownKube}
	}
	return e
}

// fail is the single error response of the portal: it logs, then answers
// JSON under /api/ and to a script (a request with an Authorization header:
// a CSV export fetched with a token got an HTML page or a redirect to the
// login form), and an error page elsewhere.
func (h *Handler) fail(c *gin.Context, err error) {
	e := h.classify(err)
	if e.Status >= 500 && proxy.ClientGone(c.Request, err) {
		// The client went away (its request was cancelled, so the store
		// or the engine gave up): no one reads an answer, and it is not
		// the portal's failure. Recorded as 499, logged at debug.
		h.log.Debug("request abandoned by the client", "method", c.Request.Method, "path", c.Request.URL.Path, "err", err)
		c.AbortWithStatus(proxy.StatusClientClosed)
		return
	}
	attrs := []any{"method", c.Request.Method, "path", c.Request.URL.Path, "status", e.Status, "code", e.Code, "err", err}
	if e.Status >= 500 {
		h.log.Error("request failed", attrs...)
	} else {
		h.log.Info("request refused", attrs...)
	}
	if isAPI(c) || c.GetHeader("Authorization") != "" {
		if e.Status == http.StatusUnauthorized {
			// RFC 9110 §15.5.2: a 401 names the scheme it wants.
			c.Header("WWW-Authenticate", `Bearer realm="workbench"`)
		}
		msg := e.Message
		if msg == notFoundMessage {
			msg = apiNotFoundMessage
		}
		detail := APIErrorDetail{Code: e.Code, Message: msg}
		if re := (*orchestrator.RefusedError)(nil); errors.As(err, &re) && re.Code == e.Code {
			// A script reads the way out of a storage refusal here, not
			// from the English message.
			detail.Limit, detail.WayOut, detail.CPUFlavor = re.Limit, re.WayOut, re.CPUFlavor
		}
		c.AbortWithStatusJSON(e.Status, APIError{Error: detail})
		return
	}
	if e.Status == http.StatusUnauthorized {
		c.Redirect(http.StatusSeeOther, "/login?next="+url.QueryEscape(safeNext(c.Request.URL.RequestURI())))
		c.Abort()
		return
	}
	msg := e.Message
	var ve *models.ValidationError
	if k, ok := pageMessages[msg]; ok {
		msg = i18n.T(c.Request.Context(), k)
	} else if errors.As(err, &ve) && (e.Code == "invalid_"+ve.Field || ve.Taken || ve.Code != "") {
		// A bad value in the address (?page=x, ?month=abc): the
		// parameter's name as typed, the message in the reader's language.
		msg = i18n.T(c.Request.Context(), "%s: %s", ve.Field, trcMsg(c, ve.Message))
	} else {
		// A refusal worded below (orchestrator, models), recognised by
		// its format (templates/i18n: Reason).
		msg = i18n.Reason(c.Request.Context(), msg)
	}
	h.render(c, e.Status, templates.ErrorPage(h.page(c, i18n.T(c.Request.Context(), "Error")), e.Status, msg))
	c.Abort()
}

// pageMessages are the generic messages an error page translates for its
// reader; the JSON API answers them, and every other message, in English
// (the API contract: clients go by the code; docs/api.md). The specific
// messages of the layers below (refusals, state errors) are translated by
// i18n.Reason; what it does not know (an engine's own error) stays as
// recorded.
var pageMessages = map[string]string{
	notFoundMessage:           i18n.Key("not found: it may have been deleted, or the link is out of date; go back to the list and pick it again"),
	forbiddenMessage:          i18n.Key("you are not allowed to do this; ask an admin if you need it"),
	methodNotAllowedMessage:   i18n.Key("this address takes a form's button or an API call, not a visit; go back to the page and use its button"),
	notFromPortalMessage:      i18n.Key(notFromPortalMessage),
	storageUnavailableMessage: i18n.Key("the portal cannot save changes right now: the disk of its database is full or read-only, and an administrator has to free or fix it (the portal's log says so); running workbenches keep running, and nothing you did was saved; try again later"),
	"something went wrong on the server (it has been logged); try again, and tell an admin if it keeps happening":                                      i18n.Key("something went wrong on the server (it has been logged); try again, and tell an admin if it keeps happening"),
	"the Docker engine is not reachable, so workbenches cannot be launched or changed right now; try again in a minute, and tell an admin if it lasts": i18n.Key("the Docker engine is not reachable, so workbenches cannot be launched or changed right now; try again in a minute, and tell an admin if it lasts"),
	engineDownKube: i18n.Key("the Kubernetes API server is not reachable, so workbenches cannot be launched or changed right now; try again in a minute, and tell an admin if it lasts"),
}

func isAPI(c *gin.Context) bool { return strings.HasPrefix(c.Request.URL.Path, "/api/") }

// refusalT is err's message as an error page shows it, for a flash: in the
// reader's language where it is a reason worded below the handlers
// (i18n.Reason), one of pageMessages or a validation message.
func (h *Handler) refusalT(c *gin.Context, err error) string {
	// A form's bad value reads without the API's field prefix
	// ("extra_ports: port 80: …"), in the reader's language like the
	// messages beside a form's fields.
	var ve *models.ValidationError
	if errors.As(err, &ve) {
		return trcMsg(c, ve.Message)
	}
	msg := h.classify(err).Message
	if k, ok := pageMessages[msg]; ok {
		return i18n.T(c.Request.Context(), k)
	}
	return i18n.Reason(c.Request.Context(), msg)
}
