package train

// The per-step costs of several replicas as TensorFlow pays them, beyond what one GPU pays:
// the slowest replica's wait (seeded run-to-run variation of each GPU's kernel times), the
// host threads of the one TF runtime that dispatches every replica's ops (MirroredStrategy),
// the launch of the NCCL kernels, and Horovod's fused all-reduce that overlaps the backward
// pass (collective.OverlapBucketed's schedule, with the NCCL kernels' SMs taken from compute).

import (
	"fmt"
	"math"
	"strings"

	"github.com/gpusim/gpusim/allocator"
	"github.com/gpusim/gpusim/collective"
	"github.com/gpusim/gpusim/hw"
	"github.com/gpusim/gpusim/models"
	"github.com/gpusim/gpusim/sim"
)

// stepJitterCV is the run-to-run variation of one GPU's step time: the coefficient of
// variation of a lognormal factor drawn per replica and step and applied to every kernel of
// that replica's step. It is a property of the GPU boards (GPU Boost moves the SM clock with
// power and temperature, so identical kernels on identical cards finish at different times)
// and the only jitter constant: fitted on the DeepLearningExamples ResNet-50 DGX A100 table
// (fit: A100 AMP 8 GPUs; hold-out: A100 TF32, V100 DGX-1 and DGX-2), see calibration_test.go.
// The replicas stay asymmetric on purpose: the slowest one sets every step.
const stepJitterCV = 0.0114

// processSyncPerLevel is the per-step cost of coordinating the replicas of several processes
// (Horovod's background threads agree on the ready tensors; MultiWorkerMirroredStrategy's
// collective executors do the same through their group leader) per level of the log2(n)
// rounds such an agreement takes: fitted with stepJitterCV on the DLE ResNet-50 DGX A100 table
// (calibration_test.go, on the mean step, with Horovod's fusion-buffer copies, TF1's
// graph-rewrite AMP and the cycle negotiated from the host's enqueue: A100 AMP 8 GPUs +0.2%,
// TF32 -0.7%), not a per-model value. One process (MirroredStrategy) pays none.
const processSyncPerLevel = 1.8e-3

// Horovod's defaults (horovod/common/operations.cc, BackgroundThreadLoop): the background
// thread coordinates the tensors the ranks have enqueued every HOROVOD_CYCLE_TIME
// (SetCycleTimeMs(5)) and fuses them up to HOROVOD_FUSION_THRESHOLD (64 MiB) per NCCL
// all-reduce.
const (
	horovodCycleSeconds   = 5e-3
	horovodFusionBytes    = 64 << 20
	ncclKernelLaunchFloor = 5e-6 // one ncclAllReduce launch per GPU, cudaLaunchKernel's cost
)

// multiState is the per-step bookkeeping of several replicas.
type multiState struct {
	jitterOn bool
	// sharedLanes are the host threads of the one TF runtime (MirroredStrategy without
	// TF_GPU_THREAD_MODE=gpu_private): when each is free next. nil = one host per replica.
	sharedLanes []sim.Time
	// overlap is Horovod's fused all-reduce schedule of one replica at jitter 1, offsets from
	// the start of the micro-step's ops; nil without Horovod.
	overlap *collective.Overlap
	// readyOffsetEnd is the offset of the end of the backward pass in the same timeline.
	readyOffsetEnd float64
	// enqueued is, per Horovod bucket, when the host has issued the ops that produce its
	// last gradient (offset from the start of the micro-step's ops): the TF executor hands a
	// HorovodAllreduce its input once the producing op is enqueued on the GPU, not once it
	// has run, so the background thread negotiates the bucket at its first cycle after that.
	enqueued []float64
	// smShare is the fraction of the GPU's SMs the NCCL kernels hold while they run (one
	// block per channel: src/enqueue.cc launches nChannels blocks).
	smShare float64
	// launch is the host time to launch one step's NCCL kernels on every GPU.
	launch float64
	// fusionCopy is, per Horovod bucket, the time of one of its two fusion-buffer copies (in
	// before the all-reduce, out after it); 0 for a bucket of one tensor.
	fusionCopy []float64
	// postReduce is the time of the per-gradient TF ops around the all-reduce when XLA does
	// not fuse them: Horovod's average and decompression cast, or the float16 casts of a
	// compressed MirroredStrategy all-reduce (setupCompactCasts).
	postReduce float64
	// exposed and overlapped sum, over steps, Horovod's all-reduce after the slowest
	// backward pass and the part hidden under it.
	exposed, overlapped []float64
}

// setupReplicas prepares the multi-replica costs once the all-reduce is planned.
func (r *runner) setupReplicas() error {
	n := len(r.replicas)
	if n < 2 {
		return nil
	}
	m := &r.sync.multi
	if !r.cfg.SymmetricReplicas {
		m.jitterOn = true
		for _, rep := range r.replicas {
			rep.rng = sim.Stream(r.cfg.Seed, fmt.Sprintf("replica/%d/kernel-jitter", rep.id))
		}
	}
	if r.cfg.OneRuntime() && !strings.EqualFold(r.env()["TF_GPU_THREAD_MODE"], "gpu_private") {
		// TF's default GPU thread mode "global" (tensorflow/core/common_runtime/gpu/
		// gpu_device.cc, TF_GPU_THREAD_MODE) issues every GPU's kernels from the one
		// runtime's inter-op threads; with MirroredStrategy the step function holds all
		// replicas' ops, so their dispatch queues on one host. gpu_private gives each GPU its
		// own threads (TF_GPU_THREAD_COUNT), as separate processes have.
		m.sharedLanes = []sim.Time{0}
	}
	channels := r.sync.topo.Channels
	if channels == 0 {
		channels = 2
		if r.sync.topo.Kind != collective.PCIe {
			channels = 2 * max(1, int(math.Round(r.sync.topo.LinkBandwidth/25e9)))
		}
	}
	if r.mach.gpu.SMs > 0 {
		m.smShare = math.Min(1, float64(channels)/float64(r.mach.gpu.SMs))
	}
	// One process launches one ncclAllReduce per pack on each of its GPUs, one after the
	// other (ncclGroupStart/End around them): all n with MirroredStrategy, a host's share with
	// MultiWorkerMirroredStrategy; Horovod's processes launch their own, one per bucket.
	launch := math.Max(r.mach.gpu.LaunchOverhead, ncclKernelLaunchFloor)
	calls := max(len(r.sync.allReduce.Calls), 1)
	m.launch = launch * float64(calls*n/r.cfg.NodeCount())
	if r.sync.allReduce.Impl == collective.ImplNCCL && r.cfg.Strategy != "horovod" {
		// TF's NcclManager (tensorflow/core/nccl/nccl_manager.cc) gives each GPU's NCCL
		// stream its own thread (LoopKernelLaunches) that calls ncclAllReduce for its rank:
		// a collective's launches on the process's GPUs run in parallel, and collectives
		// queue one at a time (collective_mu), so the host pays one launch per call.
		m.launch = launch * float64(calls)
	}
	if r.cfg.Strategy == "horovod" && r.sync.allReduce.Impl == collective.ImplNCCL {
		if err := r.setupHorovod(); err != nil {
			return err
		}
	}
	if r.perGradientOverlap() {
		if err := r.setupPerGradient(); err != nil {
			return err
		}
	}
	return r.setupCompactCasts()
}

// mirroredCompression reports whether a MirroredStrategy run all-reduces float16 casts of its
// float32 gradients (Config.HorovodCompression "fp16" without Horovod: tf_cnn_benchmarks'
// --compact_gradient_transfer under --use_fp16).
func (r *runner) mirroredCompression() bool {
	return r.cfg.Strategy == "mirrored" && r.cfg.HorovodCompression == "fp16"
}

// setupCompactCasts prices the casts around a compressed MirroredStrategy all-reduce. In
// tf_cnn_benchmarks' batch_allreduce.py (compact_grads: each gradient tf.cast to float16
// before the all-reduce and back to float32 after) each cast is a TF element-wise kernel per
// gradient and replica; under XLA auto-clustering the casts are compiled into the clusters
// that produce and consume the gradients, so they cost nothing apart. The replicas cast in
// parallel: one replica's casts are the time the all-reduce gains.
func (r *runner) setupCompactCasts() error {
	if !r.mirroredCompression() || r.cfg.XLA {
		return nil
	}
	p := r.replicas[0].plans[len(r.replicas[0].plans)-1]
	w := hw.Work{Kind: hw.KindCast}
	for _, ti := range p.Gradients {
		if t := p.Tensors[ti]; t.DType == models.Float32 {
			w.Bytes += 2 * float64(t.Bytes+t.Bytes/2) // read float32, write float16; and back
			w.Kernels += 2
		}
	}
	if w.Kernels == 0 {
		return nil
	}
	c, err := r.mach.gpu.Cost(w)
	if err != nil {
		return fmt.Errorf("plan compact gradient casts: %w", err)
	}
	r.sync.multi.postReduce = math.Max(c.Exec, c.Issue)
	return nil
}

// perGradientOverlap reports whether one process's NCCL all-reduces run per gradient while
// the backward pass goes on: MirroredStrategy's NcclAllReduce(num_packs=0) and
// tf_cnn_benchmarks' replicated all_reduce_spec=nccl with its default gradient_repacking=0
// (batch_allreduce.py, AllReduceSpecAlgorithm; allreduce.py, sum_grad_and_var_all_reduce:
// one nccl all_sum per gradient) put one NcclAllReduce op per gradient and device in the
// graph, with no concat that waits for the other gradients, so TF's executor runs each as
// soon as the op producing its gradient has run (dataflow), on NCCL's own stream. Under XLA
// auto-clustering the backward pass is compiled clusters whose outputs all appear when the
// cluster ends (see horovodGradients), so there is nothing to overlap and the all-reduces
// follow the backward pass as with packs.
func (r *runner) perGradientOverlap() bool {
	return r.cfg.Strategy == "mirrored" && r.cfg.OneRuntime() && r.cfg.NumPacks == 0 && !r.cfg.XLA &&
		r.sync.allReduce.Impl == collective.ImplNCCL && r.cfg.AccumulationSteps == 1
}

// setupPerGradient schedules the per-gradient all-reduces of perGradientOverlap from the last
// micro-step's plan: each starts when its gradient is ready on every replica and the previous
// one has ended (one NCCL stream per GPU), and once the host has issued the op that produces
// it (the executor hands NcclAllReduce its input then). No Horovod cycle, no fusion copies.
func (r *runner) setupPerGradient() error {
	p := r.replicas[0].plans[len(r.replicas[0].plans)-1]
	ready, issued, t, _ := r.gradientReadiness(p)
	grads := make([]collective.ReadyGradient, 0, len(p.Gradients))
	enq := make([]float64, 0, len(p.Gradients))
	for i, ti := range p.Gradients {
		rt, ok := ready[ti]
		ht := issued[ti]
		if !ok {
			rt, ht = t, 0
		}
		grads = append(grads, collective.ReadyGradient{Bytes: r.sync.gradSizes[i], Ready: rt})
		enq = append(enq, ht)
	}
	sortReady(grads, enq)
	// A bucket of at least one byte holds one gradient: one ncclAllReduce per gradient.
	o, err := collective.OverlapBucketed(r.sync.topo, grads, 1, "")
	if err != nil {
		return fmt.Errorf("plan per-gradient all-reduce: %w", err)
	}
	m := &r.sync.multi
	m.overlap, m.readyOffsetEnd = &o, t
	m.enqueued = enq
	m.fusionCopy = make([]float64, len(o.Buckets))
	return nil
}

// setupHorovod schedules Horovod's fusion buckets from the last micro-step's plan: each
// gradient is ready when the backward op that produces it ends (device time at jitter 1).
func (r *runner) setupHorovod() error {
	p := r.replicas[0].plans[len(r.replicas[0].plans)-1]
	ready, issued, t, h := r.gradientReadiness(p)
	grads, enq, post := r.horovodGradients(p, ready, issued, t, h)
	sortReady(grads, enq)
	o, err := collective.OverlapFused(r.sync.topo, grads, horovodFusionBytes, "")
	if err != nil {
		return fmt.Errorf("plan horovod all-reduce: %w", err)
	}
	r.sync.multi.overlap, r.sync.multi.readyOffsetEnd = &o, t
	// A bucket is negotiated once the host has issued the producers of all its gradients.
	r.sync.multi.enqueued = make([]float64, len(o.Buckets))
	k := 0
	for i, b := range o.Buckets {
		for j := 0; j < b.Gradients; j++ {
			r.sync.multi.enqueued[i] = math.Max(r.sync.multi.enqueued[i], enq[k])
			k++
		}
	}
	r.sync.multi.launch = math.Max(r.mach.gpu.LaunchOverhead, ncclKernelLaunchFloor) * float64(len(o.Buckets))
	if err := r.horovodFusionCopies(o); err != nil {
		return err
	}
	if post.Kernels > 0 {
		c, err := r.mach.gpu.Cost(post)
		if err != nil {
			return fmt.Errorf("plan horovod average: %w", err)
		}
		r.sync.multi.postReduce = math.Max(c.Exec, c.Issue)
	}
	return nil
}

// gradientReadiness is, for each gradient tensor of p, the device time (ready) and host time
// (issued) at which the backward op producing it ends, and the backward pass's end on both.
func (r *runner) gradientReadiness(p *plan) (ready, issued map[int]float64, t, h float64) {
	ready, issued = map[int]float64{}, map[int]float64{}
	if r.cfg.AccumulationSteps == 1 {
		h = r.stepHost() // startMicro: the host's per-step work comes before the first op
	}
	for i, op := range p.Ops {
		if op.Phase == models.Optimizer {
			break
		}
		t += p.costs[i].exec.Seconds()
		h += p.costs[i].issue.Seconds()
		if op.Phase != models.Backward {
			continue
		}
		for _, ti := range op.Alloc {
			if p.Tensors[ti].Role == models.Gradient {
				ready[ti], issued[ti] = t, h
			}
		}
	}
	return ready, issued, t, h
}

// horovodGradients is what Horovod all-reduces, in p's gradient order: each gradient's bytes
// (halved by fp16 compression) and ready time, its host-issue time, and the element-wise work
// that follows the all-reduce without XLA (t and h: the backward pass's end).
func (r *runner) horovodGradients(p *plan, ready, issued map[int]float64, t, h float64) ([]collective.ReadyGradient, []float64, hw.Work) {
	var grads []collective.ReadyGradient
	var enq []float64
	var post hw.Work
	post.Kind = hw.KindElementwise
	for _, ti := range p.Gradients {
		rt, ok := ready[ti]
		ht := issued[ti]
		if !ok || r.cfg.XLA {
			// Under XLA auto-clustering (tensorflow/compiler/jit/mark_for_compilation_pass.cc)
			// the backward pass runs as compiled clusters whose outputs appear when the
			// cluster ends; HorovodAllreduce is not compilable, so it gets its gradients at
			// the end of the backward pass: nothing to overlap. The cluster's outputs exist
			// for the executor once its launch has been issued.
			rt, ht = t, h
		}
		tn := p.Tensors[ti]
		b := tn.Bytes
		// horovod/tensorflow/__init__.py allreduce: compression.compress (Compression.fp16:
		// tf.cast of a float32 gradient to float16), _allreduce, decompress (the cast back),
		// then summed / size for the average. XLA fuses the casts and the division into the
		// gradient's producer and the optimizer's cluster; without XLA each is a TF
		// element-wise kernel per gradient, after the all-reduce: the cast back (read float16,
		// write float32) and the division (read and write float32).
		fp16 := r.cfg.HorovodCompression == "fp16" && tn.DType == models.Float32
		if fp16 {
			b /= 2
		}
		if !r.cfg.XLA {
			post.Bytes += 2 * float64(tn.Bytes)
			post.Kernels++
			if fp16 {
				post.Bytes += float64(b + tn.Bytes)
				post.Kernels++
			}
		}
		grads = append(grads, collective.ReadyGradient{Bytes: b, Ready: rt})
		enq = append(enq, ht)
	}
	return grads, enq, post
}

// horovodFusionCopies prices the fusion buffer copies of each bucket of several tensors.
// NCCLAllreduce::Execute (horovod/common/ops/nccl_operations.cc): a fused response of
// several tensors is copied into the fusion buffer before ncclAllReduce and out of it
// after (MemcpyInFusionBuffer / MemcpyOutFusionBuffer: one cudaMemcpyAsync device to
// device per tensor, issued by the background thread on Horovod's stream); a lone tensor
// is reduced in place. Each copy is a device copy of the bucket (read and write) whose
// host side issues one copy per tensor, a bare CUDA call (no TF op dispatch).
func (r *runner) horovodFusionCopies(o collective.Overlap) error {
	r.sync.multi.fusionCopy = make([]float64, len(o.Buckets))
	for i, b := range o.Buckets {
		if b.Gradients < 2 {
			continue
		}
		c, err := r.mach.gpu.Cost(hw.Work{Kind: hw.KindCopy, Bytes: 2 * float64(b.Bytes), Kernels: b.Gradients, Host: ncclKernelLaunchFloor})
		if err != nil {
			return fmt.Errorf("plan horovod fusion buffer copies: %w", err)
		}
		r.sync.multi.fusionCopy[i] = math.Max(c.Exec, c.Issue)
	}
	return nil
}

// sortReady sorts g by readiness (stably), carrying enq, each gradient's host-issue offset, along.
func sortReady(g []collective.ReadyGradient, enq []float64) {
	for i := 1; i < len(g); i++ {
		for j := i; j > 0 && g[j].Ready < g[j-1].Ready; j-- {
			g[j], g[j-1] = g[j-1], g[j]
			enq[j], enq[j-1] = enq[j-1], enq[j]
		}
	}
}

// drawJitter gives each replica its kernel-time factor for the step: lognormal, mean 1,
// coefficient of variation stepJitterCV, from the replica's own seeded stream.
func (r *runner) drawJitter() {
	if !r.sync.multi.jitterOn {
		return
	}
	s2 := math.Log1p(stepJitterCV * stepJitterCV)
	for _, rep := range r.replicas {
		rep.jitter = math.Exp(math.Sqrt(s2)*rep.rng.NormFloat64() - s2/2)
	}
}

// hostIssue is the host clock of a replica whose host has issued its ops up to hostT after it
// issues one more, taking issue: on the replica's own host thread, or on the shared runtime's
// thread, which serves every replica in turn.
func (m *multiState) hostIssue(hostT, issue sim.Time) sim.Time {
	lanes := m.sharedLanes
	if lanes == nil {
		return hostT + issue
	}
	best := 0
	for i := range lanes {
		if lanes[i] < lanes[best] {
			best = i
		}
	}
	start := max(hostT, lanes[best])
	lanes[best] = start + issue
	return lanes[best]
}

// allReduceTime is the time from the last replica's end of backward (now) to the reduced
// gradients on every GPU. Keras fit with MirroredStrategy (and MultiWorkerMirroredStrategy)
// all-reduces after the backward pass: the NCCL launches, then the packs. Horovod started
// its buckets while the backward passes ran: what is left is the buckets whose gradients the
// slowest replica produced last, each starting at the background thread's next cycle.
func (r *runner) allReduceTime(now sim.Time) sim.Time {
	ar := r.sync.allReduce.Seconds
	if len(r.replicas) < 2 {
		return sim.FromSeconds(ar)
	}
	m := &r.sync.multi
	o := m.overlap
	sync := 0.0
	if !(r.cfg.Strategy == "mirrored") {
		sync = processSyncPerLevel * math.Log2(float64(len(r.replicas)))
	}
	if o == nil {
		return sim.FromSeconds(m.launch + sync + ar + m.postReduce)
	}
	// Each replica's backward ran from opsStart to bwEnd; a gradient at offset x of the
	// jitter-1 timeline is ready at opsStart + x * (bwEnd-opsStart)/readyOffsetEnd.
	var end, overlapped float64
	for i, b := range o.Buckets {
		var ready float64
		for _, rep := range r.active {
			span := (rep.exec.bwEnd - rep.exec.opsStart).Seconds()
			ready = math.Max(ready, rep.exec.opsStart.Seconds()+b.Ready*span/m.readyOffsetEnd)
		}
		// The background thread negotiates the bucket at its first cycle after every rank's
		// host enqueued it (horovod/common/operations.cc, RunLoopOnce: a cycle every
		// HOROVOD_CYCLE_TIME), then waits for the GPU to produce its data (PerformOperation,
		// WAIT_FOR_DATA polls the tensors' ready events): with the host ahead of the GPU the
		// cycle is hidden.
		var enqueued float64
		for _, rep := range r.active {
			enqueued = math.Max(enqueued, rep.exec.opsStart.Seconds()+m.enqueued[i])
		}
		tick := enqueued
		if r.cfg.Strategy == "horovod" {
			tick = math.Ceil(enqueued/horovodCycleSeconds) * horovodCycleSeconds
		}
		start := math.Max(math.Max(tick, ready), end)
		end = start + 2*m.fusionCopy[i] + b.Result.Seconds + m.launch/float64(len(o.Buckets))
		overlapped += math.Max(0, math.Min(end, now.Seconds())-start)
	}
	// While NCCL's blocks hold smShare of the SMs, the backward kernels run on the rest.
	tail := math.Max(0, end-now.Seconds()) + overlapped*m.smShare + sync + m.postReduce
	m.exposed = append(m.exposed, tail)
	m.overlapped = append(m.overlapped, overlapped)
	return sim.FromSeconds(tail)
}

// allocNCCLBuffers makes NCCL's communicator allocations at the first all-reduce, when TF
// creates the communicators (lazily, at the first collective): each physical GPU of a replica
// gets collective.NCCLBufferBytes with cudaMalloc, outside TF's allocator, from what the BFC
// pool left free. When it does not fit, NCCL fails the collective ("unhandled cuda error",
// NCCL WARN Cuda failure 'out of memory') and TF raises: the run ends there, as an OOM.
func (r *runner) allocNCCLBuffers() bool {
	if r.sync.ncclBuffers || len(r.replicas) < 2 || r.sync.allReduce.Impl != collective.ImplNCCL {
		return true
	}
	r.sync.ncclBuffers = true
	b := collective.NCCLBufferBytes(r.sync.topo)
	done := map[int]bool{}
	for _, rep := range r.replicas {
		p := r.mach.physicalOf(rep.logical)
		if done[p] || b <= 0 {
			continue
		}
		done[p] = true
		if _, ok := r.mach.devs[p].Alloc(b); !ok {
			r.oom = &OOM{Step: r.step, MicroStep: rep.exec.micro + 1, Op: "NcclAllReduce (communicator setup)", Tensor: "nccl_buffers",
				Device: rep.device, Allocator: "cudaMalloc (NCCL)", Requested: b, Time: r.eng.Now().Seconds(),
				Message: fmt.Sprintf("UnknownError: NCCL: unhandled cuda error: NCCL WARN Cuda failure 'out of memory' allocating %s of channel buffers on GPU %d (%s free outside TF's pool)",
					allocator.HumanReadableNumBytes(b), p, allocator.HumanReadableNumBytes(r.mach.devs[p].FreeBytes()))}
			r.end = r.eng.Now()
			r.eng.Stop()
			return false
		}
	}
	return true
}
