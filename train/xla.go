package train

import (
	"fmt"
	"strings"

	"github.com/gpusim/gpusim/allocator"
	"github.com/gpusim/gpusim/framework"
	"github.com/gpusim/gpusim/hw"
	"github.com/gpusim/gpusim/internal/units"
	"github.com/gpusim/gpusim/models"
	"github.com/gpusim/gpusim/sim"
)

// The run's part of XLA: when the step compiles (setupXLA, compileThenStart) and how a
// compiled op is priced on hw's kinds (opWork). What XLA does to the step's graph is models'
// (models/xla*.go), which XLA a run has framework's (r.fw).

// xlaState is the run's compile schedule: which steps compile (a shape seen for the first
// time), and how long one compile takes.
type xlaState struct {
	compiles []bool // per step (0-based)
	last     int    // the last step (1-based) that compiles; 0 = none
	dur      sim.Time
	count    int
	total    sim.Time
}

// setupXLA draws the input shape of every step (uniformly among XLADistinctShapes, seeded by
// the run) and marks the steps that see a shape for the first time: under jit_compile=True
// TF compiles the cluster for each new input signature (XlaCompilationCache keys on shapes),
// the first step always. Each compile takes models.XLACompileSeconds of the first replica's plan.
func (r *runner) setupXLA() {
	if !r.cfg.XLA || len(r.replicas) == 0 {
		return
	}
	n := max(r.cfg.XLADistinctShapes, 1)
	rng := sim.Stream(r.cfg.Seed, "xla-shapes")
	seen := make([]bool, n)
	x := &r.sched.xla
	x.compiles = make([]bool, r.cfg.Steps)
	x.dur = sim.FromSeconds(models.XLACompileSeconds(r.replicas[0].plans[0].Plan))
	for i := range x.compiles {
		s := 0
		if i > 0 {
			s = rng.IntN(n)
		}
		if !seen[s] {
			seen[s], x.compiles[i], x.last = true, true, i+1
		}
	}
}

// compileThenStart starts rep's step, after compiling it when the step compiles: the host
// compiles before it issues the step's first kernel, so the GPU idles (the tf.data pipeline
// keeps prefetching meanwhile).
func (r *runner) compileThenStart(rep *replica) {
	if r.step-1 >= len(r.sched.xla.compiles) || !r.sched.xla.compiles[r.step-1] {
		r.startMicro(rep)
		return
	}
	d := r.sched.xla.dur
	if rep == r.replicas[0] {
		r.sched.xla.count++
		r.sched.xla.total += d
	}
	rep.exec.cat[catCompile] += d
	rep.exec.mark += d
	r.eng.At(r.eng.Now()+d, func() { r.startMicro(rep) })
}

// compilesAfter reports whether a step after step (1-based) still compiles (no fast-forward
// past it).
func (s *schedule) compilesAfter(step int) bool { return s.xla.last > step }

// xlaResult fills the result's compile counts and says what they cost.
func (r *runner) xlaResult(res *Result) {
	if r.sched.xla.count == 0 {
		return
	}
	res.XLACompiles = r.sched.xla.count
	res.XLACompileTime = r.sched.xla.total.Seconds()
	times := "once"
	if r.sched.xla.count > 1 {
		times = fmt.Sprintf("%d times", r.sched.xla.count)
	}
	msg := fmt.Sprintf("XLA compiled the train step %s, %s each (%s in all, %.0f%% of the run's %s)",
		times, units.FormatSeconds(r.sched.xla.dur.Seconds()), units.FormatSeconds(res.XLACompileTime),
		100*res.XLACompileTime/max(res.Elapsed, 1e-12), units.FormatSeconds(res.Elapsed))
	if r.sched.xla.count > 1 {
		msg += fmt.Sprintf(": each new input shape (xla_distinct_shapes: %d) recompiles; pad or bucket inputs to fewer shapes", r.cfg.XLADistinctShapes)
	}
	res.Notes = append(res.Notes, msg)
}

// xlaMemoryNote says what buffer assignment and rematerialization did (models.XLAAssign).
func xlaMemoryNote(x *models.XLATemp) string {
	if x == nil {
		return ""
	}
	msg := fmt.Sprintf("XLA packs the step's temporaries into one %s buffer (buffer assignment with liveness sharing)", allocator.HumanReadableNumBytes(x.Bytes))
	if x.Target > 0 {
		if x.Bytes > x.Target {
			msg += fmt.Sprintf("; rematerialization could not reach %s: only reduced to %s, down from %s",
				allocator.HumanReadableNumBytes(x.Target), allocator.HumanReadableNumBytes(x.Bytes), allocator.HumanReadableNumBytes(x.Needed))
		} else {
			msg += fmt.Sprintf("; rematerialized from %s to fit the memory limit", allocator.HumanReadableNumBytes(x.Needed))
		}
		msg += fmt.Sprintf(", recomputing %.0f%% of the cheap forward ops in backward", 100*x.Recomp)
	}
	return msg
}

// XLABatchNormPasses is how many times XLA's expansion of a training FusedBatchNormV3 moves
// the bytes the plan counts for it (input, output and, backward, the output gradient once
// each). BatchNormExpander (gpu_compiler.cc) lowers batch-norm-training to the mean and the
// mean of squares, reduced together over batch and space, and an element-wise normalization,
// and its gradient to two reductions (sum of dy, sum of dy*x_hat) and an element-wise dx: the
// reductions over all but the channel axis are column reductions that cannot share a kernel
// with the element-wise pass, so x is read twice forward (3 tensors moved where 2 are counted)
// and x and dy twice backward (5 where 3 are counted): 1.5 and 1.67, 1.6 over a step.
const XLABatchNormPasses = 1.6

// opWork is the cost model's Work for a plan op. Under XLA a batch or layer norm is not a
// cuDNN/Eigen kernel: tf2xla lowers FusedBatchNormV3 to HLO batch-norm ops that XLA's GPU
// compiler expands into reductions and element-wise ops (BatchNormExpander in
// gpu_compiler.cc; xla_gpu_use_cudnn_batchnorm defaults to false in debug_options_flags.cc)
// and fuses; such a kernel is priced as hw.KindFusion, at the streaming memory efficiency
// rather than the framework norm kernels', its bytes times XLABatchNormPasses. A Keras 3
// batch norm (framework.Profile.Keras 3) is not FusedBatchNormV3 but ops.moments and an element-wise normalization, which XLA compiles to
// two dependent column reductions and a loop fusion, and its gradient by autodiff: it stays
// hw.KindNorm as a Graph Work, priced at what Keras 3's batch norm measured under XLA on the
// H200 (hw.MemXLABatchNorm and the others, hw.XLABatchNormKernels). A layer norm reduces
// along rows, which XLA fuses into one pass, and is priced as hw.KindFusion.
//
// Under XLA every kernel of the step but the input copy (the h2d op, outside the compiled
// program) is hw.Work.Graph: XLA's GPU runtime replays the compiled step from CUDA graphs
// (command buffers for fusions, cuBLAS, cuDNN and custom calls are on by default; see
// hw.GraphHostPerKernel), so the host does not launch kernel by kernel.
func (r *runner) opWork(op models.Op) hw.Work {
	w := work(op, r.tf32())
	w.CuDNN = r.fw.CuDNN
	if r.cfg.XLA && w.Kind == hw.KindNorm {
		fwd, grad := strings.HasSuffix(op.Name, "/FusedBatchNormV3"), strings.HasSuffix(op.Name, "/FusedBatchNormV3/grad")
		switch {
		case r.fw.Keras == 3 && fwd:
			w.Kernels = hw.XLABatchNormKernels
		case r.fw.Keras == 3 && grad:
			w.Kernels = hw.XLABatchNormGradKernels
		default:
			w.Kind = hw.KindFusion
			if fwd || grad {
				w.Bytes *= XLABatchNormPasses
			}
		}
	}
	if r.cfg.XLA && !r.fw.Has(framework.XLATritonNormalization) {
		switch {
		case strings.HasSuffix(op.Name, "/LayerNorm"), strings.HasSuffix(op.Name, "softmax/softmax"):
			w.Bytes *= hw.XLARowReductionPasses
		case strings.HasSuffix(op.Name, "/LayerNorm/grad"), strings.HasSuffix(op.Name, "softmax/softmax/grad"):
			w.Bytes *= hw.XLARowReductionGradPasses
		}
	}
	if r.cfg.XLA && w.Kind != hw.KindH2D && !op.OutsideXLA {
		w.Graph = true
	}
	if w.Kind == hw.KindConv && r.plans.convNHWC {
		w.NHWC = true
	}
	if w.Kind == hw.KindConv && !cudnnAutotune(r.cfg.Env) {
		w.NoAutotune = true
	}
	return w
}

// xlaConvNHWC reports whether the XLA of the run lays float32 convolutions out NHWC on gpu:
// compute capability 9.0 and newer, where its release has framework.XLAHopperConvNHWC.
func xlaConvNHWC(gpu hw.GPU, fw framework.Profile) bool {
	return gpu.CCMajor >= 9 && fw.Has(framework.XLAHopperConvNHWC)
}
