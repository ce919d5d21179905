package models

import (
	"errors"
	"testing"
)

// An image checks every field, so a form can show them all: its name, its
// image reference and its user at once. errors.As still finds the first,
// so a caller that shows one (the API) names the first field at fault.
func TestImageValidateNamesEveryBadField(t *testing.T) {
	img := &Image{Name: "", Image: "", RunAsUser: "root", StartCommand: "jupyter lab --port={port} --ServerApp.base_url={base_url} --IdentityProvider.token={token}"}
	err := img.Validate()
	var got []string
	for _, ve := range FieldErrors(err) {
		got = append(got, ve.Field)
	}
	if len(got) != 3 || got[0] != "name" || got[1] != "image" || got[2] != "run_as_user" {
		t.Fatalf("fields at fault %v (%v), want name, image, run_as_user", got, err)
	}
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Field != "name" {
		t.Fatalf("errors.As finds %v, want the name's error first", ve)
	}
	if FieldErrors(errors.New("disk full")) != nil {
		t.Fatal("FieldErrors of a non-validation error lists something")
	}
}
