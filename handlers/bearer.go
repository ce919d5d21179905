package handlers

import (
	"strings"
)

// BearerSecret is the credential of an "Authorization: Bearer <secret>"
// header. The scheme is matched without regard to case, as RFC 9110 §11.1
// says of every authentication scheme ("bearer x" is the same header).
func BearerSecret(authz string) (string, bool) {
	scheme, secret, ok := strings.Cut(strings.TrimSpace(authz), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.TrimSpace(secret), true
}
