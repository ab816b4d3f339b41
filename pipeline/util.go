package pipeline

import (
	"fmt"
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

// DefaultMaxSamples is how many samples a UtilizationMeter keeps when MaxSamples is unset:
// 4096 windows of NVMLSamplePeriod are 13.6 minutes of simulated time, longer than any of the
// shipped scenarios runs, at 32 KB per GPU; a longer run keeps 4096 or fewer windows of 2, 4,
// 8, ... periods each (8 GPUs x 1M steps of ResNet-50 would otherwise hold 500,000 per GPU).
const DefaultMaxSamples = 4096

// UtilizationMeter is UtilizationSeries computed as the intervals come, in memory bounded by
// MaxSamples whatever the run's length or its number of kernels: train adds every kernel (and
// collective) of a GPU as it is issued.
//
// Intervals come in the order a simulation issues them: each Add starts no earlier than the
// one before it, and no earlier than the end of the last AddPeriodic's copies (Add and
// AddPeriodic panic otherwise). A window that ends by the latest start can gain no more busy
// time, so it is final: the meter folds it into the series and its statistics and forgets
// it, keeping only the windows the intervals still running may reach. Intervals added must
// not overlap (one GPU's ops run one after another).
//
// The series keeps every window while there are at most MaxSamples of them; past that,
// adjacent samples merge pairwise and the window doubles, as often as needed (the sums of
// busy time merge exactly: a merged sample is the busy fraction of the doubled window). The
// full-resolution windows' mean, spread and range stay exact in Summary.
type UtilizationMeter struct {
	// Period is the sample window; 0 means NVMLSamplePeriod.
	Period sim.Time
	// MaxSamples caps the samples Series returns; 0 means DefaultMaxSamples.
	MaxSamples int
	// live holds the busy time of windows base, base+1, ...: those running intervals reach.
	live  []sim.Time
	head  int // live[:head] are finalized and free
	base  int
	floor sim.Time // no interval may start before it
	done  meterSeries
}

// meterSeries is the finalized windows: the series at its current width and the statistics
// of every full-resolution window.
type meterSeries struct {
	sums []sim.Time // busy time of per consecutive windows each
	per  int        // windows per entry of sums (a power of two; 0 means 1)
	acc  sim.Time   // the entry being filled: accN windows so far
	accN int
	n    int // windows finalized
	// Welford's running mean and sum of squared deviations, with the extremes, of the
	// windows' busy fractions (used once the series is downsampled).
	mean, m2, min, max float64
}

// push appends the next window's busy time.
func (s *meterSeries) push(busy sim.Time, p sim.Time, maxSamples int) {
	if s.per == 0 {
		s.per = 1
	}
	x := float64(busy) / float64(p)
	s.n++
	if s.n == 1 {
		s.min, s.max = x, x
	}
	s.min, s.max = math.Min(s.min, x), math.Max(s.max, x)
	d := x - s.mean
	s.mean += d / float64(s.n)
	s.m2 += d * (x - s.mean)
	s.acc += busy
	if s.accN++; s.accN < s.per {
		return
	}
	if len(s.sums) == maxSamples {
		// Full: merge pairwise (a last odd entry keeps its windows and, at the doubled width,
		// becomes the entry being filled).
		n := 0
		for i := 0; i+1 < len(s.sums); i += 2 {
			s.sums[n] = s.sums[i] + s.sums[i+1]
			n++
		}
		if len(s.sums)%2 == 1 {
			s.acc += s.sums[len(s.sums)-1]
			s.accN += s.per
		}
		s.sums = s.sums[:n]
		s.per *= 2
		if s.accN < s.per {
			return
		}
	}
	s.sums = append(s.sums, s.acc)
	s.acc, s.accN = 0, 0
}

// Add records that a kernel ran over [start, end).
func (m *UtilizationMeter) Add(start, end sim.Time) {
	m.advance(start)
	if end <= start {
		return
	}
	p := m.period()
	for start < end {
		k := int(start / p)
		seg := min(end, sim.Time(k+1)*p) - start
		*m.window(k) += seg
		start += seg
	}
}

// advance finalizes the windows that end by t, the start of the next interval.
func (m *UtilizationMeter) advance(t sim.Time) {
	if t < m.floor {
		panic(fmt.Sprintf("pipeline: UtilizationMeter interval starts at %d, before %d: intervals must come in order of start", t, m.floor))
	}
	m.floor = t
	m.finalize(int(t / m.period()))
}

// finalize folds the windows before window k into the series.
func (m *UtilizationMeter) finalize(k int) {
	p, maxN := m.period(), m.maxSamples()
	for ; m.base < k; m.base++ {
		var b sim.Time
		if m.head < len(m.live) {
			b = m.live[m.head]
			m.head++
		}
		m.done.push(b, p, maxN)
	}
	if m.head == len(m.live) {
		m.live, m.head = m.live[:0], 0
	} else if m.head > len(m.live)/2 {
		n := copy(m.live, m.live[m.head:])
		m.live, m.head = m.live[:n], 0
	}
}

// window returns the busy time of window k (k >= base), growing the live windows to it.
func (m *UtilizationMeter) window(k int) *sim.Time {
	i := m.head + k - m.base
	for len(m.live) <= i {
		m.live = append(m.live, 0)
	}
	return &m.live[i]
}

// AddPeriodic records count copies of a step's kernels: copy j runs each interval of ivs
// (offsets from the step's start, disjoint, within [0, period]) shifted by start + j*period.
// The sums are those of calling Add for every interval of every copy, computed per window
// instead: the busy time up to x is whole periods' busy time plus the busy time of one step up
// to x mod period, so each window costs one binary search however many steps it holds. The
// copies are the next steps of the run: a later interval starts no earlier than their end, so
// the windows they fill are final at once and cost no memory.
func (m *UtilizationMeter) AddPeriodic(start, period sim.Time, count int, ivs []Interval) {
	if count <= 0 || len(ivs) == 0 {
		m.advance(start)
		return
	}
	iv := merge(ivs)
	if period <= 0 || iv[len(iv)-1].End > period || iv[0].Start < 0 {
		all := make([]Interval, 0, count*len(ivs))
		for j := range count {
			for _, x := range ivs {
				all = append(all, Interval{start + sim.Time(j)*period + x.Start, start + sim.Time(j)*period + x.End})
			}
		}
		slices.SortStableFunc(all, cmpStart)
		m.advance(min(start, all[0].Start))
		for _, x := range all {
			m.Add(x.Start, x.End)
		}
		return
	}
	m.advance(start)
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
	p, maxN := m.period(), m.maxSamples()
	end := start + sim.Time(count)*period
	k0, k1 := int(start/p), int((end-1)/p)
	// Windows before kEnd end by the copies' end: once no live window is left before one, it
	// goes straight into the series.
	kEnd := int(end / p)
	prev := sim.Time(0)
	for k := k0; k <= k1; k++ {
		b := busy(min(sim.Time(k+1)*p, end) - start)
		switch {
		case k < kEnd && k >= m.base+len(m.live)-m.head:
			m.finalize(k)
			m.done.push(b-prev, p, maxN)
			m.base = k + 1
		default:
			*m.window(k) += b - prev
		}
		prev = b
	}
	m.floor = end
	m.finalize(kEnd)
}

// Series returns the busy fraction of each full window of [0, end), as UtilizationSeries(busy,
// 0, end, Period) does for the same intervals, and the window: Period while there are at most
// MaxSamples windows, else the doubled width that brings them within it (a last partial window
// of that width is dropped, as nvidia-smi drops the window it has not sampled yet). It
// finalizes the windows before end: nothing may be added before end afterwards.
func (m *UtilizationMeter) Series(end sim.Time) ([]float64, sim.Time) {
	p := m.period()
	m.finalize(int(end / p))
	s := &m.done
	per := max(s.per, 1)
	n := min(len(s.sums), int(end/p)/per)
	out := make([]float64, n)
	for k := range n {
		out[k] = float64(s.sums[k]) / float64(sim.Time(per)*p)
	}
	return out, sim.Time(per) * p
}

// Summary is the mean, spread and range of every full-resolution window Series finalized:
// Summarize of the series itself while it is not downsampled.
func (m *UtilizationMeter) Summary() Summary {
	s := &m.done
	if s.per <= 1 {
		xs := make([]float64, len(s.sums))
		for k, b := range s.sums {
			xs[k] = float64(b) / float64(m.period())
		}
		return Summarize(xs)
	}
	return Summary{Mean: s.mean, Stddev: math.Sqrt(s.m2 / float64(s.n)), Min: s.min, Max: s.max}
}

func (m *UtilizationMeter) period() sim.Time {
	if m.Period > 0 {
		return m.Period
	}
	return NVMLSamplePeriod
}

func (m *UtilizationMeter) maxSamples() int {
	if m.MaxSamples > 0 {
		return max(m.MaxSamples, 2)
	}
	return DefaultMaxSamples
}
