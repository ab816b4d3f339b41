package sim

import "math/bits"

// EventID names a scheduled event so that it can be cancelled.
type EventID uint64

type event struct {
	at  Time
	seq uint64
	fn  func()
}

// Engine is a discrete-event scheduler. The zero value is not usable; call NewEngine.
//
// Pending events live in a radix heap (Ahuja, Mehlhorn, Orlin and Tarjan, "Faster algorithms
// for the shortest path problem", 1990), which fits a discrete-event kernel because time never
// goes back: bucket b holds the events whose time differs from last (the time of the latest
// event taken out) first in bit b-1, bucket 0 those at exactly last. Every event sits in the
// bucket its time dictates, so events of equal time share a bucket; buckets are FIFO and are
// redistributed in order, so equal-time events leave in insertion order — the (time, sequence)
// order of a binary heap, without its unpredictable comparisons.
type Engine struct {
	now       Time
	seq       uint64
	last      Time        // time of the latest event moved into bucket 0; <= every pending time
	buckets   [65][]event // buckets[0][head:] are due at last
	head      int
	pending   int
	stopped   bool
	processed uint64
	// check, when set, runs after every checkMask+1 events; Run stops when it returns true
	// (SetInterrupt).
	check     func() bool
	checkMask uint64
}

// NewEngine returns an engine at time zero with no events.
func NewEngine() *Engine { return &Engine{} }

// Now returns the current virtual time.
func (e *Engine) Now() Time { return e.now }

// Processed returns how many events have run since the engine was created.
func (e *Engine) Processed() uint64 { return e.processed }

// Pending returns how many events are scheduled and not cancelled.
func (e *Engine) Pending() int { return e.pending }

// At schedules fn at absolute time t. Scheduling in the past is a programmer mistake and panics.
func (e *Engine) At(t Time, fn func()) EventID {
	if t < e.now {
		panic("sim: event scheduled in the past")
	}
	if fn == nil {
		panic("sim: nil event function")
	}
	e.seq++
	if t < e.last {
		// Run peeked past until and moved last beyond now; t lies in between.
		e.rebase(t)
	}
	b := bucket(t, e.last)
	e.buckets[b] = append(e.buckets[b], event{at: t, seq: e.seq, fn: fn})
	e.pending++
	return EventID(e.seq)
}

// After schedules fn d after the current time.
func (e *Engine) After(d Time, fn func()) EventID { return e.At(e.now+d, fn) }

// Cancel removes a scheduled event. It reports whether the event was still pending. It costs
// a linear scan of the pending events; simulations cancel rarely.
func (e *Engine) Cancel(id EventID) bool {
	for b := range e.buckets {
		q := e.buckets[b]
		start := 0
		if b == 0 {
			start = e.head
		}
		for i := start; i < len(q); i++ {
			if q[i].seq == uint64(id) {
				copy(q[i:], q[i+1:])
				q[len(q)-1] = event{}
				e.buckets[b] = q[:len(q)-1]
				e.pending--
				return true
			}
		}
	}
	return false
}

// SetInterrupt makes Run call check after every n events (n rounded up to a power of two) and
// stop, as Stop does, when it returns true. It is how a caller bounds a run from outside the
// events (a cancelled context, a cap on events) at the cost of one comparison per event.
// A nil check removes it.
func (e *Engine) SetInterrupt(n uint64, check func() bool) {
	e.check = check
	e.checkMask = 0
	for e.checkMask+1 < n {
		e.checkMask = e.checkMask<<1 | 1
	}
}

// Stop makes Run return after the event that is running now.
func (e *Engine) Stop() { e.stopped = true }

// Run executes events in (time, sequence) order until no event is pending, Stop is called, or
// the next event lies after until. A negative until means no time bound. When Run stops on
// until, the clock is advanced to until. It returns the number of events run.
func (e *Engine) Run(until Time) int {
	e.stopped = false
	n := 0
	for e.pending > 0 && !e.stopped {
		if e.head == len(e.buckets[0]) {
			e.refill()
		}
		q := e.buckets[0]
		if until >= 0 && e.last > until {
			break
		}
		fn := q[e.head].fn
		q[e.head] = event{}
		e.head++
		e.pending--
		e.now = e.last
		n++
		e.processed++
		fn()
		if e.check != nil && e.processed&e.checkMask == 0 && e.check() {
			e.stopped = true
		}
	}
	if until >= 0 && !e.stopped && e.now < until {
		e.now = until
	}
	return n
}

// bucket returns the index of the bucket for time t when the latest time taken out is last.
func bucket(t, last Time) int { return bits.Len64(uint64(t ^ last)) }

// refill moves the earliest pending events into bucket 0. Bucket 0 must be empty and at least
// one event pending.
func (e *Engine) refill() {
	e.buckets[0] = e.buckets[0][:0]
	e.head = 0
	b := 1
	for len(e.buckets[b]) == 0 {
		b++
	}
	q := e.buckets[b]
	m := q[0].at
	for i := 1; i < len(q); i++ {
		if q[i].at < m {
			m = q[i].at
		}
	}
	e.last = m
	// Every bucket below b is empty, so appending in order keeps equal times in FIFO order.
	for i := range q {
		c := bucket(q[i].at, m)
		e.buckets[c] = append(e.buckets[c], q[i])
	}
	clear(q)
	e.buckets[b] = q[:0]
}

// rebase lowers last to t (< last) and re-files every pending event. Walking the buckets from
// 0 up and each in order keeps events of equal time in FIFO order: they always share a bucket.
func (e *Engine) rebase(t Time) {
	var all []event
	all = append(all, e.buckets[0][e.head:]...)
	for b := range e.buckets {
		if b > 0 {
			all = append(all, e.buckets[b]...)
		}
		clear(e.buckets[b])
		e.buckets[b] = e.buckets[b][:0]
	}
	e.head = 0
	e.last = t
	for _, ev := range all {
		c := bucket(ev.at, t)
		e.buckets[c] = append(e.buckets[c], ev)
	}
}
