package hw

// Architecture names the GPU's architecture family as the cost model tells them apart: the
// compute capability, and for Ampere and Blackwell the data-centre die (GA100, GB100) apart
// from the graphics dies (GA10x, GB20x), whose SMs differ (the GA102 whitepaper's SM: 128
// FP32 lanes, half of them shared with INT32, and Tensor Cores of half GA100's dense rate per
// SM; GP100's 64-lane SM against GP10x's 128). "pascal" is GP10x, "pascal-gp100" the P100.
func (g GPU) Architecture() string {
	switch cc := g.CC(); {
	case cc < 60:
		return "maxwell-or-older"
	case cc == 60:
		return "pascal-gp100"
	case cc < 70:
		return "pascal"
	case cc < 75:
		return "volta"
	case cc < 80:
		return "turing"
	case cc == 80:
		return "ga100"
	case cc < 89:
		return "ga10x"
	case cc == 89:
		return "ad10x"
	case cc < 100:
		return "hopper"
	case cc < 120:
		return "blackwell"
	}
	return "blackwell-gb20x"
}
