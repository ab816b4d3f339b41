package train

import (
	"fmt"
	"strings"

	"github.com/gpusim/gpusim/allocator"
	"github.com/gpusim/gpusim/framework"
	"github.com/gpusim/gpusim/hw"
	"github.com/gpusim/gpusim/models"
	"github.com/gpusim/gpusim/sim"
	"github.com/gpusim/gpusim/train/visibility"
)

// runPlans are the run's step plans as the replicas share them: the model, each replica's
// share of the global batch, the priced plans' cache key and layout, what the plans give the
// other parts (gradient bytes, Keras 3's state arrays, XLA's temp buffer) and the gradient
// accumulation op, priced at its first run.
type runPlans struct {
	// convNHWC: the run's convolutions are NHWC: XLA's layout (xlaConvNHWC), or TF's without
	// its layout optimizer.
	convNHWC bool
	gpuKey   string // gpu written out, the priced-plan cache's key (memo.go)
	model    *models.Model
	// replicaBatches is each replica's share of the global batch (splitBatch), computed once
	// in setupPlans.
	replicaBatches []int
	gradBytes      int64
	stateArrays    int             // Framework jax: the arrays Keras passes to the train step (dispatch.go)
	xlaTemp        *models.XLATemp // buffer assignment of the first plan (nil without XLA)
	accumCost      *opCost         // the gradient accumulation op, priced at its first run
}

// opCost is a plan op priced once: device time, host issue time, category.
type opCost struct {
	exec, issue sim.Time
	cat         int
	kind        int // index into hw.Kinds
}

// plan is a models.Plan with its ops priced for one GPU.
type plan struct {
	*models.Plan
	batch    int
	costs    []opCost
	optStart int    // index of the first Optimizer-phase op (len(Ops) if none)
	isPers   []bool // tensor is a variable or slot: allocated once per replica
}

// splitBatch splits n as tf.distribute splits a global batch over k replicas (floor(n/k)
// each, the first n mod k one more: visibility.SplitBatch).
func splitBatch(n, k int) []int {
	out, err := visibility.SplitBatch(n, k)
	if err != nil {
		panic("train: " + err.Error()) // n > 0 and k >= 1 hold after Validate
	}
	return out
}

func (r *runner) setupPlans() error {
	replicaBatches := splitBatch(r.cfg.Batch, len(r.replicas))
	r.plans.replicaBatches = replicaBatches
	cache := map[int]*plan{}
	for i, rep := range r.replicas {
		for _, mb := range splitBatch(replicaBatches[i], r.cfg.AccumulationSteps) {
			if mb == 0 {
				// Name the key that pushes the product over the batch: the accumulation when
				// each replica has a sample of its own.
				field := "Batch"
				if replicaBatches[i] > 0 && r.cfg.AccumulationSteps > 1 {
					field = "AccumulationSteps"
				}
				return &FieldError{Field: field, Err: fmt.Errorf("batch %d is smaller than replicas (%d) x AccumulationSteps (%d)", r.cfg.Batch, len(r.replicas), r.cfg.AccumulationSteps), Mentions: []string{"AccumulationSteps"}}
			}
			p, ok := cache[mb]
			if !ok {
				var err error
				if p, err = r.makePlan(mb, rep.alloc.Stats().BytesLimit); err != nil {
					return err
				}
				cache[mb] = p
			}
			rep.plans = append(rep.plans, p)
		}
		n := len(rep.plans[0].Tensors)
		for _, p := range rep.plans {
			n = max(n, len(p.Tensors))
		}
		rep.mem.live = make([]allocator.Handle, n)
		rep.mem.isLive = make([]bool, n)
		rep.exec.tuned = map[string]bool{}
	}
	r.plans.gradBytes = r.replicas[0].plans[0].GradientBytes()
	if r.cfg.AccumulationSteps > 1 && r.plans.model.HasBatchNorm {
		// Seed guide, gradient accumulation: BatchNormalization normalizes each micro-batch.
		r.warnings = append(r.warnings, fmt.Sprintf("BatchNorm statistics see only the micro-batch: %s has BatchNormalization, and with %d accumulation steps it normalizes micro-batches of %d samples, not the global batch of %d",
			r.cfg.Model, r.cfg.AccumulationSteps, r.replicas[0].plans[0].batch, r.cfg.Batch))
	}
	return nil
}

// makePlan builds and prices the step of one micro-batch; limit is the replica's allocator
// limit (XLA's rematerialization aims below it). The priced plan is shared by every run of the
// process that asks for the same one (memo.go).
func (r *runner) makePlan(batch int, limit int64) (*plan, error) {
	mp, err := r.plans.model.Plan(planOptions(&r.cfg, r.fw, r.mach.gpu, batch))
	if err != nil {
		return nil, &FieldError{Field: "Model", Err: err}
	}
	if r.plans.gpuKey == "" {
		r.plans.gpuKey = gpuKey(r.mach.gpu)
	}
	k := pricedKey{mp: mp, gpu: r.plans.gpuKey, tf32: r.tf32(), cudnn: r.fw.CuDNN, xla: r.cfg.XLA, noAutotune: !cudnnAutotune(r.cfg.Env),
		splitRows: !r.fw.Has(framework.XLATritonNormalization), splitEpi: !r.fw.Has(framework.XLAGEMMEpilogues), convNHWC: r.plans.convNHWC, onDevice: r.inputOnDevice()}
	if r.cfg.XLA {
		k.keepGrads, k.limit = len(r.replicas) > 1 || r.cfg.AccumulationSteps > 1, limit
		k.keras = r.fw.Keras
	}
	p, x, err := pricedPlan(k, func() (*plan, *models.XLATemp, error) { return r.pricePlan(mp, batch, k) })
	if err != nil {
		return nil, err
	}
	if note := xlaMemoryNote(x); note != "" && r.plans.xlaTemp == nil {
		r.notes = append(r.notes, note)
		r.plans.xlaTemp = x
	}
	return p, nil
}

// pricePlan applies XLA's buffer assignment to mp (under XLA) and prices its ops on r's GPU.
func (r *runner) pricePlan(mp *models.Plan, batch int, k pricedKey) (*plan, *models.XLATemp, error) {
	var x *models.XLATemp
	if k.xla {
		mp, x = models.XLAAssign(mp, k.limit, k.keepGrads)
	}
	p := &plan{Plan: mp, batch: batch, costs: make([]opCost, len(mp.Ops)), optStart: len(mp.Ops), isPers: make([]bool, len(mp.Tensors))}
	for _, i := range mp.Persistent {
		p.isPers[i] = true
	}
	for _, i := range mp.Slots {
		p.isPers[i] = true
	}
	for i, op := range mp.Ops {
		w := r.opWork(op)
		extra := 0.0
		if w.Graph && w.Kind == hw.KindNorm && op.NormBytes > 0 && op.Bytes > op.NormBytes {
			// XLA's batch norm moves its own bytes at its measured rate; what the fused
			// activation and the outputs kept for backward add streams at the loop fusions'
			// rate (a ReLU fused into the normalizing pass costs nothing more:
			// testdata/h200/memkinds, bn_relu_fwd against bn_fwd).
			extra = op.Bytes - op.NormBytes
			w.Bytes = op.NormBytes
		}
		var epilogue hw.Work
		if w.Graph && k.splitEpi && op.EpilogueBytes > 0 && op.EpilogueBytes < w.Bytes {
			// The bias add, activation and casts after a GEMM run as a loop fusion of their own
			// (without framework.XLAGEMMEpilogues): their bytes do not hide behind the GEMM's math.
			epilogue = hw.Work{Kind: hw.KindFusion, Bytes: op.EpilogueBytes, Kernels: 1, Graph: true, DType: w.DType}
			w.Bytes -= op.EpilogueBytes
		}
		if r.inputOnDevice() && op.Kind == models.HostToDevice {
			// The batch is on the GPU already: no copy, no kernel.
			p.costs[i] = opCost{cat: catForward, kind: kindIndex(w.Kind)}
			continue
		}
		c, err := r.mach.gpu.Cost(w)
		if err != nil {
			return nil, nil, fmt.Errorf("price op %s: %w", op.Name, err)
		}
		if extra > 0 {
			c.Exec += extra / r.mach.gpu.ByteRate(hw.Work{Kind: hw.KindFusion, Graph: true, DType: w.DType})
		}
		if epilogue.Bytes > 0 {
			e, err := r.mach.gpu.Cost(epilogue)
			if err != nil {
				return nil, nil, fmt.Errorf("price op %s: %w", op.Name, err)
			}
			c.Exec, c.Issue = c.Exec+e.Exec, c.Issue+e.Issue
		}
		cat := catForward
		switch op.Phase {
		case models.Backward:
			cat = catBackward
		case models.Optimizer:
			cat = catOptimizer
			if i < p.optStart {
				p.optStart = i
			}
		}
		p.costs[i] = opCost{exec: sim.FromSeconds(c.Exec), issue: sim.FromSeconds(c.Issue), cat: cat, kind: kindIndex(w.Kind)}
	}
	return p, x, nil
}

// envTrue reads a TF boolean environment variable as tsl's ReadBoolFromEnvVar does: "1" or
// "true" (any case) is true.
func envTrue(v string) bool { return v == "1" || strings.EqualFold(v, "true") }

// tf32 reports whether float32 matmuls and convolutions may run as TF32: the run allows it
// (Config.TF32) and its release has it (framework.Release.TF32: TF 2.4+, NVIDIA's 1.15, cuDNN 8+).
func (r *runner) tf32() bool { return r.cfg.TF32 && r.fw.TF32 }

// cudnnAutotune reads TF_CUDNN_USE_AUTOTUNE as TF does (conv_ops_gpu.cc CudnnUseAutotune:
// tsl's ReadBoolFromEnvVar with default true, so only "0" or "false", any case, turn it off).
// Off, a TF convolution runs cuDNN's heuristic's first algorithm (hw.Work.NoAutotune).
func cudnnAutotune(env map[string]string) bool {
	v := env["TF_CUDNN_USE_AUTOTUNE"]
	return !(v == "0" || strings.EqualFold(v, "false"))
}

// autoJit reports whether env's TF_XLA_FLAGS turn on TF's XLA auto-clustering
// (--tf_xla_auto_jit=1, 2 or single-gpu(N); 0 and -1 leave it to the session: flags.cc,
// SetterForXlaAutoJitFlag), which is what tf.config.optimizer.set_jit(True) and TF1's
// global_jit_level ON_1 do from the API: xla is then auto-clustering, not jit_compile.
func autoJit(env map[string]string) bool {
	for _, f := range strings.Fields(env["TF_XLA_FLAGS"]) {
		if v, ok := strings.CutPrefix(f, "--tf_xla_auto_jit="); ok && v != "0" && v != "-1" {
			return true
		}
	}
	return false
}

// graphRewriteAMP reports whether env turns on TF1's automatic mixed precision graph rewrite:
// TF_ENABLE_AUTO_MIXED_PRECISION (NGC containers and TF 1.14+) or its alias
// TF_ENABLE_AUTO_MIXED_PRECISION_GRAPH_REWRITE (grappler/optimizers/meta_optimizer.cc,
// AutoMixedPrecisionEnabled). A mixed_float16 step then gets each op's dtype from grappler's
// lists instead of from a Keras policy.
func graphRewriteAMP(env map[string]string) bool {
	return envTrue(env["TF_ENABLE_AUTO_MIXED_PRECISION"]) || envTrue(env["TF_ENABLE_AUTO_MIXED_PRECISION_GRAPH_REWRITE"])
}

// work maps a plan op to the cost model's Work.
func work(op models.Op, tf32 bool) hw.Work {
	kind := op.Kind.String()
	if op.Kind == models.Recurrent {
		kind = hw.KindMatMul // an LSTM/GRU step is a pair of GEMMs plus element-wise gates
	}
	dtype := hw.Float32
	switch op.DType {
	case models.Float16:
		dtype = hw.Float16
	case models.BFloat16:
		dtype = hw.BFloat16
	}
	g := op.GEMM
	return hw.Work{Kind: kind, FLOPs: op.FLOPs, Bytes: op.Bytes, Kernels: op.Kernels, DType: dtype, TF32: tf32, Grad: op.Phase == models.Backward,
		ClassBytes: op.ClassBytes, ClassElems: op.ClassElems,
		Shape: hw.Shape{M: g.M, N: g.N, K: g.K, Batch: g.Batch, FilterH: g.FilterH, FilterW: g.FilterW, Stride: g.Stride, InC: g.InC, Spatial: g.Spatial}}
}

// blasWorkspace is the cuBLAS workspace XLA passes each GEMM (models.PlanOptions.BlasWorkspace):
// 32 MiB from compute capability 9.0 (Hopper), 4 MiB before.
func blasWorkspace(ccMajor int) int64 {
	if ccMajor >= 9 {
		return 32 << 20
	}
	return 4 << 20
}

// inputOnDevice reports whether the step finds its batch in GPU memory: InputOnDevice; Keras 3
// on JAX fitting from numpy arrays, whose iterator puts each batch on the device one batch
// ahead (JAXEpochIterator._one_batch_ahead_iterator, keras/src/backend/jax/trainer.py:
// jax.device_put runs while the step before it does), so the copy is the feed's (arrays.go),
// not the step's; or a tf.data pipeline, which times the batch's copy itself
// (pipeline.Pipeline.serve: as the step takes the batch, the step waiting for it; with
// PrefetchToDevice as the batch enters the buffer, while earlier steps run), so the step's
// own input op would copy the same bytes a second time.
func (r *runner) inputOnDevice() bool {
	return r.cfg.InputOnDevice || r.cfg.Input != nil || (r.fw.Framework == framework.JAX && r.cfg.FitFromArrays)
}
