package models

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// A zoo model and its plans are pure functions of their names and options, and building them
// is most of the cost of a short simulation (ResNet-50's graph and one plan take about as long
// as simulating its first steps). A process builds each zoo model once and each plan of a
// model once; every caller shares the result, so a Model and a Plan are immutable after they
// are built and safe for concurrent use. The caches hold only what was asked for: the zoo's
// ~20 models and the plans of the (batch, precision, XLA, optimizer) points a process visits.

// zooCache holds one entry per (name, options) New was called with.
var zooCache sync.Map // zooKey -> *zooBuild

type zooKey struct {
	name string
	opts string // ModelOptions written out (it holds a slice, so it is not comparable)
}

type zooBuild struct {
	once sync.Once
	m    *Model
	err  error
}

func newZooKey(name string, o ModelOptions) zooKey {
	return zooKey{name: name, opts: fmt.Sprintf("%d/%d/%d/%q/%v/%q", o.ImageSize, o.SeqLen, o.Classes, o.Head, o.Hidden, o.Impl)}
}

// memoNew returns the model build makes for (name, o), building it at the first call only.
// Concurrent first calls wait for the one build.
func memoNew(name string, o ModelOptions, build func() (*Model, error)) (*Model, error) {
	key := newZooKey(name, o)
	v, _ := zooCache.LoadOrStore(key, &zooBuild{})
	b := v.(*zooBuild)
	b.once.Do(func() { b.m, b.err = build() })
	if errors.Is(b.err, context.Canceled) || errors.Is(b.err, context.DeadlineExceeded) {
		// An interrupted build says nothing of the model: forget it, so the next call builds.
		zooCache.CompareAndDelete(key, b)
	}
	return b.m, b.err
}

// planCache memoizes a model's plans by their options (defaults filled in, so "" and
// "float32", "" and "sgd" share an entry).
type planCache struct {
	m sync.Map // PlanOptions -> *planBuild
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

type planBuild struct {
	once sync.Once
	p    *Plan
	err  error
}

func (c *planCache) get(o PlanOptions, build func() (*Plan, error)) (*Plan, error) {
	v, _ := c.m.LoadOrStore(o, &planBuild{})
	b := v.(*planBuild)
	b.once.Do(func() { b.p, b.err = build() })
	return b.p, b.err
}
