package units

import (
	"math"
	"strconv"
	"strings"
)

// FormatSeconds prints a duration in seconds the way every gpusim report shows one: four
// significant digits and the largest unit that keeps the value at or above one, 212.3ms,
// 818.1µs, 1.204s, 12.00ns, "0s" for zero; NaN and infinities print as strconv does ("NaN",
// "+Inf"). It lives here, next to Time, so that packages below report (pipeline,
// train/...) and the commands print the same units as report.FormatValue, which calls it.
func FormatSeconds(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	a := math.Abs(v)
	switch {
	case a == 0:
		return "0s"
	case a < 1e-6:
		return Sig4(v*1e9) + "ns"
	case a < 1e-3:
		return Sig4(v*1e6) + "µs"
	case a < 1:
		return Sig4(v*1e3) + "ms"
	default:
		return Sig4(v) + "s"
	}
}

// Sig4 prints v with four significant digits and no exponent: 212.3, 1.204, 0.01234, 12345.
// FormatSeconds and report's byte and rate formatters share it.
func Sig4(v float64) string {
	if v == 0 {
		return "0"
	}
	digits := 3 - int(math.Floor(math.Log10(math.Abs(v))))
	if digits < 0 {
		digits = 0
	}
	s := strconv.FormatFloat(v, 'f', digits, 64)
	// Rounding can add a digit (999.95 -> 1000.0): drop the extra decimal.
	if digits > 0 && len(strings.TrimLeft(strings.Replace(s, ".", "", 1), "-0")) > 4 {
		s = strconv.FormatFloat(v, 'f', digits-1, 64)
	}
	return s
}
