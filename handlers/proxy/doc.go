// Package proxy is the portal's authenticated reverse proxy for
// /wb/{id}/… to a workbench's Jupyter server (SPEC §4, path mode).
//
// Jupyter runs with base_url /wb/{id}/, so paths are forwarded unchanged.
// The proxy is where the portal's trust boundary is enforced: it checks the
// owner (through Options.Resolve), does the CSRF check that Jupyter skips for
// token-authenticated requests, injects the workbench token, and keeps the
// portal's session cookie away from the notebook in both directions.
package proxy
