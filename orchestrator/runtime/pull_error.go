package runtime

import (
	"strings"

	"github.com/distribution/reference"
)

// PullError is a failed pull, worded for the person who asked for the
// image: Error is one sentence that names the registry and what to do next;
// Details keeps the engine's raw error for whoever has to dig further.
// A user whose launch failed is told what to ask an admin for (Reason); an
// admin whose own pre-pull or image test failed is told what to do
// (AdminReason), not to ask an admin.
type PullError struct {
	Ref         string
	Registry    string // e.g. "quay.io", "docker.io"
	Reason      string // the plain sentence, for a user
	AdminReason string // the plain sentence, for an admin
	Details     string // the engine's error, verbatim
}

func (e *PullError) Error() string { return e.Reason }

// newPullError words the engine's error raw about pulling ref. The engine
// only gives text (its error chain), so the wording is chosen by what the
// text says: unreachable registry, unknown image, refused access, full disk.
func newPullError(ref, raw string) *PullError {
	raw = strings.TrimPrefix(raw, "Error response from daemon: ")
	reg := registryOf(ref)
	e := &PullError{Ref: ref, Registry: reg, Details: raw}
	low := strings.ToLower(raw)
	has := func(subs ...string) bool {
		for _, s := range subs {
			if strings.Contains(low, s) {
				return true
			}
		}
		return false
	}
	switch {
	case has("no space left"):
		e.Reason = reasonf("this server's disk is full, so %s cannot be downloaded — ask an admin to free disk space, then try again", ref)
		e.AdminReason = reasonf("this server's disk is full, so %s cannot be downloaded — free disk space on the engine's disk, then try again", ref)
	case has("manifest unknown", "not found", "does not exist", "no such image"):
		e.Reason = reasonf("the image %s does not exist on %s — ask an admin to correct the image reference in the catalog", ref, reg)
		e.AdminReason = reasonf("the image %s does not exist on %s — correct the image reference in the catalog", ref, reg)
	case has("unauthorized", "denied", "authentication required", "forbidden"):
		e.Reason = reasonf("%s refused to hand out %s (it needs credentials, or the name is wrong) — ask an admin to pre-pull the image or check its name", reg, ref)
		e.AdminReason = reasonf("%s refused to hand out %s (it needs credentials, or the name is wrong) — check its name, or load the image from an archive (workbench image load)", reg, ref)
	case has("dial tcp", "connection refused", "no such host", "i/o timeout", "timeout", "network is unreachable",
		"server misbehaving", "tls:", "x509:", "connection reset", "eof", "temporary failure in name resolution", "proxyconnect"):
		e.Reason = reasonf("this server cannot download from %s — ask an admin to pre-pull the image or configure a registry mirror", reg)
		e.AdminReason = reasonf("this server cannot download from %s — set a mirror for it under Admin → Registries, or load the image from an archive (workbench image load)", reg)
	case strings.HasPrefix(raw, "not a valid image reference"):
		e.Reason = reasonf("%s is not a valid image reference — ask an admin to correct it in the catalog", ref)
		e.AdminReason = reasonf("%s is not a valid image reference — correct it in the catalog", ref)
	default:
		e.Reason = reasonf("this server could not download %s from %s — ask an admin to pre-pull the image (the details below say why)", ref, reg)
		e.AdminReason = reasonf("this server could not download %s from %s (the details below say why)", ref, reg)
	}
	return e
}

// registryOf names the registry an image reference points to ("docker.io"
// for short names such as "ubuntu").
func registryOf(ref string) string {
	named, err := reference.ParseNormalizedNamed(ref)
	if err != nil {
		return reasonf("its registry")
	}
	return reference.Domain(named)
}
