package models

import (
	"errors"
	"strings"
	"testing"
)

// An admin's mistyped image reference is named by what is wrong with it,
// in the portal's own words (catalog keys), never the library's "invalid
// reference format".
func TestImageRefProblemsAreNamed(t *testing.T) {
	for _, tc := range []struct{ ref, want string }{
		{"Quay.io/Jupyter/Base-Notebook:Latest", "the name is lowercase only (quay.io/jupyter/base-notebook:Latest)"},
		{"PyTorch", "the name is lowercase only (pytorch)"},
		{"quay.io/jupyter/base notebook", "it has a space in it"},
		{"https://quay.io/jupyter/base-notebook:latest", "leave out https://, write registry/name:tag"},
		{"quay.io/jupyter/base-notebook:-latest", "the tag after : holds letters, digits, _ . - (at most 128, not starting with . or -)"},
		{"quay.io/jupyter/base-notebook:a:b", "the tag after : holds letters, digits, _ . - (at most 128, not starting with . or -)"},
		{"quay.io/jupyter/base-notebook@sha256:1234", "the digest after @ must be sha256: and 64 hexadecimal digits"},
		{"quay.io//base-notebook", "write registry/name:tag, e.g. quay.io/jupyter/base-notebook:latest"},
	} {
		err := ValidateImageRef(tc.ref)
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != "image" {
			t.Errorf("%q: error %v, want a ValidationError on image", tc.ref, err)
			continue
		}
		if want := "is not a valid image reference: " + tc.want; ve.Message != want {
			t.Errorf("%q:\n got %q\nwant %q", tc.ref, ve.Message, want)
		}
		if strings.Contains(ve.Message, "invalid reference format") {
			t.Errorf("%q: the library's words reach the admin: %q", tc.ref, ve.Message)
		}
	}
	for _, ok := range []string{"quay.io/jupyter/base-notebook:latest", "pytorch", "localhost:5000/x/y:1.0",
		"nvcr.io/nvidia/pytorch@sha256:" + strings.Repeat("ab", 32)} {
		if err := ValidateImageRef(ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
}
