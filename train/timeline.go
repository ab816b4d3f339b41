package train

import (
	"sort"

	"github.com/gpusim/gpusim/sim"
)

// sampler keeps a memory timeline in at most max buckets of equal width. When time runs past
// the last bucket, adjacent buckets merge pairwise and the width doubles, so a run of any length
// holds O(max) points and every point still covers the same span of virtual time.
type sampler struct {
	max    int
	width  sim.Time // virtual time per bucket
	points []MemPoint
	cur    int // index of the bucket being filled
	inUse  int64
	pool   int64
}

func newSampler(max int) *sampler {
	// The first width is 1 µs: short runs keep the shape of a single step; it doubles as needed.
	return &sampler{max: max, width: sim.Microsecond, points: make([]MemPoint, 1, max)}
}

// record notes the memory state at time t (non-decreasing across calls).
func (s *sampler) record(t sim.Time, inUse, pool int64) {
	idx := int(t / s.width)
	for idx >= s.max {
		s.merge()
		idx = int(t / s.width)
	}
	for len(s.points) <= idx {
		// Empty buckets in between hold the state that carried over.
		s.points = append(s.points, MemPoint{
			Time: (sim.Time(len(s.points)) * s.width).Seconds(), MaxInUse: s.inUse, InUse: s.inUse, PoolBytes: s.pool,
		})
	}
	p := &s.points[idx]
	if inUse > p.MaxInUse {
		p.MaxInUse = inUse
	}
	p.InUse, p.PoolBytes = inUse, pool
	s.inUse, s.pool = inUse, pool
}

func (s *sampler) merge() {
	n := 0
	for i := 0; i < len(s.points); i += 2 {
		p := s.points[i]
		if i+1 < len(s.points) {
			q := s.points[i+1]
			p.MaxInUse = max(p.MaxInUse, q.MaxInUse)
			p.InUse, p.PoolBytes = q.InUse, q.PoolBytes
		}
		s.points[n] = p
		n++
	}
	s.points = s.points[:n]
	s.width *= 2
}

// timeline returns the points recorded so far.
func (s *sampler) timeline() []MemPoint { return append([]MemPoint(nil), s.points...) }

// stepTrace is one step's memory changes (offsets from its start, non-decreasing) with what
// replaying it needs: the highest bytes in use of any range of them, from the maxima of
// blocks of traceBlock changes (a range scans at most two partial blocks and the whole
// blocks between).
type stepTrace struct {
	ev    []memEvent
	block []int64 // block[b] is the highest inUse of ev[b*traceBlock : (b+1)*traceBlock]
}

const traceBlock = 32

func newStepTrace(ev []memEvent) *stepTrace {
	t := &stepTrace{ev: ev, block: make([]int64, (len(ev)+traceBlock-1)/traceBlock)}
	for i, e := range ev {
		if b := i / traceBlock; i%traceBlock == 0 || e.inUse > t.block[b] {
			t.block[b] = e.inUse
		}
	}
	return t
}

// maxInUse is the highest bytes in use among changes i..j-1 (i < j).
func (t *stepTrace) maxInUse(i, j int) int64 {
	m := t.ev[i].inUse
	for ; i < j && i%traceBlock != 0; i++ {
		m = max(m, t.ev[i].inUse)
	}
	for ; i+traceBlock <= j; i += traceBlock {
		m = max(m, t.block[i/traceBlock])
	}
	for ; i < j; i++ {
		m = max(m, t.ev[i].inUse)
	}
	return m
}

// replay records count copies of the step trace, copy j starting at start + j*period, leaving
// the sampler exactly as count*len(ev) calls of record would. It works bucket by bucket, not
// change by change: changes that land in one bucket only raise its maximum to the highest of
// them and leave it at the last one, so a run of them is applied at once; whole steps that fit
// in the current bucket are applied together. The cost grows with the buckets crossed (at
// most max per doubling of the width) and a binary search per bucket, not with the steps.
func (s *sampler) replay(start, period sim.Time, count int, tr *stepTrace) {
	n := len(tr.ev)
	if n == 0 || count <= 0 {
		return
	}
	last := tr.ev[n-1].at
	stepPeak := tr.maxInUse(0, n)
	for j, i := 0, 0; j < count; {
		base := start + sim.Time(j)*period
		t := base + tr.ev[i].at
		idx := int(t / s.width)
		for idx >= s.max {
			s.merge()
			idx = int(t / s.width)
		}
		for len(s.points) <= idx {
			s.points = append(s.points, MemPoint{
				Time: (sim.Time(len(s.points)) * s.width).Seconds(), MaxInUse: s.inUse, InUse: s.inUse, PoolBytes: s.pool,
			})
		}
		end := sim.Time(idx+1) * s.width // the bucket holds [idx*width, end)
		p := &s.points[idx]
		var e memEvent
		if i == 0 && base+last < end {
			// Steps j..j+k-1 lie wholly in this bucket.
			k := int((end-1-last-start)/period) - j + 1
			k = max(1, min(k, count-j))
			p.MaxInUse = max(p.MaxInUse, stepPeak)
			e = tr.ev[n-1]
			j += k
		} else {
			// The changes i..m-1 of step j that land before end.
			m := i + sort.Search(n-i, func(x int) bool { return base+tr.ev[i+x].at >= end })
			p.MaxInUse = max(p.MaxInUse, tr.maxInUse(i, m))
			e = tr.ev[m-1]
			if i = m; i == n {
				i, j = 0, j+1
			}
		}
		p.InUse, p.PoolBytes = e.inUse, e.pool
		s.inUse, s.pool = e.inUse, e.pool
	}
}
