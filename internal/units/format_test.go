package units

import (
	"math"
	"testing"
)

func TestFormatSeconds(t *testing.T) {
	for _, tc := range []struct {
		in   float64
		want string
	}{
		{0, "0s"},
		{0.5839, "583.9ms"},
		{818.1e-6, "818.1µs"},
		{12e-9, "12.00ns"},
		{1.2041, "1.204s"},
		{125, "125.0s"},
		{12345, "12345s"},
		{0.99995, "1000ms"}, // rounding adds a digit: one decimal dropped, unit kept
		{-0.0344, "-34.40ms"},
		{math.NaN(), "NaN"},
		{math.Inf(1), "+Inf"},
	} {
		if got := FormatSeconds(tc.in); got != tc.want {
			t.Errorf("FormatSeconds(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestSig4(t *testing.T) {
	for _, tc := range []struct {
		in   float64
		want string
	}{
		{0, "0"},
		{212.34, "212.3"},
		{0.012341, "0.01234"},
		{999.95, "1000"},
		{-3.5, "-3.500"},
	} {
		if got := Sig4(tc.in); got != tc.want {
			t.Errorf("Sig4(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
