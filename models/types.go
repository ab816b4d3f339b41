package models

import "fmt"

// Precision is a Keras mixed-precision policy name
// (tf.keras.mixed_precision.set_global_policy).
type Precision string

// The policies Keras offers (keras/src/dtype_policies/dtype_policy.py).
const (
	PrecisionFloat32 Precision = "float32"
	MixedFloat16     Precision = "mixed_float16"
	MixedBFloat16    Precision = "mixed_bfloat16"
)

// DType is the element type of a tensor or the compute type of an op.
type DType int

// Element types.
const (
	Float32 DType = iota
	Float16
	BFloat16
	Int32
)

// Size is the number of bytes of one element.
func (d DType) Size() int64 {
	switch d {
	case Float16, BFloat16:
		return 2
	default:
		return 4
	}
}

func (d DType) String() string {
	switch d {
	case Float32:
		return "float32"
	case Float16:
		return "float16"
	case BFloat16:
		return "bfloat16"
	case Int32:
		return "int32"
	}
	return fmt.Sprintf("DType(%d)", int(d))
}

// Role says what a tensor of the plan is for.
type Role int

// Tensor roles.
const (
	Weight     Role = iota // a variable (float32), alive for the whole run
	Slot                   // an optimizer slot variable, allocated at the first update
	Activation             // a forward output (or a saved mask)
	Gradient               // a gradient: of a weight (listed in Plan.Gradients) or of an activation
	Workspace              // cuDNN scratch memory, alive during one op
	Cast                   // a cast copy (weights cast to the compute type, activations crossing a dtype boundary)
	Input                  // the input batch (features or labels)
	// Temp is XLA's temporary buffer: buffer assignment packs every temporary of the compiled
	// step (activations, gradients, scratch), sharing offsets between values whose live ranges
	// do not overlap, into one allocation (xla/service/buffer_assignment.cc); the runtime asks
	// the allocator for it once per execution.
	Temp
)

func (r Role) String() string {
	switch r {
	case Weight:
		return "weight"
	case Slot:
		return "slot"
	case Activation:
		return "activation"
	case Gradient:
		return "gradient"
	case Workspace:
		return "workspace"
	case Cast:
		return "cast"
	case Input:
		return "input"
	case Temp:
		return "temp"
	}
	return fmt.Sprintf("Role(%d)", int(r))
}

// Phase is the part of the training step an op belongs to.
type Phase int

// Step phases.
const (
	Forward Phase = iota
	Backward
	Optimizer
)

func (p Phase) String() string {
	switch p {
	case Forward:
		return "forward"
	case Backward:
		return "backward"
	case Optimizer:
		return "optimizer"
	}
	return fmt.Sprintf("Phase(%d)", int(p))
}

// OpKind classifies an op for the cost model (hw picks an efficiency per kind).
type OpKind int

// Op kinds.
const (
	MatMul OpKind = iota
	Conv
	Elementwise
	Norm
	Reduction
	Pool
	Embedding
	Attention
	KindCast // named Kind... because Role Cast takes the plain name
	Copy
	KindOptimizer // named Kind... because Phase Optimizer takes the plain name
	Recurrent
	HostToDevice // the input batch copied from host memory (priced over PCIe)
)

var kindNames = [...]string{"matmul", "conv", "elementwise", "norm", "reduction", "pool",
	"embedding", "attention", "cast", "copy", "optimizer", "recurrent", "h2d"}

// String is the lower-case kind name hw expects in hw.Work.Kind.
func (k OpKind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("OpKind(%d)", int(k))
}

// Tensor is one buffer the step allocates (or a persistent variable).
type Tensor struct {
	Name  string
	Bytes int64
	Role  Role
	DType DType
	// Shape is the tensor's dimensions as TF prints them in "OOM when allocating tensor with
	// shape[...]": the batch first for activations, inputs and their gradients (Keras's
	// channels-last order), the variable's shape for weights, slots, casts and weight
	// gradients, and [bytes] for a cuDNN workspace (TF allocates scratch as a 1-D uint8 tensor:
	// DnnScratchAllocator::AllocateBytes in tensorflow/core/kernels/conv_ops_gpu.h). The
	// product of the dims times DType.Size() is Bytes (times 1 for a workspace).
	Shape []int64
	// Recompute marks, in an XLA plan, a forward value kept for backward that XLA's
	// rematerialization may drop and recompute from operands that stay live: the output of a
	// cheap op (element-wise, normalization, cast, or a fusion of them) none of whose operands
	// is itself marked (HloRematerialization recomputes one instruction at a time:
	// block_size_limit 1 in gpu_compiler.cc).
	Recompute bool
}

// Op is one step of the plan: a TF op (or an XLA fusion) with its cost and the tensors it
// allocates before it runs and frees after it ends.
type Op struct {
	Name    string
	Phase   Phase
	Kind    OpKind
	FLOPs   float64 // floating-point operations, multiply-add = 2
	Bytes   float64 // bytes read plus bytes written in device memory
	Kernels int     // kernel launches
	DType   DType   // compute type
	Alloc   []int   // tensors allocated before the op runs
	Free    []int   // tensors freed after the op ends
	// GEMM is the matrix-multiply shape of a MatMul, Attention or Conv op (the forward one for
	// its gradient op too, whose two kernels have the same sizes transposed); zero for other
	// kinds. hw prices tile and wave quantization, Tensor Core alignment and the convolution
	// algorithm from it.
	GEMM GEMMShape
	// OutsideXLA: under XLA the op still runs as its own TF kernels, outside the compiled
	// step (an optimizer over TF1 reference variables).
	OutsideXLA bool
	// NormBytes is, for a forward batch or layer norm under XLA, its own traffic: its input
	// read once and an output of that size written. Bytes may hold more: the element-wise ops
	// fused after it (an activation) and the outputs kept for backward.
	NormBytes float64
	// EpilogueBytes is, for a MatMul or Attention op under XLA, the part of Bytes that the
	// element-wise ops fused after it move (its bias add, activation, casts): a GEMM is a
	// library call, and whether those ops run inside it or as a loop fusion of their own
	// depends on the XLA release (train prices them).
	EpilogueBytes float64
	// ClassBytes and ClassElems are, for an op TF runs as several kernels without XLA
	// (tfunfused.go), the bytes and elements of its kernels of each class that does more than
	// stream (broadcasts, reductions, tiles, transposes, random numbers: the Pass constants);
	// zero otherwise.
	ClassBytes, ClassElems [NumPassClasses]float64
	// Autotune is what cuDNN's autotuner allocates the first time TF runs this convolution
	// (without XLA); nil for other ops. See AutotuneScratch.
	Autotune *AutotuneScratch
}

// AutotuneScratch is the first-run profiling of one cuDNN convolution op. TF's
// AutotuneUnfusedConv (tensorflow/core/kernels/conv_ops_gpu.cc) wraps the buffer the kernel
// writes in a RedzoneAllocator copy with 8 MiB guard bands each side (WrapRedzoneBestEffort:
// kept for the whole profiling, skipped if it does not fit), then runs every candidate
// algorithm, each with its own RedzoneAllocator that asks for the algorithm's workspace plus
// the two guard bands and frees it when the candidate is done (AutotuneConvImpl). A request
// above TF_CUDNN_WORKSPACE_LIMIT_IN_MB (4096 MiB) is refused, and one the BFC allocator cannot
// place (allocated with retry_on_failure false) fails that candidate only: the algorithm is
// skipped, the op does not fail. Ops with the same Key are profiled once per process (the
// AutotuneMap is keyed by ConvParameters).
type AutotuneScratch struct {
	Key       string
	Wrap      int64   // the redzone copy of the written buffer, guard bands included
	Workspace []int64 // each candidate's request, guard bands included, in profiling order
}

// GEMMShape is a matrix multiply C[M,N] = A[M,K] B[K,N], Batch of them, with the batch of the
// step included. A convolution is cuDNN's implicit GEMM: M = batch x output pixels, N = output
// channels per group, K = input channels per group x filter taps, Batch = groups; FilterH,
// FilterW and Stride its window, InC its input channels per group.
type GEMMShape struct {
	M, N, K, Batch           int64
	FilterH, FilterW, Stride int
	InC                      int64
	Spatial                  int64 // a convolution's output positions per sample
}

// Plan is one training step of one replica. Tensors lists every buffer; Persistent ones
// (weights) are allocated before step 1 and never freed; Slots are allocated just before the
// first Optimizer-phase op of the first step (Keras creates slot variables lazily in
// optimizer.build on the first apply_gradients) and never freed; every other tensor is
// allocated by exactly one op's Alloc and freed by exactly one op's Free within the step.
type Plan struct {
	Tensors    []Tensor
	Persistent []int
	Slots      []int
	Gradients  []int // float32 weight gradients, in the order backward produces them
	Ops        []Op

	// SavedBytes is what the forward pass leaves alive for backward (activations, masks,
	// kept cast copies, the input and labels), persistent tensors excluded.
	SavedBytes int64

	// Options the plan was built with (defaults filled in).
	Options PlanOptions
}

// GradientBytes is the total size of the weight gradients: what an all-reduce moves and what
// gradient accumulation keeps (one float32 accumulator per trainable variable).
func (p *Plan) GradientBytes() int64 {
	var n int64
	for _, i := range p.Gradients {
		n += p.Tensors[i].Bytes
	}
	return n
}

// PersistentBytes is the size of all variables (trainable and not).
func (p *Plan) PersistentBytes() int64 { return p.sum(p.Persistent) }

// SlotBytes is the size of all optimizer slots.
func (p *Plan) SlotBytes() int64 { return p.sum(p.Slots) }

func (p *Plan) sum(idx []int) int64 {
	var n int64
	for _, i := range idx {
		n += p.Tensors[i].Bytes
	}
	return n
}

// PeakStepBytes replays the plan's Alloc/Free lists and returns the largest number of bytes
// live at once during one steady-state step (persistent tensors and slots included, no
// allocator rounding or fragmentation: the allocator adds those).
func (p *Plan) PeakStepBytes() int64 {
	live := p.PersistentBytes() + p.SlotBytes()
	peak := live
	for i := range p.Ops {
		for _, t := range p.Ops[i].Alloc {
			live += p.Tensors[t].Bytes
		}
		if live > peak {
			peak = live
		}
		for _, t := range p.Ops[i].Free {
			live -= p.Tensors[t].Bytes
		}
	}
	return peak
}

// Totals sums FLOPs, bytes and kernels over the ops of one phase (ph < 0: all phases).
func (p *Plan) Totals(ph Phase) (flops, bytes float64, kernels int) {
	for i := range p.Ops {
		if ph >= 0 && p.Ops[i].Phase != ph {
			continue
		}
		flops += p.Ops[i].FLOPs
		bytes += p.Ops[i].Bytes
		kernels += p.Ops[i].Kernels
	}
	return
}
