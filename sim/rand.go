package sim

import (
	"hash/fnv"
	"math/rand/v2"
)

// Stream returns a generator for one component, derived from the scenario seed and the
// component's name ("gpu0", "input/worker3"). The same (seed, name) always gives the same
// sequence, and different names give independent sequences.
func Stream(seed uint64, name string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(name))
	return rand.New(rand.NewPCG(seed, h.Sum64()))
}
