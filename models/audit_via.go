package models

import (
	"context"
	"fmt"
)

// auditViaKey carries, in a request's context, how the request was
// authenticated when that is not a browser session.
type auditViaKey struct{}

// WithAuditVia marks ctx as coming through via (see TokenVia): every audit
// row written with it, by a handler or by a service it calls, records it,
// so no caller has to pass it along.
func WithAuditVia(ctx context.Context, via string) context.Context {
	return context.WithValue(ctx, auditViaKey{}, via)
}

// auditVia is what WithAuditVia put in ctx, or "".
func auditVia(ctx context.Context) string {
	v, _ := ctx.Value(auditViaKey{}).(string)
	return v
}

// TokenVia is how an audit row names the API token a request came with:
// its id (which stays unique after a revocation) and its name.
func TokenVia(t *APIToken) string {
	return fmt.Sprintf("token #%d %s", t.ID, t.Name)
}
