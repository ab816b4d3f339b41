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

// fp32IssueScale corrects the FP32 efficiencies, which are fitted on the H200, for g's FP32
// lanes. An SM sub-partition issues one warp instruction per clock (all the whitepapers
// above). With 16 FP32 lanes per sub-partition (64 per SM) a warp FFMA holds them for two
// clocks and the loads and address arithmetic of a GEMM's inner loop issue in between, so
// FFMA can run at the full rate; with 32 lanes (128 per SM) each non-FFMA instruction takes
// an FFMA slot, which is why cuBLAS's SGEMM reaches only H200SGEMMFill of the H200's peak. So
// a 64-lane GPU reaches 1/H200SGEMMFill times the H200's fraction of peak (the fitted
// efficiency, capped at 1 by the caller).
func (g *GPU) fp32IssueScale() float64 {
	if g.FP32LanesPerSM() == 64 {
		return 1 / H200SGEMMFill
	}
	return 1
}
