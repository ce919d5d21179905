package models

import (
	"regexp"
	"strings"

	"github.com/distribution/reference"
)

// ValidateImageRef checks ref against the distribution reference grammar.
// The library says "invalid reference format" for nearly every mistake,
// in English on every page; the admin who typed the reference needs to
// know which part is wrong, in their language (the messages are catalog
// keys, handlers/i18n_admin.go), so the common mistakes are named here.
func ValidateImageRef(ref string) error {
	if ref == "" {
		return invalid("image", "is required")
	}
	if _, err := reference.ParseNormalizedNamed(ref); err != nil {
		return imageRefProblem(ref)
	}
	return nil
}

var (
	tagRe    = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)
	digestRe = regexp.MustCompile(`^[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[0-9a-fA-F]{32,}$`)
)

// imageRefProblem names what is wrong with ref, which the reference
// grammar refused: one of a fixed set of messages (plus the corrected
// reference where there is one), never the library's words.
func imageRefProblem(ref string) error {
	if strings.ContainsAny(ref, " \t\r\n") {
		return invalid("image", "is not a valid image reference: it has a space in it")
	}
	if i := strings.Index(ref, "://"); i >= 0 {
		return invalid("image", "is not a valid image reference: leave out %s, write registry/name:tag", ref[:i+3])
	}
	name, digest, hasDigest := strings.Cut(ref, "@")
	if hasDigest && !digestRe.MatchString(digest) {
		return invalid("image", "is not a valid image reference: the digest after @ must be sha256: and 64 hexadecimal digits")
	}
	tag := ""
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		name, tag = name[:i], name[i+1:]
		if !tagRe.MatchString(tag) || strings.Contains(name[strings.LastIndex(name, "/")+1:], ":") {
			return invalid("image", "is not a valid image reference: the tag after : holds letters, digits, _ . - (at most 128, not starting with . or -)")
		}
	}
	if lower := strings.ToLower(name); lower != name {
		fixed := lower
		if tag != "" {
			fixed += ":" + tag
		}
		if hasDigest {
			fixed += "@" + digest
		}
		if _, err := reference.ParseNormalizedNamed(fixed); err == nil {
			return invalid("image", "is not a valid image reference: the name is lowercase only (%s)", fixed)
		}
	}
	return invalid("image", "is not a valid image reference: write registry/name:tag, e.g. quay.io/jupyter/base-notebook:latest")
}
