//go:build !cgo

package calibrate

import "fmt"

// OpenSystem would open the machine's NVML, which go-nvml reaches through cgo: this gpusim was
// built without it (CGO_ENABLED=0 or no C compiler), so every machine looks driverless.
func OpenSystem(libraryPath string) (Reader, error) {
	return nil, fmt.Errorf("%w (this gpusim was built without cgo, which NVML needs: rebuild with CGO_ENABLED=1)", ErrNoDriver)
}
