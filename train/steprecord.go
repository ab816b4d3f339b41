package train

import (
	"fmt"
	"sort"

	"github.com/gpusim/gpusim/sim"
)

// runs is a per-step record kept run-length encoded: a fast-forwarded stretch of a million
// identical steps is one run, so recording it costs O(1) and the record stays small.
type runs[T comparable] struct {
	r []run[T]
	n int // entries
}

// A run holds n copies of v, or, when cyc is set, n entries cycling through cyc (entry o of
// the run is cyc[o%len(cyc)]): the jittered fast-forward's replay of a window of steps
// (jitter.go).
type run[T comparable] struct {
	v   T
	n   int
	cyc []T
}

// addCycle appends n entries cycling through vals (entry o is vals[o%len(vals)]); vals is
// kept, not copied.
func (s *runs[T]) addCycle(vals []T, n int) {
	if n <= 0 || len(vals) == 0 {
		return
	}
	s.n += n
	s.r = append(s.r, run[T]{n: n, cyc: vals})
}

// value is entry o of the run.
func (r *run[T]) value(o int) T {
	if r.cyc != nil {
		return r.cyc[o%len(r.cyc)]
	}
	return r.v
}

// add appends n copies of v.
func (s *runs[T]) add(v T, n int) {
	if n <= 0 {
		return
	}
	s.n += n
	if k := len(s.r); k > 0 && s.r[k-1].cyc == nil && s.r[k-1].v == v {
		s.r[k-1].n += n
		return
	}
	s.r = append(s.r, run[T]{v: v, n: n})
}

func (s *runs[T]) len() int { return s.n }

// last returns the last entry and how many equal entries end the record.
func (s *runs[T]) last() (T, int) {
	if len(s.r) == 0 {
		var zero T
		return zero, 0
	}
	l := s.r[len(s.r)-1]
	if l.cyc != nil {
		return l.value(l.n - 1), 1
	}
	return l.v, l.n
}

// at returns entry i.
func (s *runs[T]) at(i int) T {
	for k := range s.r {
		r := &s.r[k]
		if i < r.n {
			return r.value(i)
		}
		i -= r.n
	}
	panic("train: runs index out of range")
}

// expand returns every entry (nil for none).
func (s *runs[T]) expand() []T {
	if s.n == 0 {
		return nil
	}
	out := make([]T, 0, s.n)
	for k := range s.r {
		r := &s.r[k]
		for o := range r.n {
			out = append(out, r.value(o))
		}
	}
	return out
}

// medianRun returns the index of the (lower) median entry of s as medianIndex finds it in
// the expanded record: entries in stable ascending order, the one at (n-1)/2. Equal values
// keep their order, so within the sorted runs an entry's place is its run's place plus its
// offset in the run. A cycling run counts as one run per value of its cycle (entries c,
// c+len(cyc), ...); among equal values of one cycle the lower cycle index comes first, which
// may pick another entry of the same value than the expanded sort would. -1 for no entries.
func medianRun(s *runs[float64]) int {
	if s.n == 0 {
		return -1
	}
	type pos struct {
		v                  float64
		first, cnt, stride int
	}
	ps := make([]pos, 0, len(s.r))
	i := 0
	for _, r := range s.r {
		if w := len(r.cyc); w > 0 {
			for c := 0; c < w && c < r.n; c++ {
				ps = append(ps, pos{r.cyc[c], i + c, (r.n - c + w - 1) / w, w})
			}
		} else {
			ps = append(ps, pos{r.v, i, r.n, 1})
		}
		i += r.n
	}
	sort.SliceStable(ps, func(a, b int) bool { return ps[a].v < ps[b].v })
	k := (s.n - 1) / 2
	for _, p := range ps {
		if k < p.cnt {
			return p.first + k*p.stride
		}
		k -= p.cnt
	}
	panic("train: median past the end")
}

// medianOf is median over a run-length encoded record.
func medianOf(s *runs[float64]) float64 {
	if i := medianRun(s); i >= 0 {
		return s.at(i)
	}
	return 0
}

// records are what the run measured step by step, for the Result: per-step times, breakdowns
// and op time by kind (run-length encoded), the replayed stretches, the spans and per-step
// utilization, the peaks after PrefixSteps, and the counts of skipped updates, workspace
// fallbacks and autotuning.
type records struct {
	// Per completed step, run-length encoded (steprecord.go): step time, the breakdown and the
	// op time by kind summed over replicas; all-reduce times per all-reduce started.
	stepTimes       runs[float64]
	arTimes         runs[float64]
	breakdowns      runs[[numCats]sim.Time]
	kindBDs         runs[kindTimes]
	ffSteps         int
	replayed        []ReplayedSteps // the fast-forwarded stretches, for spans and per-step utilization
	skipped         int
	workspaceMisses int // cuDNN workspace requests that did not fit (not an OOM in TF)
	autotuned       int // convolutions cuDNN profiled on their first run
	autotuneSkips   int // candidate algorithms skipped because their scratch did not fit
	spans           []Span
	spansDropped    int
	stepOps         int // ops the replicas ran in the step so far (op spans a step keeps or drops)
	util            []UtilPoint
	prefixDone      bool    // step PrefixSteps ended: prefixPeaks holds the replicas' peaks then
	prefixPeaks     []int64 // for Result.Prefix
}

// recordStepSeries adds the step's span and each GPU's busy fraction over it.
func (r *runner) recordStepSeries(start, end sim.Time) {
	for _, rp := range r.replicas {
		r.rec.spans = append(r.rec.spans, Span{Device: rp.id, Track: TrackStep, Name: fmt.Sprintf("step %d", r.step), Step: r.step - 1,
			Start: start.Seconds(), Dur: (end - start).Seconds()})
		busy := 0.0
		if src := r.source(rp); end > start {
			busy = float64(src.exec.busy-src.exec.busyAtStart) / float64(end-start)
		}
		r.rec.util = append(r.rec.util, UtilPoint{Device: rp.id, T: start.Seconds(), Busy: busy})
	}
}

// recordPrefix keeps the replicas' peaks at the end of step PrefixSteps for Result.Prefix.
func (r *runner) recordPrefix() {
	r.rec.prefixPeaks = r.rec.prefixPeaks[:0]
	for _, rep := range r.replicas {
		r.rec.prefixPeaks = append(r.rec.prefixPeaks, r.source(rep).alloc.Stats().PeakBytesInUse)
	}
	r.rec.prefixDone = true
}
