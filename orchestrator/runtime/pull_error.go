package runtime

import (
	"regexp"
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
	kind        int    // what went wrong (pullDiskFull…)
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
	kind := pullOther
	switch {
	case has("no space left"):
		kind = pullDiskFull
	case has("manifest unknown", "not found", "does not exist", "no such image"):
		kind = pullNoSuchImage
	case has("unauthorized", "denied", "authentication required", "forbidden"):
		kind = pullRefused
	case has("dial tcp", "connection refused", "no such host", "i/o timeout", "timeout", "network is unreachable",
		"server misbehaving", "tls:", "x509:", "connection reset", "eof", "temporary failure in name resolution", "proxyconnect"):
		kind = pullUnreachable
	case strings.HasPrefix(raw, "not a valid image reference"):
		kind = pullBadRef
	}
	if strings.HasPrefix(ref, SavedImageRepo) {
		// Made on this engine, never downloaded: gone means removed here.
		kind = pullSavedGone
	}
	e.Reason, e.AdminReason = pullReasons(kind, ref, reg)
	e.kind = kind
	return e
}

// newMirrorPullError is newPullError for a pull through the admin's
// registry mirror (mirror: the reference pulled): a mirror that does not
// answer, or lacks the image, is what to check — "configure a registry
// mirror" about a registry that has one sent the admin the wrong way.
func newMirrorPullError(ref, mirror, raw string) *PullError {
	e := newPullError(ref, mirrorNote(raw, mirror, true))
	switch e.kind {
	case pullDiskFull, pullBadRef, pullSavedGone:
		return e
	}
	e.kind = pullMirror
	e.Registry = registryOf(mirror)
	e.Reason, e.AdminReason = pullReasons(pullMirror, ref, e.Registry)
	return e
}

// The kinds of failed pull (pullReasons words each).
const (
	pullDiskFull = iota
	pullNoSuchImage
	pullRefused
	pullUnreachable
	pullBadRef
	pullOther
	pullSavedGone
	pullMirror
	pullKinds
)

// SavedImageRepo begins the engine's name of every saved image
// (orchestrator.savedImageRef): no registry has them.
const SavedImageRepo = "workbench-saved/"

// pullReasons words a failed pull of ref from reg of the given kind for a
// user (what to ask an admin for) and for an admin (what to do).
func pullReasons(kind int, ref, reg string) (user, admin string) {
	switch kind {
	case pullDiskFull:
		return reasonf("this server's disk is full, so %s cannot be downloaded — ask an admin to free disk space, then try again", ref),
			reasonf("this server's disk is full, so %s cannot be downloaded — free disk space on the engine's disk, then try again", ref)
	case pullNoSuchImage:
		return reasonf("the image %s does not exist on %s — ask an admin to correct the image reference in the catalog", ref, reg),
			reasonf("the image %s does not exist on %s — correct the image reference in the catalog", ref, reg)
	case pullRefused:
		return reasonf("%s refused to hand out %s (it needs credentials, or the name is wrong) — ask an admin to pre-pull the image or check its name", reg, ref),
			reasonf("%s refused to hand out %s (it needs credentials, or the name is wrong) — check its name, or load the image from an archive (workbench image load)", reg, ref)
	case pullUnreachable:
		return reasonf("this server cannot download from %s — ask an admin to pre-pull the image or configure a registry mirror", reg),
			reasonf("this server cannot download from %s — set a mirror for it under Admin → Registries, or load the image from an archive (workbench image load)", reg)
	case pullBadRef:
		return reasonf("%s is not a valid image reference — ask an admin to correct it in the catalog", ref),
			reasonf("%s is not a valid image reference — correct it in the catalog", ref)
	case pullMirror:
		return reasonf("this server could not download %s through the registry mirror %s — ask an admin to check that mirror (Admin → Registries)", ref, reg),
			reasonf("this server could not download %s through the registry mirror %s — check or remove that mirror under Admin → Registries (the details below say what it answered)", ref, reg)
	case pullSavedGone:
		return reasonf("the saved image %s is no longer on this server (it was removed from the engine) — its owner can save a workbench again, or delete this image", ref),
			reasonf("the saved image %s is no longer on this server (it was removed from the engine) — its owner can save a workbench again, or delete this image", ref)
	}
	return reasonf("this server could not download %s from %s — ask an admin to pre-pull the image (the details below say why)", ref, reg),
		reasonf("this server could not download %s from %s (the details below say why)", ref, reg)
}

// Stand-ins for the reference and the registry, to turn a user's wording
// back into a pattern (pullReasonPatterns).
const (
	refMark = "\x00ref\x00"
	regMark = "\x00reg\x00"
)

// pullReasonPatterns match each kind's user wording as a workbench's
// stored reason has it (made a sentence: a capital first letter unless it
// starts with a name, a full stop), capturing the reference and the
// registry.
var pullReasonPatterns = func() (res [pullKinds]*regexp.Regexp) {
	for kind := range res {
		user, _ := pullReasons(kind, refMark, regMark)
		p := regexp.QuoteMeta(user)
		p = strings.Replace(p, regexp.QuoteMeta(refMark), "(?P<ref>.+?)", 1)
		p = strings.Replace(p, regexp.QuoteMeta(regMark), "(?P<reg>.+?)", 1)
		if r := p[0]; 'a' <= r && r <= 'z' {
			p = "[" + string(r) + string(r-'a'+'A') + "]" + p[1:]
		}
		res[kind] = regexp.MustCompile("^" + p + `\.?$`)
	}
	return res
}()

// AdminWording is a failed pull's reason, as a user's workbench stored it
// ("… — ask an admin to correct the image reference in the catalog."),
// worded for the administrator reading it (what to do, not whom to ask);
// any other reason is returned as it is.
func AdminWording(reason string) string {
	for kind, re := range pullReasonPatterns {
		m := re.FindStringSubmatch(reason)
		if m == nil {
			continue
		}
		ref, reg := "", ""
		if i := re.SubexpIndex("ref"); i > 0 {
			ref = m[i]
		}
		if i := re.SubexpIndex("reg"); i > 0 {
			reg = m[i]
		}
		_, admin := pullReasons(kind, ref, reg)
		if r := reason[0]; 'A' <= r && r <= 'Z' && admin[0] != r {
			admin = strings.ToUpper(admin[:1]) + admin[1:] // made a sentence
		}
		if strings.HasSuffix(reason, ".") && !strings.HasSuffix(admin, ".") {
			admin += "."
		}
		return admin
	}
	return reason
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
