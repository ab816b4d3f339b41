//go:build !cgo

package calibrate

import (
	"errors"
	"testing"
)

func TestOpenSystemWithoutCgo(t *testing.T) {
	if _, err := OpenSystem(""); !errors.Is(err, ErrNoDriver) {
		t.Errorf("OpenSystem without cgo = %v, want ErrNoDriver", err)
	}
}
