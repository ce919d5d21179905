package handlers

import (
	"encoding/json"
	"errors"
	"net/http"

	"workbench/models"
)

// AdminTokenOnly serves next only to requests carrying an admin's API token
// (Authorization: Bearer …); no session cookie counts. It guards listeners
// outside the portal's router, such as /debug/pprof on its own address.
func (h *Handler) AdminTokenOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		secret, ok := BearerSecret(r.Header.Get("Authorization"))
		if !ok {
			adminTokenRefusal(w, http.StatusUnauthorized, "unauthorized", "send an admin's API token: Authorization: Bearer <token>")
			return
		}
		u, err := h.store.UserByToken(r.Context(), secret)
		switch {
		case errors.Is(err, models.ErrBadToken):
			adminTokenRefusal(w, http.StatusUnauthorized, "invalid_token", err.Error())
		case err != nil:
			h.log.Warn("admin token check", "path", r.URL.Path, "err", err)
			adminTokenRefusal(w, http.StatusServiceUnavailable, "store_unavailable", "the portal's database did not answer")
		case !u.IsAdmin():
			adminTokenRefusal(w, http.StatusForbidden, "forbidden", "admins only")
		default:
			next.ServeHTTP(w, r)
		}
	})
}

func adminTokenRefusal(w http.ResponseWriter, status int, code, msg string) {
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="workbench"`)
	}
	writeJSONError(w, status, code, msg)
}

// writeJSONError answers the API's error shape outside gin.
func writeJSONError(w http.ResponseWriter, status int, code, msg string) {
	b, _ := json.Marshal(map[string]any{"error": map[string]string{"code": code, "message": msg}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
