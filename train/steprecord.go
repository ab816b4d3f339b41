package train

import "sort"

// runs is a per-step record kept run-length encoded: a fast-forwarded stretch of a million
// identical steps is one run, so recording it costs O(1) and the record stays small.
type runs[T comparable] struct {
	r []run[T]
	n int // entries
}

type run[T comparable] struct {
	v T
	n int
}

// add appends n copies of v.
func (s *runs[T]) add(v T, n int) {
	if n <= 0 {
		return
	}
	s.n += n
	if k := len(s.r); k > 0 && s.r[k-1].v == v {
		s.r[k-1].n += n
		return
	}
	s.r = append(s.r, run[T]{v, n})
}

func (s *runs[T]) len() int { return s.n }

// last returns the last entry and how many equal entries end the record.
func (s *runs[T]) last() (T, int) {
	if len(s.r) == 0 {
		var zero T
		return zero, 0
	}
	l := s.r[len(s.r)-1]
	return l.v, l.n
}

// at returns entry i.
func (s *runs[T]) at(i int) T {
	for _, r := range s.r {
		if i < r.n {
			return r.v
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
	for _, r := range s.r {
		for range r.n {
			out = append(out, r.v)
		}
	}
	return out
}

// medianRun returns the index of the (lower) median entry of s as medianIndex finds it in
// the expanded record: entries in stable ascending order, the one at (n-1)/2. Equal values
// keep their order, so within the sorted runs an entry's place is its run's place plus its
// offset in the run. -1 for no entries.
func medianRun(s *runs[float64]) int {
	if s.n == 0 {
		return -1
	}
	type pos struct {
		v          float64
		first, cnt int
	}
	ps := make([]pos, 0, len(s.r))
	i := 0
	for _, r := range s.r {
		ps = append(ps, pos{r.v, i, r.n})
		i += r.n
	}
	sort.SliceStable(ps, func(a, b int) bool { return ps[a].v < ps[b].v })
	k := (s.n - 1) / 2
	for _, p := range ps {
		if k < p.cnt {
			return p.first + k
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
