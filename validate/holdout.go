package validate

import (
	"math"
	"sort"

	"github.com/gpusim/gpusim/hw"
)

// holdOuts fills the leave-one-GPU-out and leave-one-model-out folds over each set file's
// single-GPU rows. No constant is fitted on them (hw's efficiencies are read from H200
// micro-benchmarks and kernel times), so a fold's held-out figure is the plain prediction of
// its rows, and the spread over folds says how far an unseen GPU or model may be off.
func (v *Validation) holdOuts() {
	pools := map[string][]int{}
	var sets []string
	for i, r := range v.Rows {
		if !r.Table || r.GPUs() > 1 {
			continue
		}
		if pools[r.Set] == nil {
			sets = append(sets, r.Set)
		}
		pools[r.Set] = append(pools[r.Set], i)
	}
	if len(sets) == 0 {
		return
	}
	v.Notes = append(v.Notes, "hold-outs: no cost-model constant is fitted on these measurements "+
		"(hw.DefaultEfficiency's factors are read from H200 micro-benchmarks and kernel times, "+
		"testdata/h200), so every figure is already out of sample and each held-out figure "+
		"is the plain prediction: the spread over folds is how far an unseen GPU or model may be off")
	sort.Slice(sets, func(i, j int) bool { return v.less(sets[i], sets[j]) })
	var all []int
	for _, set := range sets {
		for _, by := range []string{"gpu", "model"} {
			v.folds(set, by, pools[set])
		}
		all = append(all, pools[set]...)
	}
	if len(sets) > 1 {
		// Architectures across every set file's 1-GPU rows (NVIDIA's tables: Volta, GA100;
		// the tf_cnn_benchmarks logs: Turing, GA10x).
		sort.Ints(all)
		v.folds("1-GPU", "architecture", all)
	}
}

// folds holds out each value of by in turn from the rows idx of set.
func (v *Validation) folds(set, by string, idx []int) {
	key := func(r Row) string {
		switch by {
		case "gpu":
			return r.GPU()
		case "architecture":
			if g, err := hw.LookupGPU(r.GPU()); err == nil {
				return g.Architecture()
			}
			return r.GPU()
		}
		return modelGroup(r.Model())
	}
	vals := map[string]bool{}
	for _, i := range idx {
		vals[key(v.Rows[i])] = true
	}
	var held []float64
	for _, val := range sortedKeys(vals) {
		var trainRows, heldRows []Row
		for _, i := range idx {
			if key(v.Rows[i]) == val {
				heldRows = append(heldRows, v.Rows[i])
			} else {
				trainRows = append(trainRows, v.Rows[i])
			}
		}
		if len(trainRows) == 0 {
			continue
		}
		f := HoldOut{Set: set, By: by, Held: val, Train: len(trainRows), N: len(heldRows),
			FitMAE: mae(trainRows), HeldMAE: mae(heldRows)}
		v.HoldOuts = append(v.HoldOuts, f)
		held = append(held, f.HeldMAE)
	}
	if len(held) == 0 {
		return // one value: nothing to hold out
	}
	g := errStats(set, "leave-one-"+by+"-out", "mean of folds", nil, 0)
	g.N = len(held)
	for _, h := range held {
		g.MAE += h / float64(len(held))
		g.Max = max(g.Max, h)
	}
	v.HoldOutSum = append(v.HoldOutSum, g)
}

// mae is the mean absolute error of the rows with a prediction.
func mae(rows []Row) float64 {
	var s float64
	n := 0
	for _, r := range rows {
		if r.ok() {
			s += math.Abs(r.Err)
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return s / float64(n)
}

// Group returns the group (set, by, key), or false.
func (v *Validation) Group(set, by, key string) (GroupError, bool) {
	for _, g := range append(append([]GroupError{}, v.Groups...), append(v.RatioSets, v.HoldOutSum...)...) {
		if g.Set == set && g.By == by && g.Key == key {
			return g, true
		}
	}
	return GroupError{}, false
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
