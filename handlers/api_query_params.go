package handlers

import (
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"
)

// apiQueryParams lists, per API route (method and pattern), the query
// parameters its handler reads. Any other is refused with 400
// unknown_parameter naming it, as the README promises: /api/v1/usage?form=…
// answered the month's figures and /api/v1/workbenches?state=running every
// workbench, and the caller never learnt the parameter was ignored. A route
// not listed reads none.
var apiQueryParams = map[string][]string{
	"GET /api/v1/workbenches":               {"all", "group", "limit", "cursor"},
	"GET /api/v1/admin/users":               {"limit", "cursor"},
	"GET /api/v1/notifications":             {"limit", "cursor"},
	"GET /api/v1/workbenches/:id/logs":      {"tail", "follow"},
	"POST /api/v1/workbenches/:id/start":    {"mode", "queue"},
	"POST /api/v1/workbenches/:id/stop":     {"force"},
	"DELETE /api/v1/workbenches/:id":        {"delete_data"},
	"DELETE /api/v1/admin/users/:id":        {"confirm"},
	"GET /api/v1/usage":                     {"from", "to", "group_by", "user"},
	"GET /api/v1/usage/lines":               {"month", "user", "limit", "cursor"},
	"GET /api/v1/admin/utilisation":         {"bucket", "from", "to"},
	"GET /api/v1/admin/reservations/unused": {"from", "to", "format"},
	"GET /api/v1/admin/simulate":            {"days", "engine", "policy", "mig", "model", "gpus", "shared_gpus", "slices"},
}

// apiQueryLists are the parameters a route reads as lists (given once per
// value); any other is refused when given twice.
var apiQueryLists = map[string][]string{
	"GET /api/v1/admin/simulate": {"policy", "mig"},
}

// checkAPIQuery is the API groups' middleware enforcing apiQueryParams.
func (h *Handler) checkAPIQuery(c *gin.Context) {
	if c.Request.URL.RawQuery == "" {
		return
	}
	method := c.Request.Method
	if method == http.MethodHead {
		method = http.MethodGet
	}
	route := method + " " + c.FullPath()
	allowed := apiQueryParams[route]
	q := c.Request.URL.Query()
	unknown, twice := strayParams(q, allowed, apiQueryLists[route])
	switch {
	case unknown != "":
		takes := "it takes none"
		if len(allowed) > 0 {
			takes = "it takes: " + strings.Join(allowed, ", ")
		}
		h.fail(c, newError(http.StatusBadRequest, "unknown_parameter", unknown+": is not a parameter of this endpoint ("+takes+")"))
		c.Abort()
	case twice != "":
		h.fail(c, newError(http.StatusBadRequest, "invalid_"+twice, twice+": "+givenTwice))
		c.Abort()
	default:
		if empty := emptyParam(q); empty != "" {
			h.fail(c, newError(http.StatusBadRequest, "invalid_"+empty, empty+": "+givenEmpty))
			c.Abort()
		}
	}
}

// givenTwice refuses a parameter that an address gives more than once.
const givenTwice = "is given more than once; give it once"

// givenEmpty refuses a parameter given with no value (?month=, ?user=,
// ?limit=). The API reads an empty value as no value nowhere: ?month=
// answered this month and ?user= everyone's usage, so a script whose
// variable was unset got another month's, or the whole lab's, figures as
// if they were the ones it asked for, while ?limit= and ?cursor= were
// refused. One rule for every parameter (docs/ux-choices.md, session 52).
// The pages keep reading an empty field as not given: forms send them.
const givenEmpty = "is given empty; give a value, or leave the parameter out for its default"

// emptyParam names, in q, the first (sorted) parameter given with an
// empty value.
func emptyParam(q url.Values) string {
	for _, k := range slices.Sorted(maps.Keys(q)) {
		if slices.Contains(q[k], "") {
			return k
		}
	}
	return ""
}

// queryBool reads an on/off query parameter: absent, "true" or "false".
// Anything else is refused with 400 invalid_<name> rather than read as
// "off" (?force=1 stopped gracefully, ?queue=yes refused instead of
// queueing, and neither said so).
func (h *Handler) queryBool(c *gin.Context, name string) (on, ok bool) {
	switch c.Query(name) {
	case "", "false":
		return false, true
	case "true":
		return true, true
	}
	h.fail(c, newError(http.StatusBadRequest, "invalid_"+name, name+": must be true or false"))
	return false, false
}
