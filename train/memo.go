package train

import (
	"fmt"
	"unsafe"

	"github.com/gpusim/gpusim/hw"
	"github.com/gpusim/gpusim/internal/memo"
	"github.com/gpusim/gpusim/models"
)

// A priced plan (a models.Plan with XLA's buffer assignment applied and every op's device and
// host time from hw) is a pure function of the plan, the GPU profile, TF32, XLA and
// InputOnDevice (and, under XLA, the Keras version, the allocator limit rematerialization aims
// below and whether the gradients leave the compiled step). models builds each plan once per
// process; pricing it is as costly again, so a process prices each (plan, GPU, options) once too
// and runs share the result: a plan is never written after makePlan returns it. This is a memo,
// not state: a run that misses it builds the same plan.
//
// The cache keeps at most maxPriced plans and maxPricedBytes of them (priced.bytes), least
// recently used out first. A priced ResNet-50 plan holds its op costs (~20 KB) and, under XLA, a
// copy of the plan with its buffer assignment (~200 KB); the 1,000-configuration sweep of
// docs/compare.md prices 500, but asks for each again only within a few dozen configurations
// (its memory modes, the float32 twin of a mixed-precision point), so 16 MB keeps the ones it
// reuses: what a sweep holds stays within its memory budget (docs/speed.md; issue 32: 200 MB
// for 1,000 configurations, and for a 10,000-point plan search) at the cost of pricing again
// the plans a search returns to later, a few percent of its time.
const (
	maxPriced      = 1024
	maxPricedBytes = 16 << 20
)

var pricedCache = memo.New[pricedKey, priced](maxPriced, maxPricedBytes, priced.bytes)

// priced is a cached priced plan and, under XLA, its temp buffer.
type priced struct {
	p *plan
	x *models.XLATemp
}

// bytes estimates what a priced plan holds: its costs and flags, and its models.Plan (counted
// whole: under XLA it is a copy of the one it was priced from).
func (v priced) bytes() int64 {
	if v.p == nil {
		return 0
	}
	n := int64(unsafe.Sizeof(*v.p)) + int64(len(v.p.costs))*int64(unsafe.Sizeof(opCost{})) + int64(len(v.p.isPers))
	if v.p.Plan != nil {
		n += v.p.Plan.ApproxBytes()
	}
	if v.x != nil {
		n += int64(unsafe.Sizeof(*v.x))
	}
	return n
}

type pricedKey struct {
	mp        *models.Plan
	gpu       string // the profile written out (it holds a map, so hw.GPU is not comparable)
	tf32, xla bool
	splitRows bool // XLA only: softmax and layer norm as several fusions (xla.go)
	splitEpi  bool // XLA only: a GEMM's element-wise consumers as a fusion of their own (xla.go)
	convNHWC  bool // convolutions laid out NHWC (runner.convNHWC)
	onDevice  bool // InputOnDevice: the input copy is free
	// noAutotune: TF_CUDNN_USE_AUTOTUNE=0, cuDNN's heuristic picks (hw.Work.NoAutotune)
	noAutotune bool
	cudnn      int   // Release.CuDNN: which convolution kernels exist
	keras      int   // XLA only: KerasVersion decides the batch norm's lowering
	keepGrads  bool  // XLA only
	limit      int64 // XLA only
}

// gpuKey writes g out exactly: %v prints floats in their shortest round-trip form and map
// keys sorted.
func gpuKey(g hw.GPU) string { return fmt.Sprintf("%v", g) }

// pricedPlan returns build's priced plan for k, building it once while the cache holds it.
func pricedPlan(k pricedKey, build func() (*plan, *models.XLATemp, error)) (*plan, *models.XLATemp, error) {
	v, err := pricedCache.Get(k, func() (priced, error) {
		p, x, err := build()
		return priced{p, x}, err
	})
	return v.p, v.x, err
}
