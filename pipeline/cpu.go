package pipeline

import "github.com/gpusim/gpusim/sim"

// CPU is a host's processor as tf.data's map calls use it: Host.Cores hardware threads,
// ThreadsPerCore of them on each physical core. Several pipelines can share one CPU (one per
// process: each Horovod rank runs its own tf.data pipeline on the same host), so that their
// calls queue for the same threads, first come, first served.
//
// Simultaneous multithreading: two calls on the two threads of one core share its execution
// units, so together they run 1+SMTGain times as fast as one call alone, not twice. A call's
// speed is fixed when it starts, at the mean speed of the busy threads then: with k calls
// running on C cores (C < k <= 2C), k-C cores run two calls and 2C-k run one, so each call
// runs at ((2C-k) + (k-C)(1+SMTGain)) / k of a lone core's speed. In steady state that is
// exact; when the load changes, a call keeps the speed it started with.
type CPU struct {
	e       *sim.Engine
	threads int // hardware threads the calls may use
	cores   int // physical cores under them
	gain    float64
	busy    int
	q       fifo[cpuTask] // waiting for a thread
	free    []*cpuCall    // finished calls, reused so that a call allocates nothing
}

// cpuTask is a map call of pipeline p: t.cost is its work on a lone core; p.coreDone(t) runs
// at its end.
type cpuTask struct {
	p *Pipeline
	t coreTask
}

// cpuCall is a running call: fire, made once with the cpuCall, is the event that ends it.
// Reusing finished cpuCalls keeps an event closure per call off the heap, which is most of a
// tf.data-fed simulation's allocations.
type cpuCall struct {
	t    cpuTask
	fire func()
}

// NewCPU returns host h's processor on engine e: Cores - BusyCores threads for map calls.
func NewCPU(e *sim.Engine, h Host) *CPU {
	threads := h.Cores - h.BusyCores
	tpc := max(h.ThreadsPerCore, 1)
	return &CPU{e: e, threads: threads, cores: max((threads+tpc-1)/tpc, 1), gain: h.SMTGain}
}

// Threads is how many calls can run at once.
func (c *CPU) Threads() int { return c.threads }

// run starts pipeline p's call t on a free thread, or queues it; p.coreDone(t) runs at its
// end.
func (c *CPU) run(p *Pipeline, ct coreTask) {
	t := cpuTask{p: p, t: ct}
	if c.busy == c.threads {
		c.q.push(t)
		return
	}
	c.start(t)
}

func (c *CPU) start(t cpuTask) {
	c.busy++
	d := t.t.cost
	if s := c.speed(c.busy); s < 1 {
		d = sim.FromSeconds(t.t.cost.Seconds() / s)
	}
	var k *cpuCall
	if n := len(c.free); n > 0 {
		k, c.free = c.free[n-1], c.free[:n-1]
	} else {
		k = &cpuCall{}
		k.fire = func() { c.end(k) }
	}
	k.t = t
	c.e.After(d, k.fire)
}

// end returns call k to the free list and finishes its task.
func (c *CPU) end(k *cpuCall) {
	t := k.t
	k.t = cpuTask{}
	c.free = append(c.free, k)
	c.finish(t)
}

// speed is the mean speed of k busy threads relative to a lone core.
func (c *CPU) speed(k int) float64 {
	if k <= c.cores {
		return 1
	}
	shared := float64(k - c.cores) // cores running two calls
	return (float64(c.cores) - shared + shared*(1+c.gain)) / float64(k)
}

func (c *CPU) finish(t cpuTask) {
	c.busy--
	if next, ok := c.q.pop(); ok {
		c.start(next)
	}
	t.p.coreDone(t.t)
}

// fifo is a first-come, first-served queue that reuses its slice once drained.
type fifo[T any] struct {
	q    []T
	head int
}

func (f *fifo[T]) push(t T) { f.q = append(f.q, t) }

// pop takes the oldest element; ok is false when the queue is empty.
func (f *fifo[T]) pop() (t T, ok bool) {
	if f.head == len(f.q) {
		return t, false
	}
	t = f.q[f.head]
	var zero T
	f.q[f.head] = zero // release what it holds (a call's closure)
	f.head++
	if f.head == len(f.q) {
		f.q, f.head = f.q[:0], 0
	}
	return t, true
}
