package models

import (
	"errors"
	"testing"
)

// One slice is the whole GPU under another name: refused with the bounds
// that are allowed, like a negative or too large count.
func TestSharedSettingRefusesOneSlice(t *testing.T) {
	for _, n := range []int{-1, 1, MaxSharedSlices + 1} {
		var ve *ValidationError
		if err := (SharedSetting{Slices: n}).Validate(); !errors.As(err, &ve) || ve.Field != "slices" ||
			ve.Message != "must be 0 (not shared) or between 2 and 64" {
			t.Errorf("%d slices: %v, want refused", n, err)
		}
	}
	for _, n := range []int{0, 2, MaxSharedSlices} {
		if err := (SharedSetting{Slices: n}).Validate(); err != nil {
			t.Errorf("%d slices: %v", n, err)
		}
	}
}
