package xprof

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/gpusim/gpusim/hw"
)

// Kind is the gpusim op kind (an hw.Work kind) of the work that ran kernel k, as far as the
// trace tells it:
//
//   - XLA (an hlo_op): a cuDNN convolution call ("cudnn-conv", "cudnn-conv-bias-activation",
//     "cudnn-conv-bw-input", "cudnn-conv-bw-filter": the names XLA's GPU backend gives its
//     convolution custom calls, every kernel of the call, its layout conversions included)
//     is hw.KindConv; a cuBLAS or Triton GEMM ("cublas-gemm", "cublas-lt-matmul",
//     "gemm_fusion", "triton_gemm") hw.KindMatMul; a reduce-window fusion (max and average
//     pooling) hw.KindPool; a copy hw.KindCopy; every other fusion hw.KindFusion: XLA fuses
//     element-wise ops, reductions and batch norms into one generated kernel, and its name
//     does not say which ops it holds. A kernel that ran in a command buffer (CUDA graph:
//     hlo_op "command_buffer_N") is told by its kernel name, which for a fusion is the
//     fusion's own ("loop_add_fusion_3") and for a library call the library's kernel
//     ("sm90_xmma_fprop_implicit_gemm_...", "sm90_xmma_gemm_...").
//   - TensorFlow (a tf_op "scope/name:Type"): by the op type (tfKinds).
//   - a memory copy or set: hw.KindCopy; a host-to-device copy hw.KindH2D.
func Kind(k Kernel) string {
	if k.Memcpy {
		if strings.Contains(k.Name, "HtoD") || strings.Contains(k.Name, "H2D") {
			return hw.KindH2D
		}
		return hw.KindCopy
	}
	if k.Framework == "tf" {
		_, typ, ok := strings.Cut(k.Op, ":")
		if !ok {
			typ = k.Op
		}
		typ = strings.TrimPrefix(typ, "_")
		if kind := tfKind(typ); kind != "" {
			return kind
		}
	}
	if k.Framework == "xla" {
		if kind := hloKind(hloBase(k.Op)); kind != "" {
			return kind
		}
	}
	return nameKind(k.Name)
}

// hloBase is an HLO instruction's name without its ".N" or "_N" uniquifier.
func hloBase(op string) string {
	if i := strings.LastIndexAny(op, "._"); i > 0 && i < len(op)-1 && strings.Trim(op[i+1:], "0123456789") == "" {
		return op[:i]
	}
	return op
}

// hloKind is the kind of an XLA instruction by its name, "" when the name does not tell (a
// command buffer, a fusion named by its kernel).
func hloKind(base string) string {
	switch {
	case strings.HasPrefix(base, "cudnn-conv"):
		return hw.KindConv
	case strings.HasPrefix(base, "cublas"), strings.HasPrefix(base, "gemm_fusion"), strings.HasPrefix(base, "triton_gemm"):
		return hw.KindMatMul
	case base == "copy" || strings.HasPrefix(base, "copy-start") || strings.HasPrefix(base, "memcpy"):
		return hw.KindCopy
	}
	return ""
}

// nameKind is the kind of a kernel by its name alone.
func nameKind(name string) string {
	n := strings.ToLower(name)
	switch {
	case strings.Contains(n, "fprop") || strings.Contains(n, "dgrad") || strings.Contains(n, "wgrad") ||
		strings.Contains(n, "conv") && !strings.Contains(n, "convert") || strings.HasPrefix(n, "void cudnn::") ||
		strings.Contains(n, "cudnn::engines") || strings.Contains(n, "nhwcaddpadding"):
		// cuDNN's implicit-GEMM kernels (sm90_xmma_fprop_implicit_gemm, ..._dgrad_...,
		// ..._wgrad_..., cutlass's ImplicitGemmConvolution) and the layout kernels of its
		// engines; an XLA fusion named for a convert op is not one.
		return hw.KindConv
	case strings.Contains(n, "gemm") || strings.Contains(n, "gemv") || strings.Contains(n, "splitkreduce") ||
		strings.Contains(n, "cublas"):
		return hw.KindMatMul
	case strings.Contains(n, "reduce_window"):
		return hw.KindPool
	case n == "copy" || strings.HasPrefix(n, "copy_") || strings.HasPrefix(n, "memcpy") || strings.HasPrefix(n, "memset"):
		return hw.KindCopy
	}
	return hw.KindFusion
}

// tfKind maps a TensorFlow op type to its kind ("" for one that runs XLA's kernels or is not
// listed: the kernel name decides). The types are TF's (tensorflow/core/ops), grouped as
// models maps its ops to hw kinds.
func tfKind(typ string) string {
	switch {
	case strings.HasPrefix(typ, "Conv") || strings.HasPrefix(typ, "DepthwiseConv") || strings.HasPrefix(typ, "FusedConv"):
		return hw.KindConv
	case strings.HasSuffix(typ, "MatMul") || strings.HasPrefix(typ, "BatchMatMul") || typ == "Einsum":
		return hw.KindMatMul
	case strings.HasPrefix(typ, "FusedBatchNorm"):
		return hw.KindNorm
	case strings.HasPrefix(typ, "MaxPool") || strings.HasPrefix(typ, "AvgPool"):
		return hw.KindPool
	case typ == "Cast":
		return hw.KindCast
	case strings.HasPrefix(typ, "ResourceApply") || strings.HasPrefix(typ, "Apply"):
		return hw.KindOptimizer
	case strings.HasPrefix(typ, "Gather") || strings.HasPrefix(typ, "ResourceGather") || strings.HasPrefix(typ, "UnsortedSegment") ||
		strings.HasPrefix(typ, "Scatter") || strings.HasPrefix(typ, "ResourceScatter"):
		return hw.KindEmbedding
	case typ == "Sum" || typ == "Mean" || typ == "Max" || typ == "Min" || typ == "Prod" || typ == "ArgMax" ||
		strings.Contains(typ, "Softmax") || typ == "BiasAddGrad" || typ == "L2Loss":
		return hw.KindReduction
	case typ == "Identity" || typ == "Transpose" || strings.HasPrefix(typ, "Concat") || typ == "Pack" || typ == "Unpack" ||
		typ == "Slice" || typ == "StridedSlice" || typ == "Pad" || typ == "Tile" || typ == "Reshape":
		return hw.KindCopy
	case strings.HasPrefix(typ, "Xla") || typ == "":
		return ""
	}
	return hw.KindElementwise
}

// Group is the part of a step a profile fit compares a kind in: GroupConv, GroupMatMul or,
// for every memory-bound kind, GroupMemory. An XLA fusion's kernel may hold a batch norm, an
// activation and a reduction together, and gpusim prices them as separate kinds, so their
// kernels are compared together; host-to-device copies are the input's, not the step's
// (GroupInput).
func Group(kind string) string {
	switch kind {
	case hw.KindConv:
		return GroupConv
	case hw.KindMatMul, hw.KindAttention:
		return GroupMatMul
	case hw.KindH2D:
		return GroupInput
	}
	return GroupMemory
}

// The groups of Group.
const (
	GroupConv   = "conv"
	GroupMatMul = "matmul"
	GroupMemory = "memory-bound"
	GroupInput  = "h2d"
)

// Groups lists the groups in display order.
var Groups = []string{GroupConv, GroupMatMul, GroupMemory, GroupInput}

// StepSummary is what the step markers of a profile delimit: the median marked step and, per
// group, the device time its kernels took per step.
type StepSummary struct {
	// Marker is the name of the step markers used (the most frequent one: "train"), Steps
	// how many there are.
	Marker string
	Steps  int
	// Device is the GPU whose kernels are summed (the lowest ordinal in the profile: each
	// replica of a data-parallel step runs the same kernels).
	Device int
	// StepTime is the median duration of the marked steps, in seconds.
	StepTime float64
	// Groups is the kernels' device time per step by group (seconds), Kernels their count
	// per step, KindTimes the time by Kind within them.
	Groups    map[string]float64
	Kernels   map[string]float64
	KindTimes map[string]float64
	// Outside counts the device's kernels that start in no marked step (the profiler's
	// start and stop, work between steps): not in Groups.
	Outside int
}

// ErrNoSteps is what Summary's error wraps when the profile has no step markers.
var ErrNoSteps = errors.New("no step markers")

// Summary sums the profile's kernels by group over its marked steps: a kernel belongs to
// the step whose marker it starts in (host and device times are on one clock in an XSpace:
// the CUPTI tracer converts the GPU's timestamps).
func (p *Profile) Summary() (StepSummary, error) {
	s := StepSummary{Groups: map[string]float64{}, Kernels: map[string]float64{}, KindTimes: map[string]float64{}}
	count := map[string]int{}
	for _, st := range p.Steps {
		count[st.Name]++
	}
	for name, n := range count {
		if n > count[s.Marker] || n == count[s.Marker] && name < s.Marker {
			s.Marker = name
		}
	}
	var steps []Step
	for _, st := range p.Steps {
		if st.Name == s.Marker && st.Duration > 0 {
			steps = append(steps, st)
		}
	}
	if len(steps) == 0 {
		return s, fmt.Errorf("%w: no host event has a step_num stat (trace the steps inside jax.profiler.StepTraceAnnotation(\"train\", step_num=i), or TensorFlow's tf.profiler.experimental.Trace(\"train\", step_num=i, _r=1))", ErrNoSteps)
	}
	s.Steps = len(steps)
	durs := make([]float64, len(steps))
	for i, st := range steps {
		durs[i] = float64(st.Duration) * 1e-12
	}
	sort.Float64s(durs)
	if n := len(durs); n%2 == 1 {
		s.StepTime = durs[n/2]
	} else {
		s.StepTime = (durs[n/2-1] + durs[n/2]) / 2
	}
	s.Device = p.Kernels[0].Device
	j := 0
	for _, k := range p.Kernels {
		if k.Device != s.Device {
			break
		}
		for j < len(steps) && steps[j].End() <= k.Start {
			j++
		}
		if j == len(steps) || k.Start < steps[j].Start {
			s.Outside++
			continue
		}
		kind := Kind(k)
		g := Group(kind)
		sec := float64(k.Duration) * 1e-12 / float64(len(steps))
		s.Groups[g] += sec
		s.Kernels[g] += 1 / float64(len(steps))
		s.KindTimes[kind] += sec
	}
	return s, nil
}
