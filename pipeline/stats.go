package pipeline

import (
	"github.com/gpusim/gpusim/sim"
)

// Stats describes a pipeline run so far.
type Stats struct {
	// Batches and Elements delivered to the consumer.
	Batches, Elements int
	// Gets counts consumer requests; EmptyGets those that found the prefetch buffer empty.
	Gets, EmptyGets int
	// BufferEmptyFraction is EmptyGets / Gets: how often the consumer found the buffer empty
	// (the event PrefetchAutotuner reacts to). Without prefetch it is 1.
	BufferEmptyFraction float64
	// BufferEmptyTimeFraction is the share of time the prefetch buffer held no batch.
	BufferEmptyTimeFraction float64
	// ConsumerWait is the total time from Get to the batch on the GPU; InputWait the part of
	// it spent before the batch left the buffer (without the delivery and the copy).
	ConsumerWait, InputWait sim.Time
	// H2DTime is the total host-to-device copy time.
	H2DTime sim.Time
	// MapCPUTime is the CPU time the map function used.
	MapCPUTime sim.Time
	// WorkerBusyFraction is MapCPUTime over the time integral of map threads (parallel
	// calls, or the one pulling thread of a sequential map).
	WorkerBusyFraction float64
	// CoreBusyFraction is MapCPUTime over (cores left to the pipeline × elapsed time).
	CoreBusyFraction float64
	// Parallelism is the map's parallel calls in force at the end (0: sequential).
	Parallelism int
	// PrefetchLimit is the prefetch buffer's size in batches at the end.
	PrefetchLimit int
	// Autotune lists AUTOTUNE's decisions on map parallelism.
	Autotune []TuneEvent
	// Epochs lists each epoch started.
	Epochs []Epoch
	// BufferLevel is the prefetch buffer's level over time, downsampled.
	BufferLevel []LevelSample
	// PeakHostBytes is the most host RAM the pipeline's buffers and cache held.
	PeakHostBytes int64
	// CacheBytes is the memory cache's size; CacheComplete says the first epoch filled it.
	CacheBytes    int64
	CacheComplete bool
	// HostOOM says a memory cache outgrew the host's RAM (a real process would be killed).
	HostOOM bool
	// Notes are remarks for the report.
	Notes []string
}

// Epoch is one pass over the dataset.
type Epoch struct {
	// Index is 1 for the first epoch.
	Index int
	// Start is when the epoch's iterator started (Keras mode) or its first element was
	// requested (Repeat); FirstBatch and End when its first and last batch were on the GPU.
	Start, FirstBatch, End sim.Time
	// Batches and Elements delivered.
	Batches, Elements int
	// FromCache says the epoch read from a complete cache.
	FromCache bool
}

// Duration is End - Start.
func (e Epoch) Duration() sim.Time { return e.End - e.Start }

// TuneEvent is one change of a tuned parameter.
type TuneEvent struct {
	T     sim.Time
	Param string
	Value int
	Why   string
}

// LevelSample is the buffer level over one bucket of time [T, T+Width).
type LevelSample struct {
	T, Width  sim.Time
	Mean, Max float64
}

// series is a time-weighted level series in at most cap buckets; when it would need more,
// the bucket width doubles and neighbouring buckets merge.
type series struct {
	t0, width sim.Time
	cap       int
	sum, mx   []float64 // per bucket: integral of level (level·ns) and maximum
	lastT     sim.Time
	lastV     float64
}

func newSeries(t0, width sim.Time, cap int) series {
	return series{t0: t0, width: width, cap: cap, lastT: t0}
}

// add records that the level became v at time t.
func (s *series) add(t sim.Time, v float64) {
	s.fill(t)
	s.lastV = v
	s.touch(t, v)
}

// fill integrates the current level from lastT to t.
func (s *series) fill(t sim.Time) {
	for s.lastT < t {
		k := int((s.lastT - s.t0) / s.width)
		if k >= s.cap {
			s.compress()
			continue
		}
		end := min(t, s.t0+sim.Time(k+1)*s.width)
		s.grow(k)
		s.sum[k] += s.lastV * float64(end-s.lastT)
		s.mx[k] = max(s.mx[k], s.lastV)
		s.lastT = end
	}
}

func (s *series) touch(t sim.Time, v float64) {
	k := int((t - s.t0) / s.width)
	for k >= s.cap {
		s.compress()
		k = int((t - s.t0) / s.width)
	}
	s.grow(k)
	s.mx[k] = max(s.mx[k], v)
}

func (s *series) grow(k int) {
	for len(s.sum) <= k {
		s.sum = append(s.sum, 0)
		s.mx = append(s.mx, 0)
	}
}

func (s *series) compress() {
	n := (len(s.sum) + 1) / 2
	for i := 0; i < n; i++ {
		a, b := 2*i, 2*i+1
		s.sum[i], s.mx[i] = s.sum[a], s.mx[a]
		if b < len(s.sum) {
			s.sum[i] += s.sum[b]
			s.mx[i] = max(s.mx[i], s.mx[b])
		}
	}
	s.sum, s.mx = s.sum[:n], s.mx[:n]
	s.width *= 2
}

// samples returns the series up to now (the last bucket may be partial).
func (s *series) samples(now sim.Time) []LevelSample {
	s.fill(now)
	out := make([]LevelSample, len(s.sum))
	for i := range s.sum {
		start := s.t0 + sim.Time(i)*s.width
		w := s.width
		if start+w > now {
			w = now - start
		}
		out[i] = LevelSample{T: start, Width: w, Max: s.mx[i]}
		if w > 0 {
			out[i].Mean = s.sum[i] / float64(w)
		}
	}
	return out
}
