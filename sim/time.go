package sim

import (
	"fmt"
	"math"
	"time"
)

// Time is virtual time in nanoseconds since the start of the simulation.
type Time int64

// Units of virtual time.
const (
	Nanosecond  Time = 1
	Microsecond      = 1000 * Nanosecond
	Millisecond      = 1000 * Microsecond
	Second           = 1000 * Millisecond
)

// Seconds returns t in seconds.
func (t Time) Seconds() float64 { return float64(t) / float64(Second) }

// Duration converts t to a time.Duration (both count nanoseconds).
func (t Time) Duration() time.Duration { return time.Duration(t) }

// String formats t the way time.Duration does ("1.5ms").
func (t Time) String() string { return time.Duration(t).String() }

// FromSeconds converts seconds to Time, rounding to the nearest nanosecond. It panics on NaN,
// infinities and values outside the int64 range, which are programmer mistakes in a cost model.
func FromSeconds(s float64) Time {
	ns := math.Round(s * float64(Second))
	if math.IsNaN(ns) || ns > math.MaxInt64 || ns < math.MinInt64 {
		panic(fmt.Sprintf("sim: FromSeconds(%v) out of range", s))
	}
	return Time(ns)
}

// FromDuration converts a time.Duration to Time.
func FromDuration(d time.Duration) Time { return Time(d) }
