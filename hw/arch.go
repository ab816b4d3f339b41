package hw

// Architecture names the GPU's architecture family as the cost model tells them apart: the
// compute capability, and for Ampere and Blackwell the data-centre die (GA100, GB100) apart
// from the graphics dies (GA10x, GB20x), whose SMs differ (the GA102 whitepaper's SM: 128
// FP32 lanes, half of them shared with INT32, and Tensor Cores of half GA100's dense rate per
// SM; GP100's 64-lane SM against GP10x's 128). "pascal" is GP10x, "pascal-gp100" the P100.
func (g GPU) Architecture() string { return architectures[g.archIndex()] }

// architectures are Architecture's names, in archIndex's order.
var architectures = [...]string{"maxwell-or-older", "pascal-gp100", "pascal", "volta", "turing", "ga100", "ga10x", "ad10x", "hopper", "blackwell", "blackwell-gb20x"}

// archIndex is the index of g's architecture in architectures.
func (g *GPU) archIndex() int {
	switch cc := g.CC(); {
	case cc < 60:
		return 0
	case cc == 60:
		return 1
	case cc < 70:
		return 2
	case cc < 75:
		return 3
	case cc < 80:
		return 4
	case cc == 80:
		return 5
	case cc < 89:
		return 6
	case cc == 89:
		return 7
	case cc < 100:
		return 8
	case cc < 120:
		return 9
	}
	return 10
}

// archIndexOf is the index of an architecture's name (-1: none).
func archIndexOf(name string) int {
	for i, a := range architectures {
		if a == name {
			return i
		}
	}
	return -1
}
