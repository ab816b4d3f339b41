package report

import (
	"strings"

	"github.com/gpusim/gpusim/analysis"
)

// SpeedJSON is the speed and precision part of a run's JSON: the median step by op kind,
// XLA's compiles and the mixed-precision memory comparison.
type SpeedJSON struct {
	// BreakdownByKind splits the median step by op kind (device time), launch overhead,
	// input wait, sync, all-reduce and XLA compile; it sums to step_time_s.
	BreakdownByKind []ShareJSON `json:"breakdown_by_kind"`
	// XLACompiles counts the train step's XLA compilations (first step, new input shapes).
	XLACompiles     int     `json:"xla_compiles"`
	XLACompileTimeS float64 `json:"xla_compile_time_s"`
	// PrecisionMemorySaving compares a mixed-precision run's peak memory with float32.
	PrecisionMemorySaving *PrecisionSavingJSON `json:"precision_memory_saving,omitempty"`
}

// PrecisionSavingJSON is analysis.PrecisionSaving.
type PrecisionSavingJSON struct {
	Float32PeakBytes int64   `json:"float32_peak_bytes"`
	MixedPeakBytes   int64   `json:"mixed_peak_bytes"`
	Saving           float64 `json:"saving"`
	Float32Fixed     int64   `json:"float32_variables_and_slots_bytes"`
	InSeedBand       bool    `json:"within_30_40_percent"`
	Reason           string  `json:"reason,omitempty"`
}

func speedJSON(j *ResultJSON, res *analysis.Result) {
	j.BreakdownByKind = []ShareJSON{}
	for _, s := range res.ByKind {
		j.BreakdownByKind = append(j.BreakdownByKind, ShareJSON{Category: s.Category, Seconds: s.Seconds})
	}
	j.XLACompiles, j.XLACompileTimeS = res.XLACompiles, res.XLACompileTime
	if s := res.PrecisionSaving; s != nil {
		j.PrecisionMemorySaving = &PrecisionSavingJSON{Float32PeakBytes: s.Float32PeakBytes, MixedPeakBytes: s.MixedPeakBytes,
			Saving: s.Saving, Float32Fixed: s.FixedBytes, InSeedBand: s.InBand, Reason: s.Reason}
	}
}

// writeSpeedText prints the median step by op kind: the categories' compute split by what
// ran (conv, matmul, norm, cast, ...), with launch, input, sync, all-reduce and compile.
func writeSpeedText(p func(string, ...any), res *analysis.Result) {
	if len(res.ByKind) == 0 {
		return
	}
	var total float64
	for _, s := range res.ByKind {
		total += s.Seconds
	}
	p("\nMedian step (%s) by op kind\n", FormatValue(total, UnitSeconds))
	for _, s := range res.ByKind {
		frac := 0.0
		if total > 0 {
			frac = s.Seconds / total
		}
		p("  %-11s %10s %6s  %s\n", s.Category, FormatValue(s.Seconds, UnitSeconds), FormatValue(frac, UnitRatio), strings.Repeat("█", int(frac*40+0.5)))
	}
}
