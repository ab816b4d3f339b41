package kernelfit

import "sort"

// Models returns the model names of m's step measurements, sorted.
func (m *Measured) Models() []string {
	seen := map[string]bool{}
	for _, s := range m.Steps {
		seen[s.Model] = true
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Without returns m without model's configs (steps, op lists, kernel times), for a
// leave-one-model-out fit. The micro-benchmarks stay: they are generic kernels, though some
// convolution shapes were taken from the recorded models' layers.
func (m *Measured) Without(model string) *Measured {
	out := &Measured{Micro: m.Micro, Ops: map[Config][]MeasuredOp{},
		KernelTime: map[Config]map[string]float64{}, KernelCalls: map[Config]map[string]int{}}
	for _, s := range m.Steps {
		if s.Model != model {
			out.Steps = append(out.Steps, s)
		}
	}
	for c, v := range m.Ops {
		if c.Model != model {
			out.Ops[c] = v
		}
	}
	for c, v := range m.KernelTime {
		if c.Model != model {
			out.KernelTime[c] = v
		}
	}
	for c, v := range m.KernelCalls {
		if c.Model != model {
			out.KernelCalls[c] = v
		}
	}
	return out
}
