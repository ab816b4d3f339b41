package pipeline

import (
	"math"
	"slices"

	"github.com/gpusim/gpusim/sim"
)

// Interval is a span of time [Start, End) during which a GPU ran at least one kernel.
type Interval struct {
	Start, End sim.Time
}

// NVMLSamplePeriod is the window over which nvidia-smi's utilization.gpu is measured on the
// H200: the median spacing of the driver's own samples (nvmlDeviceGetSamples,
// NVML_GPU_UTILIZATION_SAMPLES) was 0.2000 s in both runs of tools/input/dataloader_bench.py
// (pipeline/testdata/h200). NVML documents "between 1 second and 1/6 second depending on
// the product" (nvidia-smi --help-query-gpu).
const NVMLSamplePeriod = 200 * sim.Millisecond

// UtilizationSeries turns busy intervals into utilization the way nvidia-smi samples it: for
// each window [start + k·period, start + (k+1)·period) before end, the fraction of the window
// during which at least one interval was running ("percent of time over the past sample
// period during which one or more kernels was executing on the GPU", NVML's
// nvmlUtilization_t.gpu). Intervals may overlap (several streams) and come in any order. A
// last partial window is dropped, as the driver has not sampled it yet.
func UtilizationSeries(busy []Interval, start, end, period sim.Time) []float64 {
	if period <= 0 {
		panic("pipeline: UtilizationSeries with period <= 0")
	}
	if end <= start {
		return nil
	}
	n := int((end - start) / period)
	out := make([]float64, n)
	for _, iv := range merge(busy) {
		s, e := max(iv.Start, start), min(iv.End, start+sim.Time(n)*period)
		for s < e {
			k := int((s - start) / period)
			we := start + sim.Time(k+1)*period
			seg := min(e, we) - s
			out[k] += float64(seg)
			s += seg
		}
	}
	for k := range out {
		out[k] /= float64(period)
	}
	return out
}

// Utilization is the busy fraction of [start, end): the mean of UtilizationSeries with one
// window.
func Utilization(busy []Interval, start, end sim.Time) float64 {
	if end <= start {
		return 0
	}
	var t sim.Time
	for _, iv := range merge(busy) {
		s, e := max(iv.Start, start), min(iv.End, end)
		if e > s {
			t += e - s
		}
	}
	return float64(t) / float64(end-start)
}

// merge returns the union of the intervals, sorted and disjoint.
func merge(busy []Interval) []Interval {
	if len(busy) == 0 {
		return nil
	}
	iv := slices.Clone(busy)
	if !slices.IsSortedFunc(iv, cmpStart) {
		slices.SortFunc(iv, cmpStart)
	}
	out := iv[:0]
	for _, x := range iv {
		if x.End <= x.Start {
			continue
		}
		if n := len(out); n > 0 && x.Start <= out[n-1].End {
			out[n-1].End = max(out[n-1].End, x.End)
			continue
		}
		out = append(out, x)
	}
	return out
}

func cmpStart(a, b Interval) int {
	switch {
	case a.Start < b.Start:
		return -1
	case a.Start > b.Start:
		return 1
	}
	return 0
}

// Summary is the mean, population standard deviation, minimum and maximum of a series.
type Summary struct {
	Mean, Stddev, Min, Max float64
}

// Summarize describes a utilization series (zero Summary for an empty one).
func Summarize(xs []float64) Summary {
	if len(xs) == 0 {
		return Summary{}
	}
	s := Summary{Min: math.Inf(1), Max: math.Inf(-1)}
	for _, x := range xs {
		s.Mean += x
		s.Min = math.Min(s.Min, x)
		s.Max = math.Max(s.Max, x)
	}
	s.Mean /= float64(len(xs))
	for _, x := range xs {
		s.Stddev += (x - s.Mean) * (x - s.Mean)
	}
	s.Stddev = math.Sqrt(s.Stddev / float64(len(xs)))
	return s
}

// UtilizationMeter is UtilizationSeries computed as the intervals come, in memory that grows
// with the run's length over NVMLSamplePeriod rather than with the number of kernels: train
// adds every kernel (and collective) of a GPU as it runs. Intervals added must not overlap
// (one GPU's ops run one after another); their order is free.
type UtilizationMeter struct {
	// Period is the sample window; 0 means NVMLSamplePeriod.
	Period sim.Time
	sums   []sim.Time
}

// Add records that a kernel ran over [start, end).
func (m *UtilizationMeter) Add(start, end sim.Time) {
	p := m.period()
	for start < end {
		k := int(start / p)
		for len(m.sums) <= k {
			m.sums = append(m.sums, 0)
		}
		seg := min(end, sim.Time(k+1)*p) - start
		m.sums[k] += seg
		start += seg
	}
}

// AddPeriodic records count copies of a step's kernels: copy j runs each interval of ivs
// (offsets from the step's start, disjoint, within [0, period]) shifted by start + j*period.
// The sums are those of calling Add for every interval of every copy, computed per window
// instead: the busy time up to x is whole periods' busy time plus the busy time of one step up
// to x mod period, so each window costs one binary search however many steps it holds.
func (m *UtilizationMeter) AddPeriodic(start, period sim.Time, count int, ivs []Interval) {
	if count <= 0 || len(ivs) == 0 {
		return
	}
	iv := merge(ivs)
	if period <= 0 || iv[len(iv)-1].End > period || iv[0].Start < 0 {
		for j := range count {
			for _, x := range ivs {
				m.Add(start+sim.Time(j)*period+x.Start, start+sim.Time(j)*period+x.End)
			}
		}
		return
	}
	pre := make([]sim.Time, len(iv)+1) // busy time of the first k intervals
	for k, x := range iv {
		pre[k+1] = pre[k] + x.End - x.Start
	}
	perStep := pre[len(iv)]
	// busy is the busy time of the copies over [start, start+x).
	busy := func(x sim.Time) sim.Time {
		q, r := x/period, x%period
		k, _ := slices.BinarySearchFunc(iv, r, func(a Interval, t sim.Time) int {
			if a.End <= t {
				return -1
			}
			return 1
		})
		b := q*perStep + pre[k]
		if k < len(iv) && iv[k].Start < r {
			b += r - iv[k].Start
		}
		return b
	}
	p := m.period()
	end := start + sim.Time(count)*period
	k0, k1 := int(start/p), int((end-1)/p)
	m.sums = slices.Grow(m.sums, k1+1-len(m.sums))
	for len(m.sums) <= k1 {
		m.sums = append(m.sums, 0)
	}
	prev := sim.Time(0)
	for k := k0; k <= k1; k++ {
		b := busy(min(sim.Time(k+1)*p, end) - start)
		m.sums[k] += b - prev
		prev = b
	}
}

// Equal reports whether m and o have the same period and busy time in every window (so the
// same Series).
func (m *UtilizationMeter) Equal(o *UtilizationMeter) bool {
	if m.period() != o.period() {
		return false
	}
	a, b := m.sums, o.sums
	n := max(len(a), len(b))
	for k := range n {
		var x, y sim.Time
		if k < len(a) {
			x = a[k]
		}
		if k < len(b) {
			y = b[k]
		}
		if x != y {
			return false
		}
	}
	return true
}

// Series returns the busy fraction of each full window of [0, end), as UtilizationSeries(busy,
// 0, end, Period) does for the same intervals.
func (m *UtilizationMeter) Series(end sim.Time) []float64 {
	p := m.period()
	n := int(end / p)
	out := make([]float64, n)
	for k := range min(n, len(m.sums)) {
		out[k] = float64(m.sums[k]) / float64(p)
	}
	return out
}

func (m *UtilizationMeter) period() sim.Time {
	if m.Period > 0 {
		return m.Period
	}
	return NVMLSamplePeriod
}
