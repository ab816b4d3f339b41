package train

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/gpusim/gpusim/allocator"
	"github.com/gpusim/gpusim/framework"
	"github.com/gpusim/gpusim/hw"
	"github.com/gpusim/gpusim/models"
	"github.com/gpusim/gpusim/sim"
)

// Step-time categories of Result.Breakdown, in display order.
const (
	CatInput     = "input"     // waiting for the next batch from tf.data
	CatForward   = "forward"   // forward-pass kernels
	CatBackward  = "backward"  // backward-pass kernels (and gradient accumulation)
	CatLaunch    = "launch"    // GPU idle while the host issues kernels (host-bound)
	CatSync      = "sync"      // waiting for the slowest replica
	CatAllReduce = "allreduce" // NCCL all-reduce of the gradients
	CatOptimizer = "optimizer" // optimizer update kernels
	CatCompile   = "compile"   // XLA compiling the step (first step, and each new input shape)
)

var categories = []string{CatInput, CatForward, CatBackward, CatLaunch, CatSync, CatAllReduce, CatOptimizer, CatCompile}

const (
	catInput = iota
	catForward
	catBackward
	catLaunch
	catSync
	catAllReduce
	catOptimizer
	catCompile
	numCats
)

// Run simulates cfg once and returns what it measured. It returns an error for a
// configuration TF itself would reject (bad option combinations, unknown model or GPU);
// running out of memory is a result (Result.OOM). Comparisons with other runs (one GPU,
// float32) and the diagnosis are package analysis's. It returns ctx's error soon after ctx
// is done (within MaxEventsPerCheck events), and an error wrapping ErrTooManyEvents when the
// run would take more than MaxEvents events.
func Run(ctx context.Context, cfg Config) (*Result, error) { return runCapped(ctx, cfg, MaxEvents) }

// runCapped is Run with a cap of maxEvents events.
func runCapped(ctx context.Context, cfg Config, maxEvents uint64) (*Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	res, r, err := runOnce(ctx, cfg, maxEvents, true)
	if err == nil && res.OOM != nil && len(r.active) < len(r.replicas) {
		// Out of memory: the replicas are not copies of replica 0 at the failure (replay.go).
		res, _, err = runOnce(ctx, cfg, maxEvents, false)
	}
	return res, err
}

// runOnce runs cfg, simulating symmetric replicas once when symmetric is set and the proof
// holds.
func runOnce(ctx context.Context, cfg Config, maxEvents uint64, symmetric bool) (*Result, *runner, error) {
	r, err := newRunner(cfg, symmetric)
	if err != nil {
		return nil, nil, err
	}
	r.eng.SetInterrupt(MaxEventsPerCheck, func() bool {
		if err := ctx.Err(); err != nil {
			r.abort = err
		} else if n := r.eng.Processed(); n >= maxEvents {
			r.abort = fmt.Errorf("%w: stopped at %d events in step %d of %d (fewer steps, a smaller batch or fewer GPUs simulate in fewer events)", ErrTooManyEvents, n, r.step, cfg.Steps)
		}
		return r.abort != nil
	})
	res, err := r.run()
	if err == nil && r.abort != nil {
		return nil, nil, r.abort
	}
	return res, r, err
}

// MaxEvents caps the events one run simulates, so that a configuration too large to simulate
// ends with an error instead of running for hours: about a minute of simulation at the
// engine's tens of millions of events per second (docs/design.md's budget), far above a 1M-step
// ResNet-50 run on 8 GPUs with fast-forward.
const MaxEvents = 1 << 30

// MaxEventsPerCheck is how often (in events) a run looks at its context and at MaxEvents.
const MaxEventsPerCheck = 1 << 12

// ErrTooManyEvents is the error of a run stopped at MaxEvents.
var ErrTooManyEvents = errors.New("too many simulated events")

// MaxSimulatedTime caps the simulated time of one run: 1,000,000 s (11.6 days), several times
// a 90-epoch ImageNet training, while the per-replica utilization samples (5 a second,
// pipeline.NVMLSamplePeriod) stay within 40 MB.
const MaxSimulatedTime = 1_000_000 * sim.Second

// ErrTooLong is the error of a run stopped at MaxSimulatedTime.
var ErrTooLong = errors.New("simulated run too long")

// CheckCatalog checks the names that need the model zoo and the GPU table. Errors are
// *FieldError.
func CheckCatalog(cfg *Config) error {
	var errs []error
	if cfg.Model != "" {
		if err := models.Known(cfg.Model); err != nil {
			errs = append(errs, &FieldError{Field: "Model", Err: err})
		}
	}
	if _, err := models.LookupOptimizer(cfg.Optimizer); err != nil {
		errs = append(errs, &FieldError{Field: "Optimizer", Err: err})
	}
	if cfg.GPU != "" && cfg.GPUProfile == nil {
		if _, err := hw.LookupGPU(cfg.GPU); err != nil {
			errs = append(errs, &FieldError{Field: "GPU", Err: err})
		}
	}
	return errors.Join(errs...)
}

type replica struct {
	id      int    // replica index
	logical int    // its logical GPU: index into runner.mach.allocs and runner.mach.configs
	device  string // "/device:GPU:0"
	alloc   allocator.Allocator
	plans   []*plan // one per micro-step of an update
	share   int     // replicas on this replica's physical GPU (virtual devices)
	onStart func()  // r.opStart(rep), allocated once
	onEnd   func()  // r.opEnd(rep), allocated once
	// the replica's seeded stream and this step's kernel time factor (0 = none, one
	// replica): replicas.go
	rng    *rand.Rand
	jitter float64

	exec  replicaExec   // where it is in its step, and the step's times (exec.go)
	mem   replicaMemory // the tensors and buffers it holds (memory.go)
	stats memStats      // what its memory did (memory.go)
	proof stepProof     // what proves its steps repeat (replay.go)
}

// runner is one run: the configuration, the engine, the replicas and the step being run,
// with the parts that own the rest of the run's state (doc.go names each part's files).
type runner struct {
	cfg Config
	// fw is the run's framework and releases: every release-dependent rule reads it.
	fw  framework.Profile
	eng *sim.Engine

	mach     machine  // the hardware and TF's devices (machine.go)
	plans    runPlans // the priced step plans (plans.go)
	feed     feed     // the host input (feed.go)
	sync     gradSync // the all-reduce and the barriers (sync.go)
	sched    schedule // the loss-scale skips and XLA compiles drawn for every step (schedule.go)
	replay   replay   // what may be replayed instead of simulated (replay.go)
	rec      records  // what the steps measured (steprecord.go)
	replicas []*replica
	// active are the replicas simulated: all, or replica 0 alone when the others are proven
	// to be its copies (replay.go)
	active []*replica

	step      int // optimizer update being run, 1-based
	stepStart sim.Time
	end       sim.Time // when the last step ended or the OOM happened
	oom       *OOM
	abort     error // why the engine was interrupted: ctx done, or MaxEvents reached
	notes     []string
	warnings  []string
}

// newRunner prepares a run of cfg; symmetric lets it simulate symmetric replicas once
// (replay.go).
func newRunner(cfg Config, symmetric bool) (*runner, error) {
	rv, err := resolve(&cfg)
	if err != nil {
		return nil, err
	}
	r := &runner{cfg: cfg, fw: rv.fw, eng: sim.NewEngine()}
	r.mach.gpu, r.plans.model, r.mach.host, r.mach.hostSet = rv.gpu, rv.model, rv.host, rv.hostSet
	r.feed.batches = map[batchKey]*batch{}
	r.plans.convNHWC = cfg.XLA && xlaConvNHWC(rv.gpu, rv.fw) ||
		!cfg.XLA && cfg.LayoutOptimizer != nil && !*cfg.LayoutOptimizer
	if err := r.setupDevices(); err != nil {
		return nil, err
	}
	r.active = r.replicas
	if r.oom != nil {
		return r, nil // the process could not start: nothing to plan
	}
	if err := r.setupPlans(); err != nil {
		return nil, err
	}
	if r.feed.inputs, r.feed.perProcess, err = newInputs(r.eng, cfg, r.mach.host, r.plans.replicaBatches); err != nil {
		return nil, err
	}
	if p := r.replicas[0].plans; len(p) > 0 {
		r.plans.stateArrays = stateArrays(p[0].Plan, cfg.Precision)
	}
	if cfg.FitFromArrays && r.feed.inputs == nil {
		r.feed.inputs, r.feed.perProcess = []inputSource{newArrayFeed(r.eng, r.plans.model, cfg, r.fw, r.plans.stateArrays, r.mach.gpu.DispatchScale())}, len(r.replicas)
	}
	if r.feed.inputs != nil {
		r.feed.input = r.feed.inputs[0]
	}
	if err := r.sched.drawLossScale(&r.cfg, len(r.replicas)); err != nil {
		return nil, err
	}
	r.setupXLA()
	if err := r.setupAllReduce(); err != nil {
		return nil, err
	}
	if err := r.setupReplicas(); err != nil {
		return nil, err
	}
	r.setupReplay(symmetric)
	return r, nil
}

// newReplica is replica id on logical device i; onGPU are every replica's logical devices
// (replicas sharing i's card count in its share).
func (r *runner) newReplica(id, i int, onGPU []int) *replica {
	rep := &replica{id: id, logical: i, device: r.mach.configs[i].Device, alloc: r.mach.allocs[i]}
	rep.stats.sampler = newSampler(r.cfg.TimelinePoints)
	rep.exec.meter = busyMeter{MaxSamples: r.cfg.UtilizationSamples}
	for k := range rep.stats.profiles {
		rep.stats.profiles[k] = newSampler(profilePoints)
	}
	for _, j := range onGPU {
		if r.mach.configs[j].Physical == r.mach.configs[i].Physical {
			rep.share++
		}
	}
	rep.onStart = func() { r.opStart(rep) }
	rep.onEnd = func() { r.opEnd(rep) }
	return rep
}
