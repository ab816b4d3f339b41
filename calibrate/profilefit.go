package calibrate

import (
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/gpusim/gpusim/calibrate/xprof"
	"github.com/gpusim/gpusim/hw"
	"github.com/gpusim/gpusim/internal/units"
)

// Fitting to a profiler trace. A profile (xprof.Load) measures more than a step time: the
// device time per step of each group of kernels (convolutions, GEMMs, memory-bound work), so
// one profile observes as many quantities as it has groups, and a fit of two profiles can
// tell the efficiencies of the convolutions, the GEMMs and the memory-bound kernels apart
// from the host's costs, which the step time less the kernels shows.
//
// ProfileObservations makes one Observation per quantity (the marked step; each group), all
// on one simulator run per parameter set (MemoPredictor): leave-one-out cross-validation
// then leaves out one quantity at a time, so that a parameter two profiles identify is
// checked against a quantity its fit did not see, not against a whole model.

// MinGroupShare is the least share of a profile's step a group of kernels must take to be
// fitted: a group under it that the simulator prices half off moves the step by less than
// the observation floor (0.5 x 2 x ObsErrorFloor = ObsErrorFloor), while its log error would
// weigh in the fit as much as the step's (ResNet-50's one 30 us GEMM against its 17 ms of
// convolutions). It is shown in the table, not fitted.
const MinGroupShare = 2 * ObsErrorFloor

// ProfileStep is the Observation name suffix of a profile's marked step.
const ProfileStep = "step"

// ProfileObservations are the fit's observations of one profile: its marked step's median
// (if useStep) and each group's device time per step, plus, per kernel, the GPU's KernelGap
// (the device's idle between two dependent kernels of a stream, which hw.Cost charges to
// every kernel's Exec and so to Prediction.Groups; a kernel's traced duration does not hold
// it). Each is named "NAME QUANTITY" and predicted by pred, which should be a MemoPredictor.
func ProfileObservations(name string, s xprof.StepSummary, g hw.GPU, useStep, holdOut bool, pred Predictor) []Observation {
	var obs []Observation
	if useStep && s.StepTime > 0 {
		obs = append(obs, Observation{Name: name + " " + ProfileStep, StepTime: s.StepTime, HoldOut: holdOut, Predict: pred})
	}
	for _, grp := range xprof.Groups {
		t := ProfileGroupTime(s, grp, g)
		if grp == xprof.GroupInput || !(t > 0) || s.StepTime > 0 && t < MinGroupShare*s.StepTime {
			continue
		}
		obs = append(obs, Observation{Name: name + " " + grp, Groups: map[string]float64{grp: t}, HoldOut: holdOut, Predict: pred})
	}
	return obs
}

// ProfileGroupTime is a group's measured device time per step as the simulator counts it:
// the kernels' durations plus g's KernelGap per kernel.
func ProfileGroupTime(s xprof.StepSummary, group string, g hw.GPU) float64 {
	return s.Groups[group] + s.Kernels[group]*g.Efficiency.KernelGap
}

// GroupTimes sums the device time by op kind of a simulated step (train.Result.ByKind's
// shares that are hw kinds; launch, input, sync and the others are not device time) into
// xprof's groups.
func GroupTimes(byKind map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range byKind {
		if slices.Contains(hw.Kinds, k) {
			out[xprof.Group(k)] += v
		}
	}
	return out
}

// MemoPredictor returns p remembering its last answer: the observations of one profile are
// predicted one after another at the same parameters, and ask the simulator once.
func MemoPredictor(p Predictor) Predictor {
	var last Params
	var pr Prediction
	var err error
	return func(v Params) (Prediction, error) {
		if last != nil && sameParams(last, v) {
			return pr, err
		}
		last = make(Params, len(v))
		for k, x := range v {
			last[k] = x
		}
		pr, err = p(v)
		return pr, err
	}
}

func sameParams(a, b Params) bool {
	if len(a) != len(b) {
		return false
	}
	for k, x := range a {
		if y, ok := b[k]; !ok || !(x == y || math.IsNaN(x) && math.IsNaN(y)) {
			return false
		}
	}
	return true
}

// ProfileTable compares one profile with the simulator before and after a fit, group by
// group: what `gpusim calibrate fit PROFILE` prints.
type ProfileTable struct {
	Profile string `json:"profile"`
	HoldOut bool   `json:"hold_out,omitempty"`
	Marker  string `json:"marker"`
	Steps   int    `json:"steps"`
	Device  int    `json:"device"`
	// Rows are the groups (xprof.Groups order, those measured or simulated), then the host
	// and idle time (the step less its kernels: the host's dispatch and step overheads, the
	// device's waits) and the step.
	Rows []ProfileRow `json:"rows"`
	// MeasuredKinds is the kernels' device time per step by op kind (xprof.Kind), the
	// simulated ones the same by the simulator's op kinds.
	MeasuredKinds map[string]float64 `json:"measured_kinds"`
	BeforeKinds   map[string]float64 `json:"simulated_kinds_before"`
	AfterKinds    map[string]float64 `json:"simulated_kinds_after"`
}

// ProfileRow is one line of a ProfileTable: seconds per step.
type ProfileRow struct {
	Name     string  `json:"name"`
	Kernels  float64 `json:"kernels_per_step,omitempty"`
	Measured float64 `json:"measured_s"`
	Before   float64 `json:"simulated_before_s"`
	After    float64 `json:"simulated_after_s"`
	// Fitted says the fit observed it (a group of at least MinGroupShare of the step, the
	// step unless --no-profile-step, nothing of a held-out profile).
	Fitted bool `json:"fitted"`
}

// The names of a ProfileTable's rows that are not groups.
const (
	RowHost = "host and idle"
	RowStep = ProfileStep
)

// NewProfileTable builds the table of profile name (summary s, on GPU profile g) from the
// simulator's predictions before and after the fit; fittedStep says its step was observed.
func NewProfileTable(name string, s xprof.StepSummary, g hw.GPU, fittedStep, holdOut bool, before, after Prediction) ProfileTable {
	t := ProfileTable{Profile: name, HoldOut: holdOut, Marker: s.Marker, Steps: s.Steps, Device: s.Device,
		MeasuredKinds: s.KindTimes, BeforeKinds: opKinds(before.Kinds), AfterKinds: opKinds(after.Kinds)}
	var sumM, sumB, sumA float64
	for _, grp := range xprof.Groups {
		m := ProfileGroupTime(s, grp, g)
		b, a := before.Groups[grp], after.Groups[grp]
		if m == 0 && b == 0 && a == 0 {
			continue
		}
		fitted := !holdOut && grp != xprof.GroupInput && m > 0 && !(s.StepTime > 0 && m < MinGroupShare*s.StepTime)
		t.Rows = append(t.Rows, ProfileRow{Name: grp, Kernels: s.Kernels[grp], Measured: m, Before: b, After: a, Fitted: fitted})
		sumM, sumB, sumA = sumM+m, sumB+b, sumA+a
	}
	t.Rows = append(t.Rows,
		ProfileRow{Name: RowHost, Measured: s.StepTime - sumM, Before: before.StepTime - sumB, After: after.StepTime - sumA},
		ProfileRow{Name: RowStep, Measured: s.StepTime, Before: before.StepTime, After: after.StepTime, Fitted: fittedStep && !holdOut})
	return t
}

// WriteText prints the table: one row per group with its kernels per step, measured and
// simulated time and the simulator's error, then the kinds inside the groups.
func (t ProfileTable) WriteText(w io.Writer) error {
	var err error
	pf := func(format string, args ...any) {
		if err == nil {
			_, err = fmt.Fprintf(w, format, args...)
		}
	}
	held := ""
	if t.HoldOut {
		held = " (held out)"
	}
	pf("%s%s: %d steps between %q markers, kernels of GPU %d, per step\n", t.Profile, held, t.Steps, t.Marker, t.Device)
	pf("  %-14s %9s %11s %11s %8s %11s %8s\n", "group", "kernels", "measured", "before", "error", "after", "error")
	for _, r := range t.Rows {
		k := ""
		if r.Kernels > 0 {
			k = fmt.Sprintf("%.1f", r.Kernels)
		}
		note := "fitted"
		if !r.Fitted {
			note = "not fitted"
			if r.Name != RowHost && r.Name != RowStep && !t.HoldOut && r.Name != xprof.GroupInput {
				note = fmt.Sprintf("not fitted: under %.1f%% of the step", 100*MinGroupShare)
			}
		}
		if r.Name == RowHost {
			note = "the step less the kernels"
		}
		pf("  %-14s %9s %11s %11s %8s %11s %8s  %s\n", r.Name, k, units.FormatSeconds(r.Measured), units.FormatSeconds(r.Before),
			relErr(r.Before, r.Measured), units.FormatSeconds(r.After), relErr(r.After, r.Measured), note)
	}
	pf("  measured by kind: %s\n", kindList(t.MeasuredKinds))
	pf("  simulated by kind (after): %s\n", kindList(t.AfterKinds))
	return err
}

// opKinds is m without the shares that are not op kinds (launch, input, sync...).
func opKinds(m map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range m {
		if slices.Contains(hw.Kinds, k) {
			out[k] = v
		}
	}
	return out
}

// relErr is (pred - obs)/obs as a percentage, blank when obs is not positive.
func relErr(pred, obs float64) string {
	if !(obs > 0) {
		return ""
	}
	return fmt.Sprintf("%+.1f%%", 100*(pred/obs-1))
}

// kindList is "fusion 17.87ms, pool 384.7µs, ...", longest first.
func kindList(m map[string]float64) string {
	ks := make([]string, 0, len(m))
	for k := range m {
		if m[k] > 0 {
			ks = append(ks, k)
		}
	}
	sort.Slice(ks, func(i, j int) bool {
		if m[ks[i]] != m[ks[j]] {
			return m[ks[i]] > m[ks[j]]
		}
		return ks[i] < ks[j]
	})
	parts := make([]string, len(ks))
	for i, k := range ks {
		parts[i] = k + " " + units.FormatSeconds(m[k])
	}
	return strings.Join(parts, ", ")
}
