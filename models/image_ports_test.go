package models

import (
	"errors"
	"slices"
	"testing"
)

func TestImageExtraPortsValidation(t *testing.T) {
	base := func(ports ...int) *Image {
		return &Image{Name: "x", Image: "busybox:1", StartCommand: "jupyter lab --port={port} --ServerApp.base_url={base_url} --IdentityProvider.token={token}", ExtraPorts: ports}
	}
	for _, bad := range [][]int{{80}, {1023}, {65536}, {JupyterPort}, {6006, 6006}, {1025, 1026, 1027, 1028, 1029, 1030, 1031, 1032, 1033}} {
		err := base(bad...).Validate()
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != "extra_ports" {
			t.Errorf("ports %v: %v; want an extra_ports error", bad, err)
		}
	}
	img := base(8050, 6006)
	if err := img.Validate(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(img.ExtraPorts, []int{6006, 8050}) || !img.HasExtraPort(6006) || img.HasExtraPort(7000) {
		t.Fatalf("ports: %v", img.ExtraPorts)
	}
	if got, err := ParsePortList("6006, 8050"); err != nil || !slices.Equal(got, []int{6006, 8050}) {
		t.Fatalf("parse: %v %v", got, err)
	}
	if _, err := ParsePortList("6006, tensorboard"); err == nil {
		t.Fatal("a word was taken for a port")
	}
}
