package train

import "github.com/gpusim/gpusim/sim"

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
