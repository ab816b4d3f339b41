package pipeline

import (
	"fmt"
	"math/rand/v2"

	"github.com/gpusim/gpusim/sim"
)

// Options are knobs of the simulator itself, not of the simulated pipeline.
type Options struct {
	// LevelPoints caps the samples kept of the prefetch buffer's level over time; the series
	// is downsampled (bucket width doubled) whenever it would grow past this.
	LevelPoints int
	// LevelPeriod is the initial bucket width of that series.
	LevelPeriod sim.Time
}

// DefaultOptions returns 512 level samples starting at 1 ms buckets.
func DefaultOptions() Options { return Options{LevelPoints: 512, LevelPeriod: sim.Millisecond} }

// Pipeline is one tf.data pipeline running on an engine. All of its work happens in engine
// events: it has no goroutines. Create it with New, then call Get once per training step.
type Pipeline struct {
	e    *sim.Engine
	cfg  Config
	rng  *rand.Rand
	opts Options

	cores int  // cores the map may use: Host.Cores - Host.BusyCores
	cpu   *CPU // the host's threads, this pipeline's alone or shared with other processes'

	running  int            // map calls on the CPU (at most Config.Threads when set)
	threadQ  fifo[coreTask] // calls waiting for one of the process's Threads
	readFree []*readCall    // finished reads, reused (readAt)

	// Iterator and epoch. In Keras mode (Repeat false) each epoch is a fresh iterator.
	started  bool
	t0       sim.Time // when the first iterator started
	iterDone bool     // this iterator produced its last batch (Keras mode)
	gen      int      // iterator generation: stale autotune ticks compare it
	epoch    int      // epoch being produced, 1-based
	issued   int      // elements of this epoch handed to map
	mapOut   int      // elements of this epoch out of map
	taken    int      // elements of this epoch taken by batch
	seq      int      // elements issued by this iterator (slot numbers)

	readerFree, cacheFree sim.Time

	cacheFilled   int // elements written to the cache in epoch 1
	cacheComplete bool
	cacheBytes    int64

	// map
	par      int    // parallel calls in force (0: sequential)
	ring     []bool // done flags of slots head..head+n-1, indexed by seq % len(ring)
	head, n  int
	seqState int // sequential map: 0 idle, 1 running, 2 element ready

	shuf int // elements in the shuffle buffer
	cur  int // elements in the batch being built

	buf      []batch // prefetch buffer, FIFO from bufHead
	bufHead  int
	tuner    prefetchTuner
	waiters  []waiter
	wHead    int
	copyFree sim.Time

	pumping, again bool

	// autotune of map parallelism: the next optimization is due at nextTick
	tickPeriod, nextTick sim.Time

	st     Stats
	level  series
	lastT  sim.Time // last time the integrals below were advanced
	parInt float64  // integral of worker threads over time (thread-seconds)
	empty  sim.Time // time the prefetch buffer spent empty
	mapCnt int
	mapSum float64
}

type coreTask struct {
	cost sim.Time
	slot int // -1: the sequential map's element
}

type batch struct {
	elems    int
	epoch    int
	onDevice sim.Time // copy end when prefetched to the device, else 0
}

type waiter struct {
	fn    func(ready sim.Time, elements int)
	asked sim.Time
}

// New returns a pipeline on engine e. cfg must be valid (see Config.Validate; New panics
// otherwise, as that is a programmer mistake). rng draws the map costs: pass
// sim.Stream(seed, "input").
func New(e *sim.Engine, cfg Config, rng *rand.Rand) *Pipeline {
	return NewWithOptions(e, cfg, rng, DefaultOptions())
}

// NewWithOptions is New with simulator options.
func NewWithOptions(e *sim.Engine, cfg Config, rng *rand.Rand, opts Options) *Pipeline {
	return newPipeline(e, cfg, rng, opts, nil)
}

// NewOn returns a pipeline whose map calls run on cpu, shared with the other pipelines on it
// (one per process of the host), on cpu's engine. cfg.Host should describe the same host; its
// cores size the map's buffer and AUTOTUNE's budget, as each process sees the whole machine.
func NewOn(cpu *CPU, cfg Config, rng *rand.Rand) *Pipeline {
	if cpu == nil {
		panic("pipeline: NewOn with nil CPU")
	}
	return newPipeline(cpu.e, cfg, rng, DefaultOptions(), cpu)
}

func newPipeline(e *sim.Engine, cfg Config, rng *rand.Rand, opts Options, cpu *CPU) *Pipeline {
	if err := cfg.Validate(); err != nil {
		panic("pipeline: " + err.Error())
	}
	if rng == nil {
		panic("pipeline: nil rng")
	}
	if opts.LevelPoints < 2 {
		opts.LevelPoints = 2
	}
	if opts.LevelPeriod <= 0 {
		opts.LevelPeriod = sim.Millisecond
	}
	p := &Pipeline{e: e, cfg: cfg, rng: rng, opts: opts}
	p.cores = cfg.Host.Cores - cfg.Host.BusyCores
	if cpu == nil {
		cpu = NewCPU(e, cfg.Host)
	}
	p.cpu = cpu
	maxPar := int(cfg.ParallelCalls)
	if cfg.ParallelCalls == Autotune || maxPar < cfg.Host.Cores {
		maxPar = cfg.Host.Cores
	}
	p.ring = make([]bool, max(maxPar, 1))
	p.level = newSeries(e.Now(), opts.LevelPeriod, opts.LevelPoints)
	p.lastT = e.Now()
	return p
}

// Config returns the pipeline's configuration.
func (p *Pipeline) Config() Config { return p.cfg }

// Get asks for the next batch, as the training loop's next(iterator) does. fn runs in an
// engine event at the time the batch is on the GPU (after the host-to-device copy). Asking
// again before fn ran queues another request. In Keras mode (Repeat false) a Get after the
// last batch of an epoch starts the next epoch's iterator.
func (p *Pipeline) Get(fn func(ready sim.Time)) {
	if fn == nil {
		panic("pipeline: Get with nil callback")
	}
	p.GetBatch(func(ready sim.Time, _ int) { fn(ready) })
}

// GetBatch is Get whose callback also learns how many elements the batch holds (fewer than
// Batch for an epoch's last batch without drop_remainder).
func (p *Pipeline) GetBatch(fn func(ready sim.Time, elements int)) {
	if fn == nil {
		panic("pipeline: GetBatch with nil callback")
	}
	now := p.e.Now()
	p.advance(now)
	if !p.started || (!p.cfg.Repeat && p.iterDone && p.bufLen() == 0 && p.wLen() == 0) {
		p.startIterator()
	}
	p.st.Gets++
	if p.bufLen() == 0 {
		p.st.EmptyGets++
		p.tuner.recordEmpty(p.freeMemory(), p.batchBytes())
	}
	p.waiters = append(p.waiters, waiter{fn: fn, asked: now})
	p.serve()
	p.pump()
}

func (p *Pipeline) bufLen() int { return len(p.buf) - p.bufHead }
func (p *Pipeline) wLen() int   { return len(p.waiters) - p.wHead }

func (p *Pipeline) batchBytes() int64 { return int64(p.cfg.Batch) * p.cfg.ElementBytes }

// startIterator begins an iterator: the first epoch, or the next one in Keras mode.
func (p *Pipeline) startIterator() {
	now := p.e.Now()
	if !p.started {
		p.t0 = now
		p.lastT = now
		p.level = newSeries(now, p.opts.LevelPeriod, p.opts.LevelPoints)
	}
	p.started = true
	p.iterDone = false
	p.gen++
	p.seq, p.head, p.n = 0, 0, 0
	p.seqState = 0
	switch {
	case p.cfg.ParallelCalls == Autotune:
		// GetAutotuneDefaultParallelism (tensorflow/core/data/dataset_utils.cc): the initial
		// value is min(16, runner_threadpool_size), the pool having one thread per core.
		p.setPar(min(16, p.cfg.Host.Cores), "initial")
		p.tickPeriod = 10 * sim.Millisecond // Model::kOptimizationPeriodMinMs (model.h)
		p.nextTick = now + p.tickPeriod
	default:
		p.setPar(int(p.cfg.ParallelCalls), "")
	}
	p.tuner = newPrefetchTuner(p.cfg.Prefetch)
	p.startEpoch(now)
}

func (p *Pipeline) startEpoch(now sim.Time) {
	p.epoch++
	p.issued, p.mapOut, p.taken, p.shuf, p.cur = 0, 0, 0, 0, 0
	p.st.Epochs = append(p.st.Epochs, Epoch{Index: p.epoch, Start: now, FromCache: p.cacheComplete})
}

func (p *Pipeline) setPar(v int, why string) {
	p.advance(p.e.Now())
	if v > len(p.ring) {
		v = len(p.ring)
	}
	if v != p.par && why != "" {
		p.st.Autotune = append(p.st.Autotune, TuneEvent{T: p.e.Now(), Param: "map.parallel_calls", Value: v, Why: why})
	}
	p.par = v
}

// advance integrates the time-weighted statistics up to now.
func (p *Pipeline) advance(now sim.Time) {
	dt := now - p.lastT
	if dt <= 0 {
		return
	}
	if p.started {
		w := p.par
		if w == 0 {
			w = 1
		}
		p.parInt += float64(w) * dt.Seconds()
		if p.bufLen() == 0 {
			p.empty += dt
		}
	}
	p.lastT = now
}

// pump moves work forward: issues elements to the map, builds batches while someone wants
// one, and hands batches to waiting consumers. It is called after every state change.
func (p *Pipeline) pump() {
	if p.pumping {
		p.again = true
		return
	}
	p.pumping = true
	p.maybeOptimize()
	for {
		p.again = false
		p.fillMap()
		p.produce()
		p.serve()
		if !p.again {
			break
		}
	}
	p.pumping = false
}

// fillMap keeps ParallelMapDataset's invariant: calls in flight plus results not yet taken
// never exceed num_parallel_calls (parallel_map_dataset_op.cc, RunnerThread).
func (p *Pipeline) fillMap() {
	if p.par == 0 || !p.started || p.iterDone {
		return
	}
	for p.n < p.par && p.issued < p.cfg.Records {
		slot := p.seq
		p.seq++
		p.n++
		p.ring[slot%len(p.ring)] = false
		p.issue(slot)
	}
}

// issue starts one element: read (or cache read), then the map's CPU work.
func (p *Pipeline) issue(slot int) {
	p.issued++
	now := p.e.Now()
	ready := now
	needMap := true
	if p.cacheComplete {
		if p.cfg.Cache == "file" {
			ready = max(now, p.cacheFree) + transfer(p.cfg.ElementBytes, p.cfg.CacheFileBandwidth, 0)
			p.cacheFree = ready
		}
		// A memory cache hands out the stored tensors: no copy, no read.
		needMap = p.cfg.CacheBeforeMap
	} else {
		ready = max(now, p.readerFree) + transfer(p.cfg.RecordBytes, p.cfg.StorageBandwidth, p.cfg.ReadLatency)
		p.readerFree = ready
		if p.cfg.CacheBeforeMap {
			p.writeCache(p.cfg.RecordBytes)
		}
	}
	if !needMap {
		if ready == now {
			p.markDone(slot)
			return
		}
		p.readAt(ready, coreTask{slot: slot}, false)
		return
	}
	cost := sim.FromSeconds(p.cfg.MapCost.Sample(p.rng))
	if ready == now {
		p.submit(coreTask{cost: cost, slot: slot})
		return
	}
	p.readAt(ready, coreTask{cost: cost, slot: slot}, true)
}

// readCall is an element whose read ends at a later time: then it goes to the map (submit)
// or, served from the cache without a map, is done. fire, made once with the readCall, is the
// event; finished readCalls are reused so that an element's read allocates nothing.
type readCall struct {
	t      coreTask
	submit bool
	fire   func()
}

// readAt schedules the end of element t's read at time at (above).
func (p *Pipeline) readAt(at sim.Time, t coreTask, submit bool) {
	var k *readCall
	if n := len(p.readFree); n > 0 {
		k, p.readFree = p.readFree[n-1], p.readFree[:n-1]
	} else {
		k = &readCall{}
		k.fire = func() { p.readDone(k) }
	}
	k.t, k.submit = t, submit
	p.e.At(at, k.fire)
}

func (p *Pipeline) readDone(k *readCall) {
	t, submit := k.t, k.submit
	p.readFree = append(p.readFree, k)
	if submit {
		p.submit(t)
		return
	}
	p.markDone(t.slot)
	p.pump()
}

func transfer(bytes int64, bandwidth, latency float64) sim.Time {
	s := latency
	if bandwidth > 0 {
		s += float64(bytes) / bandwidth
	}
	return sim.FromSeconds(s)
}

// submit runs a task on a free core of the host's CPU, or queues it until one frees (first
// come, first served, across every pipeline sharing the CPU).
func (p *Pipeline) submit(t coreTask) {
	if p.cfg.Threads > 0 && p.running == p.cfg.Threads {
		p.threadQ.push(t)
		return
	}
	p.running++
	p.cpu.run(p, t)
}

func (p *Pipeline) coreDone(t coreTask) {
	p.running--
	if next, ok := p.threadQ.pop(); ok {
		p.running++
		p.cpu.run(p, next)
	}
	p.advance(p.e.Now())
	p.st.MapCPUTime += t.cost
	p.mapCnt++
	p.mapSum += t.cost.Seconds()
	p.markDone(t.slot)
	p.pump()
}

func (p *Pipeline) markDone(slot int) {
	if slot < 0 {
		p.seqState = 2
		return
	}
	p.ring[slot%len(p.ring)] = true
}

// takeFromMap takes the next element out of the map in order; false means not ready yet.
func (p *Pipeline) takeFromMap() bool {
	if p.par > 0 {
		if p.n == 0 || !p.ring[p.head%len(p.ring)] {
			return false
		}
		p.head++
		p.n--
	} else {
		switch p.seqState {
		case 2:
			p.seqState = 0
		case 0:
			if p.issued < p.cfg.Records {
				p.seqState = 1
				p.issue(-1)
				if p.seqState == 2 { // served from a memory cache at once
					p.seqState = 0
					break
				}
			}
			return false
		default:
			return false
		}
	}
	p.mapOut++
	if !p.cacheComplete && !p.cfg.CacheBeforeMap {
		p.writeCache(p.cfg.ElementBytes)
	}
	if p.par > 0 {
		p.fillMap()
	}
	return true
}

// writeCache stores one element in the cache during the first epoch.
func (p *Pipeline) writeCache(bytes int64) {
	if p.epoch != 1 || (p.cfg.Cache != "memory" && p.cfg.Cache != "file") || p.st.HostOOM {
		return
	}
	if p.cfg.Cache == "memory" {
		if p.hostBytes()+bytes > p.cfg.Host.MemoryBytes {
			// TF's MemoryCache has no budget: the process would be killed by the host's OOM
			// killer here. The simulation notes it and stops filling the cache.
			p.st.HostOOM = true
			p.st.Notes = append(p.st.Notes, fmt.Sprintf(
				"dataset.cache() in memory needs %d bytes at least, more than the host's %d: the process would be killed",
				int64(p.cfg.Records)*bytes, p.cfg.Host.MemoryBytes))
			return
		}
		p.cacheBytes += bytes
	}
	p.cacheFilled++
	p.notePeak()
}

// produce builds batches while the prefetch thread (or, without prefetch, a waiting
// consumer) wants one: batch pulls elements from shuffle, shuffle from map.
func (p *Pipeline) produce() {
	for p.wantBatch() {
		for p.cur < p.cfg.Batch && p.taken < p.cfg.Records {
			if !p.take() {
				return
			}
			p.cur++
		}
		last := p.taken == p.cfg.Records
		if p.cur == p.cfg.Batch || (last && p.cur > 0 && !p.cfg.DropRemainder) {
			p.emit(p.cur)
		}
		p.cur = 0
		if last {
			p.endOfEpoch()
		}
	}
}

func (p *Pipeline) wantBatch() bool {
	if !p.started || p.iterDone {
		return false
	}
	if p.cfg.Prefetch == 0 {
		return p.bufLen() < p.wLen()
	}
	return p.bufLen() < p.tuner.limit
}

// take moves one element from the shuffle buffer (filling it first) or straight from the
// map; false means the element is not ready yet.
func (p *Pipeline) take() bool {
	if s := p.cfg.ShuffleBuffer; s > 0 {
		// ShuffleDatasetOp fills its buffer from the input before it returns an element.
		for p.shuf < s && p.mapOut < p.cfg.Records {
			if !p.takeFromMap() {
				return false
			}
			p.shuf++
			p.notePeak()
		}
		p.shuf--
	} else if !p.takeFromMap() {
		return false
	}
	p.taken++
	return true
}

func (p *Pipeline) emit(elems int) {
	now := p.e.Now()
	p.advance(now)
	b := batch{elems: elems, epoch: p.epoch}
	if p.cfg.PrefetchToDevice {
		start := max(now, p.copyFree)
		b.onDevice = start + p.copyTime(elems)
		p.copyFree = b.onDevice
		p.st.H2DTime += b.onDevice - start
	}
	if p.bufHead > 0 && p.bufHead == len(p.buf) {
		p.buf, p.bufHead = p.buf[:0], 0
	}
	p.buf = append(p.buf, b)
	p.level.add(now, float64(p.bufLen()))
	p.notePeak()
}

func (p *Pipeline) copyTime(elems int) sim.Time {
	if r := p.cfg.Replicas; r > 1 {
		elems = (elems + r - 1) / r // the largest replica's share; the links copy in parallel
	}
	bytes := int64(elems) * p.cfg.ElementBytes
	if p.cfg.Pinned {
		return transfer(bytes, p.cfg.H2DBandwidth, p.cfg.H2DLatency)
	}
	return transfer(bytes, p.cfg.PageableBandwidth, p.cfg.PageableLatency)
}

// endOfEpoch: the iterator reached the end of the dataset.
func (p *Pipeline) endOfEpoch() {
	if p.epoch == 1 && (p.cfg.Cache == "memory" || p.cfg.Cache == "file") && !p.st.HostOOM {
		// The cache is complete once its writer saw the end of its input
		// (cache_dataset_ops.cc): later epochs read from it.
		p.cacheComplete = true
	}
	if p.cfg.Repeat {
		p.startEpoch(p.e.Now())
		return
	}
	p.iterDone = true
}

// serve hands ready batches to waiting consumers, in order, through the copy to the GPU.
func (p *Pipeline) serve() {
	now := p.e.Now()
	for p.wLen() > 0 && p.bufLen() > 0 {
		p.advance(now)
		w := p.waiters[p.wHead]
		p.waiters[p.wHead] = waiter{}
		p.wHead++
		if p.wHead == len(p.waiters) {
			p.waiters, p.wHead = p.waiters[:0], 0
		}
		// PrefetchDatasetOp::Consume records the buffer size before it pops.
		p.tuner.recordConsumption(p.bufLen())
		b := p.buf[p.bufHead]
		p.bufHead++
		p.level.add(now, float64(p.bufLen()))
		start := now + sim.FromSeconds(p.cfg.DeliverOverhead)
		var ready sim.Time
		if b.onDevice > 0 {
			ready = max(start, b.onDevice)
		} else {
			cs := max(start, p.copyFree)
			ready = cs + p.copyTime(b.elems)
			p.copyFree = ready
			p.st.H2DTime += ready - cs
		}
		p.st.Batches++
		p.st.Elements += b.elems
		p.st.InputWait += now - w.asked
		p.st.ConsumerWait += ready - w.asked
		ep := &p.st.Epochs[b.epoch-1]
		if ep.Batches == 0 {
			ep.FirstBatch = ready
		}
		ep.Batches++
		ep.Elements += b.elems
		ep.End = ready
		fn, n := w.fn, b.elems
		p.e.At(ready, func() { fn(ready, n) })
	}
}

// hostBytes is what the pipeline holds in host RAM now.
func (p *Pipeline) hostBytes() int64 {
	eb := p.cfg.ElementBytes
	return p.cacheBytes + int64(p.shuf+p.n+p.cur)*eb + int64(p.bufLen())*p.batchBytes()
}

func (p *Pipeline) freeMemory() int64 { return p.cfg.Host.MemoryBytes - p.hostBytes() }

func (p *Pipeline) notePeak() {
	if b := p.hostBytes(); b > p.st.PeakHostBytes {
		p.st.PeakHostBytes = b
	}
}

// Stats returns the statistics so far.
func (p *Pipeline) Stats() Stats {
	now := p.e.Now()
	p.advance(now)
	s := p.st
	s.Epochs = append([]Epoch(nil), p.st.Epochs...)
	s.Autotune = append([]TuneEvent(nil), p.st.Autotune...)
	s.Notes = append([]string(nil), p.st.Notes...)
	s.Parallelism = p.par
	s.PrefetchLimit = p.tuner.limit
	s.CacheBytes = p.cacheBytes
	s.CacheComplete = p.cacheComplete
	if s.Gets > 0 {
		s.BufferEmptyFraction = float64(s.EmptyGets) / float64(s.Gets)
	}
	if el := (now - p.t0).Seconds(); el > 0 && p.started {
		s.BufferEmptyTimeFraction = p.empty.Seconds() / el
		s.CoreBusyFraction = s.MapCPUTime.Seconds() / (float64(p.cores) * el)
	}
	if p.parInt > 0 {
		s.WorkerBusyFraction = s.MapCPUTime.Seconds() / p.parInt
	}
	s.BufferLevel = p.level.samples(now)
	return s
}
