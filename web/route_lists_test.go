package web_test

// The attack suite's route lists, checked against the route table itself
// so they cannot go stale: a new JSON endpoint must be fuzzed
// (fuzzEndpoints, fuzz_api_test.go) and a new admin change must be in the
// sudo test's table (sudoForms and sudoAPIs, attack_origin_test.go).

import (
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"workbench/handlers"
)

// bodylessAPIRoutes are the unsafe /api/v1 routes that read no JSON body
// (the id in the path is all they take), so there is nothing to fuzz.
// TestRouteListsAreComplete checks the claim: a handler listed here that
// decodes JSON fails it.
var bodylessAPIRoutes = []string{
	"DELETE /api/v1/reservations/:id",                        // cancel one's booking
	"DELETE /api/v1/workbenches/:id",                         // delete a workbench
	"POST /api/v1/workbenches/:id/stop",                      // lifecycle verbs
	"POST /api/v1/workbenches/:id/start",                     // lifecycle verbs
	"POST /api/v1/workbenches/:id/restart-gpus",              // lifecycle verbs
	"POST /api/v1/workbenches/:id/extend",                    // extend by the flavor's step
	"DELETE /api/v1/images/:id",                              // delete a saved image
	"DELETE /api/v1/workbenches/:id/tokens/:tid",             // revoke a workbench token
	"DELETE /api/v1/tokens/:id",                              // revoke an API token
	"DELETE /api/v1/ssh-keys/:id",                            // remove an SSH key
	"POST /api/v1/ssh-keys/:id/verify-code",                  // a new code for a pending key
	"DELETE /api/v1/gpu-watches/:id",                         // stop watching a model
	"POST /api/v1/images/:id/test",                           // start an image check
	"POST /api/v1/admin/workbenches/:id/stop",                // an admin stops anyone's
	"POST /api/v1/admin/queue/:id/cancel",                    // queue verbs
	"POST /api/v1/admin/queue/:id/boost",                     // queue verbs
	"POST /api/v1/admin/images/:id/promote",                  // a saved image into the catalog
	"POST /api/v1/admin/images/load",                         // an image archive (a file upload, not JSON)
	"DELETE /api/v1/admin/users/:id/login-lock",              // clear a login lock
	"DELETE /api/v1/admin/users/:id",                         // delete an account (?confirm=<username>)
	"DELETE /api/v1/admin/cloud-prices/:id",                  // remove a cloud price
	"DELETE /api/v1/admin/groups/:id",                        // delete a group
	"PUT /api/v1/admin/groups/:id/members/:username",         // add a member
	"DELETE /api/v1/admin/groups/:id/members/:username",      // remove a member
	"PUT /api/v1/admin/groups/:id/members/:username/lead",    // make a member lead
	"DELETE /api/v1/admin/groups/:id/members/:username/lead", // no longer lead
}

// routeChain is one route of the table with the names of its whole handler
// chain (middleware first, the handler last).
type routeChain struct {
	method, path string
	chain        []string
}

func (r routeChain) key() string { return r.method + " " + r.path }

// has reports whether the chain runs the Handler method name.
func (r routeChain) has(name string) bool {
	return slices.ContainsFunc(r.chain, func(n string) bool { return funcName(n) == name })
}

// funcName is the method or function name of a handler's runtime name
// ("workbench/handlers.(*Handler).apiLaunch-fm" → "apiLaunch").
func funcName(runtime string) string {
	return strings.TrimSuffix(runtime[strings.LastIndex(runtime, ".")+1:], "-fm")
}

// portalRoutes walks the portal's route table (handlers.Routes on a fresh
// engine) and asks each route for its whole handler chain: a first
// middleware records the chain and stops, so no handler runs.
func portalRoutes(t *testing.T) []routeChain {
	t.Helper()
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	var chain []string
	var full string
	r.Use(func(c *gin.Context) { chain, full = c.HandlerNames(), c.FullPath(); c.Abort() })
	new(handlers.Handler).Routes(r)
	param := regexp.MustCompile(`[:*][^/]*`)
	var out []routeChain
	for _, ri := range r.Routes() {
		chain, full = nil, ""
		r.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(ri.Method, param.ReplaceAllString(ri.Path, "p1"), nil))
		if full != ri.Path {
			t.Fatalf("%s %s: a request for it reached %q", ri.Method, ri.Path, full)
		}
		out = append(out, routeChain{ri.Method, ri.Path, chain[1:]})
	}
	return out
}

// routeOf is the route pattern a concrete path of a list is served by:
// the pattern whose segments match, a static segment winning over a
// parameter as in gin. "" when none does.
func routeOf(routes []routeChain, method, path string) string {
	segs := strings.Split(path, "/")
	best, bestRank := "", ""
	for _, r := range routes {
		ps := strings.Split(r.path, "/")
		if r.method != method || len(ps) != len(segs) {
			continue
		}
		rank, ok := "", true
		for i, p := range ps {
			switch {
			case p == segs[i]:
				rank += "1"
			case strings.HasPrefix(p, ":") && segs[i] != "":
				rank += "0"
			default:
				ok = false
			}
		}
		if ok && rank > bestRank {
			best, bestRank = r.path, rank
		}
	}
	return best
}

var unsafeMethods = []string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

// TestRouteListsAreComplete: every unsafe /api/v1 route that decodes a
// JSON body is in fuzzEndpoints (or, reading no body, in
// bodylessAPIRoutes); every unsafe admin route and every route behind
// requireSudo is in the sudo test's table; and every entry of those lists
// names a route that exists.
func TestRouteListsAreComplete(t *testing.T) {
	routes := portalRoutes(t)
	decodes := jsonDecodingFuncs(t)

	fuzzed := map[string]bool{}
	for _, e := range fuzzEndpoints {
		r := routeOf(routes, e.method, e.path)
		if r == "" {
			t.Errorf("fuzzEndpoints: %s %s is no route of the table (handlers/routes.go)", e.method, e.path)
		}
		fuzzed[e.method+" "+r] = true
	}
	for _, k := range bodylessAPIRoutes {
		i := slices.IndexFunc(routes, func(r routeChain) bool { return r.key() == k })
		switch {
		case i < 0:
			t.Errorf("bodylessAPIRoutes: %s is no route of the table (handlers/routes.go)", k)
		case k == "POST /api/v1/admin/images/load": // a file upload: its body is the archive
		case !routes[i].has("noBody"):
			t.Errorf("%s reads no body but a body sent to it is not refused: add h.noBody to its route (handlers/routes.go)", k)
		}
	}
	inSudoTable := map[string]bool{}
	for _, p := range sudoForms {
		r := routeOf(routes, http.MethodPost, p)
		if r == "" {
			t.Errorf("sudoForms: POST %s is no route of the table", p)
		}
		inSudoTable["POST "+r] = true
	}
	for _, a := range sudoAPIs {
		r := routeOf(routes, a.method, a.path)
		if r == "" {
			t.Errorf("sudoAPIs: %s %s is no route of the table", a.method, a.path)
		}
		inSudoTable[a.method+" "+r] = true
	}

	for _, r := range routes {
		if !slices.Contains(unsafeMethods, r.method) {
			continue
		}
		handler := funcName(r.chain[len(r.chain)-1])
		if strings.HasPrefix(r.path, "/api/v1/") {
			bodyless := slices.Contains(bodylessAPIRoutes, r.key())
			switch {
			case bodyless && decodes[handler]:
				t.Errorf("%s is listed in bodylessAPIRoutes but its handler %s decodes a JSON body: move it to fuzzEndpoints (web/fuzz_api_test.go) with a seed it accepts", r.key(), handler)
			case !bodyless && !fuzzed[r.key()] && decodes[handler]:
				t.Errorf("%s decodes a JSON body (%s) but is not fuzzed: add it to fuzzEndpoints in web/fuzz_api_test.go with a seed it accepts", r.key(), handler)
			case !bodyless && !fuzzed[r.key()]:
				t.Errorf("%s is neither fuzzed nor listed as reading no body: add it to fuzzEndpoints (web/fuzz_api_test.go) or, with a comment, to bodylessAPIRoutes (web/route_lists_test.go)", r.key())
			}
		}
		admin := r.has("requireAdmin") || strings.HasPrefix(r.path, "/admin/") || strings.HasPrefix(r.path, "/api/v1/admin/")
		if admin && !r.has("requireSudo") {
			t.Errorf("%s is an admin change without requireSudo: put it in a group with h.requireSudo (handlers/routes.go)", r.key())
		}
		if (admin || r.has("requireSudo")) && !inSudoTable[r.key()] {
			list := "sudoAPIs"
			if !strings.HasPrefix(r.path, "/api/") {
				list = "sudoForms"
			}
			t.Errorf("%s needs a password confirmation but TestEveryAdminMutationNeedsSudo does not try it: add it to %s in web/attack_origin_test.go", r.key(), list)
		}
	}
}

// jsonDecodingFuncs reads the handlers package's source and returns the
// functions and methods that decode a JSON request body, directly
// (bindJSON, gin's ShouldBindJSON and friends, json.NewDecoder) or through
// a function that does.
func jsonDecodingFuncs(t *testing.T) map[string]bool {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join("..", "handlers", "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("handlers sources: %v", err)
	}
	direct := map[string]bool{"bindJSON": true, "ShouldBindJSON": true, "BindJSON": true, "ShouldBind": true, "Bind": true,
		"ShouldBindWith": true, "ShouldBindBodyWith": true, "ShouldBindBodyWithJSON": true, "NewDecoder": true}
	calls := map[string][]string{}
	decodes := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range af.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			name := fd.Name.Name
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				ce, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				var callee string
				switch fn := ce.Fun.(type) {
				case *ast.Ident:
					callee = fn.Name
				case *ast.SelectorExpr:
					callee = fn.Sel.Name
				}
				if direct[callee] {
					decodes[name] = true
				}
				calls[name] = append(calls[name], callee)
				return true
			})
		}
	}
	for changed := true; changed; {
		changed = false
		for fn, cs := range calls {
			if decodes[fn] {
				continue
			}
			if slices.ContainsFunc(cs, func(c string) bool { return decodes[c] }) {
				decodes[fn], changed = true, true
			}
		}
	}
	return decodes
}
