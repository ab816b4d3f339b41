package train

import (
	"slices"

	"github.com/gpusim/gpusim/hw"
	"github.com/gpusim/gpusim/sim"
)

// maxKinds bounds len(hw.Kinds) so that a step's time by kind is a fixed array (no
// allocation per op).
const maxKinds = 16

// kindTimes is op time by hw kind, indexed like hw.Kinds.
type kindTimes [maxKinds]sim.Time

// kindIndex is the index of kind in hw.Kinds.
func kindIndex(kind string) int {
	i := slices.Index(hw.Kinds, kind)
	if i < 0 || i >= maxKinds {
		panic("train: op kind " + kind + " is not in hw.Kinds (or more than maxKinds kinds)")
	}
	return i
}

// sumKinds adds the replicas' op time by kind for the step that just ended.
func (r *runner) sumKinds() kindTimes {
	var s kindTimes
	for _, rp := range r.active {
		for k, v := range rp.exec.kinds {
			s[k] += v * sim.Time(r.fan())
		}
	}
	return s
}

// kindResult fills Result.ByKind for the median step: the op kinds' device time (which is
// the forward, backward and optimizer categories split another way), then the categories
// that are not op time. Fast-forwarded steps are copies of the last simulated one.
func (r *runner) kindResult(res *Result) {
	i := medianRun(&r.rec.stepTimes)
	if i < 0 {
		return
	}
	kt := r.rec.kindBDs.at(i)
	bd := r.rec.breakdowns.at(i)
	n := float64(len(r.replicas)) * float64(sim.Second)
	for k, name := range hw.Kinds {
		if kt[k] > 0 {
			res.ByKind = append(res.ByKind, Share{Category: name, Seconds: float64(kt[k]) / n})
		}
	}
	for _, c := range []int{catLaunch, catInput, catSync, catAllReduce, catCompile} {
		if bd[c] > 0 {
			res.ByKind = append(res.ByKind, Share{Category: categories[c], Seconds: float64(bd[c]) / n})
		}
	}
}
