package calibrate

import (
	"errors"
	"fmt"
	"math"
	"sort"
)

// The sustained SM clock of an NVML trace. A GPU under a training load runs at the clock its
// power limit and temperature allow (hw/clock.go's rule estimates it from the spec sheet); a
// trace recorded around the training command measured it, sample by sample. The median over
// the samples in which the GPU was busy is the clock the job's kernels ran at: the warm-up and
// the idle stretches before and after (345 MHz on the H200) are left out by the utilization,
// and the median is not pulled by the few samples in which GPU Boost steps down for a moment.

// busyUtil is the least NVML utilization (percent of its sampling window with a kernel
// running) at which a sample counts as under load: the GPU was busy for most of the window,
// so its clock is the one the kernels ran at.
const busyUtil = 50

// clockStepMHz is the granularity of the SM clocks NVML reports under GPU Boost: 15 MHz bins
// (the H200's VGG16 recording steps 1905, 1920, ... 1980 MHz, testdata/h200/clock/README.md).
// The measured clock is not known finer than one bin: the floor of its width.
const clockStepMHz = 15

// ClockReading is the SM clock an NVML trace measured under load.
type ClockReading struct {
	// Device is the NVML index read.
	Device int `json:"device"`
	// MedianMHz is the median SM clock over the busy samples; P10MHz and P90MHz bound the
	// middle 80% of them.
	MedianMHz float64 `json:"median_mhz"`
	P10MHz    float64 `json:"p10_mhz"`
	P90MHz    float64 `json:"p90_mhz"`
	// MedianPowerW is the board power over the same samples.
	MedianPowerW float64 `json:"median_power_w"`
	// Busy and Samples count the busy samples and all the device's samples.
	Busy    int `json:"busy_samples"`
	Samples int `json:"samples"`
}

// Hz is the median clock in Hz.
func (c ClockReading) Hz() float64 { return c.MedianMHz * 1e6 }

// Width is the log width of the reading as a prior: half the log spread of the middle 80% of
// the busy samples, and at least one of NVML's clock bins.
func (c ClockReading) Width() float64 {
	w := 0.5 * math.Log(c.P90MHz/c.P10MHz)
	return math.Max(w, math.Log1p(clockStepMHz/c.MedianMHz))
}

// ErrNoBusyClock says a trace has no sample with the GPU under load and a clock.
var ErrNoBusyClock = errors.New("no sample with the GPU busy and an SM clock")

// SustainedClock reads the SM clock device held while busy over the traces' samples (a fit's
// NVML traces, recorded on one card).
func SustainedClock(traces []*Trace, device int) (ClockReading, error) {
	r := ClockReading{Device: device}
	var mhz, watts []float64
	for _, t := range traces {
		for _, s := range t.Samples {
			for _, d := range s.Devices {
				if d.Index != device {
					continue
				}
				r.Samples++
				if d.GPUUtil >= busyUtil && d.SMClockMHz > 0 {
					mhz = append(mhz, float64(d.SMClockMHz))
					watts = append(watts, d.PowerW)
				}
			}
		}
	}
	if len(mhz) == 0 {
		return r, fmt.Errorf("GPU %d: %w (%d samples)", device, ErrNoBusyClock, r.Samples)
	}
	r.Busy = len(mhz)
	sort.Float64s(mhz)
	sort.Float64s(watts)
	r.MedianMHz, r.P10MHz, r.P90MHz = quantile(mhz, 0.5), quantile(mhz, 0.1), quantile(mhz, 0.9)
	r.MedianPowerW = quantile(watts, 0.5)
	return r, nil
}

// quantile is the q-quantile of sorted xs, interpolated between neighbours.
func quantile(xs []float64, q float64) float64 {
	p := q * float64(len(xs)-1)
	i := int(p)
	if i+1 >= len(xs) {
		return xs[len(xs)-1]
	}
	return xs[i] + (p-float64(i))*(xs[i+1]-xs[i])
}

// MeasuredClock returns ps with the sustained clock's prior at the reading (a measured clock,
// not the spec-sheet rule's estimate), its width the reading's own: the fit may move the clock
// only as far as the trace leaves it unknown.
func MeasuredClock(ps []Param, r ClockReading) []Param {
	out := append([]Param(nil), ps...)
	for i, p := range out {
		if p.Name == ParamSustainedClock {
			hz := r.Hz()
			out[i].Prior, out[i].Width = hz, r.Width()
			out[i].Min, out[i].Max = hz/2, hz*1.5
			out[i].Source = fmt.Sprintf("NVML trace: median of %d busy samples", r.Busy)
		}
	}
	return out
}
