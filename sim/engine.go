package sim

// EventID names a scheduled event so that it can be cancelled.
type EventID uint64

type event struct {
	at  Time
	seq uint64
	fn  func()
}

// Engine is a discrete-event scheduler. The zero value is not usable; call NewEngine.
type Engine struct {
	now       Time
	seq       uint64
	heap      []event
	cancelled map[uint64]struct{} // nil until Cancel is first used
	stopped   bool
	processed uint64
}

// NewEngine returns an engine at time zero with no events.
func NewEngine() *Engine { return &Engine{heap: make([]event, 0, 64)} }

// Now returns the current virtual time.
func (e *Engine) Now() Time { return e.now }

// Processed returns how many events have run since the engine was created.
func (e *Engine) Processed() uint64 { return e.processed }

// Pending returns how many events are scheduled (cancelled ones included until they pop).
func (e *Engine) Pending() int { return len(e.heap) }

// At schedules fn at absolute time t. Scheduling in the past is a programmer mistake and panics.
func (e *Engine) At(t Time, fn func()) EventID {
	if t < e.now {
		panic("sim: event scheduled in the past")
	}
	if fn == nil {
		panic("sim: nil event function")
	}
	e.seq++
	e.push(event{at: t, seq: e.seq, fn: fn})
	return EventID(e.seq)
}

// After schedules fn d after the current time.
func (e *Engine) After(d Time, fn func()) EventID { return e.At(e.now+d, fn) }

// Cancel removes a scheduled event. It reports whether the event was still pending.
func (e *Engine) Cancel(id EventID) bool {
	for i := range e.heap {
		if e.heap[i].seq == uint64(id) {
			if e.cancelled == nil {
				e.cancelled = make(map[uint64]struct{})
			}
			if _, done := e.cancelled[uint64(id)]; done {
				return false
			}
			e.cancelled[uint64(id)] = struct{}{}
			return true
		}
	}
	return false
}

// Stop makes Run return after the event that is running now.
func (e *Engine) Stop() { e.stopped = true }

// Run executes events in (time, sequence) order until the heap is empty, Stop is called, or the
// next event lies after until. A negative until means no time bound. When Run stops on until,
// the clock is advanced to until. It returns the number of events run.
func (e *Engine) Run(until Time) int {
	e.stopped = false
	n := 0
	for len(e.heap) > 0 && !e.stopped {
		if until >= 0 && e.heap[0].at > until {
			break
		}
		ev := e.pop()
		if e.cancelled != nil {
			if _, ok := e.cancelled[ev.seq]; ok {
				delete(e.cancelled, ev.seq)
				continue
			}
		}
		e.now = ev.at
		n++
		e.processed++
		ev.fn()
	}
	if until >= 0 && !e.stopped && e.now < until && (len(e.heap) == 0 || e.heap[0].at > until) {
		e.now = until
	}
	return n
}

func less(a, b *event) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.seq < b.seq
}

func (e *Engine) push(ev event) {
	h := append(e.heap, ev)
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !less(&h[i], &h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
	e.heap = h
}

func (e *Engine) pop() event {
	h := e.heap
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h[last] = event{}
	h = h[:last]
	i := 0
	for {
		l := 2*i + 1
		if l >= len(h) {
			break
		}
		m := l
		if r := l + 1; r < len(h) && less(&h[r], &h[l]) {
			m = r
		}
		if !less(&h[m], &h[i]) {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	e.heap = h
	return top
}
