package hw

// H200SGEMMFill is the fraction of the FP32 peak that the H200's largest SGEMM reached when
// measured here: 8192^3 in 21.5 ms, 51.1 of 66.9 TFLOP/s (testdata/h200/micro.csv, row
// matmul,fp32,8192x8192x8192).
const H200SGEMMFill = 51.1 / 66.9

// FP32LanesPerSM is the number of FP32 units per SM of g's architecture, from the compute
// capability: 64 on GP100 (6.0, "Pascal GP100" whitepaper), GV100 (7.0, "Volta" whitepaper),
// Turing (7.5, "Turing" whitepaper) and GA100 (8.0, "Ampere GA100" whitepaper); 128 on GP10x
// (6.1, "Pascal GP104" whitepaper), GA10x (8.6, "Ampere GA102" whitepaper: half of them shared
// with INT32), Ada (8.9, "Ada Lovelace" whitepaper) and Hopper (9.0, "Hopper H100" whitepaper).
func (g GPU) FP32LanesPerSM() int {
	switch g.CC() {
	case 60, 70, 72, 75, 80:
		return 64
	}
	return 128
}

// fp32Fraction corrects a fraction of the FP32 peak e, fitted on the H200, for g's FP32 lanes.
// An SM sub-partition issues one warp instruction per clock (all the whitepapers above). With
// 32 FP32 lanes per sub-partition (128 per SM) a warp FFMA takes one clock, so every other
// instruction a kernel issues, and every clock in which no warp is ready, costs an FFMA slot.
// Nsight Compute on the H200's SGEMM kernel (sm80_xmma_gemm_..._ffma, 4096^3;
// testdata/h200/bertgemm/ncu.txt and layout/ncu.txt): 0.884 of the issued instructions are
// FFMAs (r = 0.13 others per FFMA), an instruction issues in 0.908 of the active clocks (two
// warps per scheduler, each issuing every 2.2 clocks), and 0.968 of the elapsed clocks are
// active (the last wave's tail, which shapeEfficiency prices): 0.777 of peak, H200SGEMMFill.
// With 16 lanes per sub-partition (64 per SM) a warp FFMA holds its lanes for two clocks, so
// the lanes stay busy while the scheduler issues 1.13 instructions per FFMA, 0.57 a clock,
// under the 0.91 a clock those two warps issued on the H200 with their stalls: the same kernel
// is bound by its FFMA lanes, and a fraction e of the H200's peak becomes 2/max(2, 1/e) =
// min(1, 2e) of such a GPU's. So SGEMM's main loop runs at the full FP32 rate there (what it
// still loses is its output write after the main loop, gemmEpilogue, and its wave tail), and
// a convolution whose implicit-GEMM index arithmetic leaves it at ConvFP32 = 0.48 of the
// H200's peak reaches 0.96 of a V100's. e on a 128-lane GPU is returned unchanged.
func (g *GPU) fp32Fraction(e float64) float64 {
	if g.FP32LanesPerSM() == 64 {
		return min(2*e, 1)
	}
	return min(e, 1)
}
