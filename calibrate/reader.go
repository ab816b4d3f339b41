package calibrate

import "errors"

// ErrNoDriver says that NVML could not be loaded or initialized: no NVIDIA driver on this machine.
var ErrNoDriver = errors.New("no NVIDIA driver: NVML (libnvidia-ml.so.1) could not be loaded")

// Reader is what calibrate needs of NVML. [OpenNVML] implements it; tests may fake it.
type Reader interface {
	// Inventory describes every visible GPU and the driver.
	Inventory() (*Inventory, error)
	// Sample reads the dynamic state of every GPU once.
	Sample() ([]DeviceSample, error)
	// Close releases NVML.
	Close() error
}
