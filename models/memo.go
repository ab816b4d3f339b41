package models

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/gpusim/gpusim/internal/memo"
)

// A zoo model and its plans are pure functions of their names and options, and building them
// is most of the cost of a short simulation (ResNet-50's graph and one plan take about as long
// as simulating its first steps). A process builds each zoo model once and each plan of a
// model once; every caller shares the result, so a Model and a Plan are immutable after they
// are built and safe for concurrent use. The caches hold only what was asked for: the zoo's
// ~20 models and the plans of the (batch, precision, XLA, optimizer) points a process visits.

// The caches are bounded by entries and by an estimate of their bytes (approxBytes), least
// recently used first out: the zoo's ~20 models fit many times over, while a long-lived gpusim
// serve asked for ever new variants (1,000 image sizes of one model) keeps only the most recent
// instead of every one it built. Plans are bounded tighter: a ResNet-50 plan is ~450 KB, a
// 10,000-point plan search builds 130 of them and a 1,000-configuration sweep 500, and both
// ask for a plan again mostly within a few dozen points (the memory modes of one plan, the
// float32 twin of a mixed-precision point, the bounds then the simulation of a plan's best
// points); 32 MB keeps those, so what a sweep holds stays within its memory budget
// (docs/speed.md) for a few percent more time building plans again.
const (
	maxZooModels = 256
	maxZooBytes  = 256 << 20
	maxPlans     = 2048
	maxPlanBytes = 32 << 20
)

// zooCache holds the models New built, by (name, options).
var zooCache = memo.New[zooKey, *Model](maxZooModels, maxZooBytes, (*Model).approxBytes)

// planStore holds the plans of every model by (model, options); a model's planCache only sizes
// its new plans.
var planStore = memo.New[planKey, *Plan](maxPlans, maxPlanBytes, (*Plan).ApproxBytes)

type planKey struct {
	m *Model
	o PlanOptions
}

type zooKey struct {
	name string
	opts string // ModelOptions written out (it holds a slice, so it is not comparable)
}

func newZooKey(name string, o ModelOptions) zooKey {
	return zooKey{name: name, opts: fmt.Sprintf("%d/%d/%d/%q/%v/%q", o.ImageSize, o.SeqLen, o.Classes, o.Head, o.Hidden, o.Impl)}
}

// memoNew returns the model build makes for (name, o), building it at the first call only.
// Concurrent first calls wait for the one build.
func memoNew(name string, o ModelOptions, build func() (*Model, error)) (*Model, error) {
	return zooCache.Get(newZooKey(name, o), build)
}

// approxBytes estimates the memory a model holds: its layers, and its graph's nodes, weights
// and Keras records, at their struct sizes plus their slices, strings and maps (a map entry at
// about 64 bytes, a Keras config value at about 256 with its own maps and slices). An estimate for
// the cache budget, not an accounting: it counts what grows with the model.
func (m *Model) approxBytes() int64 {
	const word, entry, config = 8, 64, 256
	n := int64(unsafe.Sizeof(*m)) + int64(cap(m.Layers))*int64(unsafe.Sizeof(Layer{}))
	for _, l := range m.Layers {
		n += int64(len(l.Name)+len(l.Class)) + word*int64(cap(l.OutputShape)) + 16*int64(cap(l.Inputs))
	}
	g := m.g
	if g == nil {
		return n
	}
	n += int64(cap(g.nodes))*int64(unsafe.Sizeof(node{})) + int64(cap(g.weights))*int64(unsafe.Sizeof(weight{})) +
		int64(cap(g.records))*int64(unsafe.Sizeof(record{})) + entry*int64(len(g.byName)+len(g.weight)+len(g.auto))
	for i := range g.nodes {
		d := &g.nodes[i]
		n += int64(len(d.name)) + word*int64(cap(d.in)+cap(d.shape)+cap(d.weights))
	}
	for i := range g.weights {
		n += int64(len(g.weights[i].name)) + word*int64(cap(g.weights[i].shape))
	}
	for i := range g.records {
		r := &g.records[i]
		n += int64(len(r.class)+len(r.name)) + config*int64(len(r.config)) + 16*int64(cap(r.inbound)) + word*int64(cap(r.in))
	}
	return n
}

// ApproxBytes estimates the memory a plan holds: its tensors and ops at their struct sizes plus
// their slices (what a cache of plans budgets by).
func (p *Plan) ApproxBytes() int64 {
	n := int64(unsafe.Sizeof(*p)) + int64(cap(p.Tensors))*int64(unsafe.Sizeof(Tensor{})) +
		int64(cap(p.Ops))*int64(unsafe.Sizeof(Op{})) + 8*int64(cap(p.Persistent)+cap(p.Slots)+cap(p.Gradients))
	for i := range p.Tensors {
		n += int64(len(p.Tensors[i].Name)) + 8*int64(cap(p.Tensors[i].Shape))
	}
	for i := range p.Ops {
		n += int64(len(p.Ops[i].Name)) + 8*int64(cap(p.Ops[i].Alloc)+cap(p.Ops[i].Free))
	}
	return n
}

// planCache memoizes a model's plans by their options (defaults filled in, so "" and
// "float32", "" and "sgd" share an entry), in planStore.
type planCache struct {
	// ops and tensors are the most ops and tensors a plan of the model has had: the next
	// plan's slices start at that capacity instead of doubling their way there (a size hint,
	// it changes no plan).
	ops, tensors atomic.Int64
}

// hint returns the capacities for a new plan's ops and tensors.
func (c *planCache) hint() (ops, tensors int) {
	if c == nil {
		return 0, 0
	}
	return int(c.ops.Load()), int(c.tensors.Load())
}

// sized records p's sizes for hint.
func (c *planCache) sized(p *Plan) {
	if c == nil {
		return
	}
	for _, x := range []struct {
		v *atomic.Int64
		n int
	}{{&c.ops, len(p.Ops)}, {&c.tensors, len(p.Tensors)}} {
		for {
			old := x.v.Load()
			if int64(x.n) <= old || x.v.CompareAndSwap(old, int64(x.n)) {
				break
			}
		}
	}
}

func (c *planCache) get(m *Model, o PlanOptions, build func() (*Plan, error)) (*Plan, error) {
	return planStore.Get(planKey{m, o}, build)
}
