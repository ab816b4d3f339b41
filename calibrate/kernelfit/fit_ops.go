package kernelfit

import (
	"math"

	"github.com/gpusim/gpusim/hw"
)

// opGroup is one config's logged ops of one profiled aten op (kernels.csv), matched by name
// and call count: the kernel-level measurements the fit uses. Its measured time is the
// profiler's self device time of those calls, so it holds no host time.
type opGroup struct {
	cfg   int
	name  string
	works []countedWork
	calls int
	meas  float64 // seconds per step, all calls
}

// opGroupMin is the smallest group used: under 50 us a group is a handful of tiny calls whose
// time is the profiler's rounding and the kernels' fixed floor.
const opGroupMin = 50e-6

// profiledName maps the name of a logged op (ops.csv, the op seen at dispatch) to the aten op
// the profiler charges its kernels to (kernels.csv, the innermost op): the dispatcher's
// convolution runs cudnn_convolution (or _conv_depthwise2d for depthwise), _to_copy and clone
// run copy_, relu_ runs clamp_min_, hardtanh_ clamp, and the factory ops fill_.
func profiledName(op string) string {
	switch op {
	case "convolution", "cudnn_convolution", "_conv_depthwise2d", "_convolution":
		return "convolution"
	case "_to_copy", "clone", "copy_":
		return "copy_"
	case "relu_", "clamp_min_":
		return "clamp_min_"
	case "hardtanh_", "clamp":
		return "clamp"
	case "zeros", "new_zeros", "full", "ones_like", "fill_":
		return "fill_"
	}
	return op
}

// opGroups matches config i's logged ops with the profiler's per-op times. A group is kept
// when both sides count the same calls (within 5%) and it took at least opGroupMin.
func opGroups(m *Measured, c Config, i int) []opGroup {
	meas := map[string]float64{}
	calls := map[string]int{}
	for op, t := range m.KernelTime[c] {
		meas[profiledName(op)] += t
		calls[profiledName(op)] += m.KernelCalls[c][op]
	}
	idx := map[string]int{}
	var gs []opGroup
	for _, o := range m.Ops[c] {
		name := profiledName(o.Op)
		j, ok := idx[name]
		if !ok {
			j = len(gs)
			idx[name] = j
			gs = append(gs, opGroup{cfg: i, name: name})
		}
		g := &gs[j]
		g.calls++
		w := o.Work(c.Prec)
		found := false
		for k := range g.works {
			if g.works[k].w == w {
				g.works[k].n++
				found = true
				break
			}
		}
		if !found {
			g.works = append(g.works, countedWork{w, 1})
		}
	}
	var keep []opGroup
	for _, g := range gs {
		n, t := calls[g.name], meas[g.name]
		if n == 0 || t < opGroupMin || math.Abs(float64(g.calls)/float64(n)-1) > 0.05 {
			continue
		}
		g.meas = t
		keep = append(keep, g)
	}
	return keep
}

// predict returns the modelled device time of the group's kernels: Exec without the idle
// KernelGap between kernels, which the profiler's kernel durations do not hold.
func (o *opGroup) predict(g hw.GPU, h HarnessHost) float64 {
	var t float64
	for _, cw := range o.works {
		c, _ := g.Cost(cw.w)
		t += cw.n * (c.Exec - float64(max(cw.w.Kernels, 1))*g.Efficiency.KernelGap) * h.scale(cw.w)
	}
	return t
}
