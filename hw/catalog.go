package hw

import (
	"sort"
	"strings"
)

// The catalog: the GPUs people train on beyond the first thirteen profiles of gpu.go, Pascal
// to Blackwell. Every figure is the vendor's, named per entry in catalogSpecs (the datasheet,
// the architecture whitepaper's appendix table, or the product page of the card). Conventions,
// the same as gpu.go's:
//
//   - peaks are dense (a datasheet's "with sparsity" figure is halved) at the boost clock the
//     source gives (the reference, not a Founders Edition or factory-overclocked card);
//   - PeakFP16 is the FP16 Tensor Core rate with FP32 accumulate, the one Keras mixed precision
//     uses. GeForce cards run it at half their FP16-accumulate rate (Turing whitepaper
//     appendix A; GA102 whitepaper table 9; Ada whitepaper appendix), workstation and data
//     centre parts at the full rate. Where a source gives only the FP16-accumulate or the
//     sparse figure, the entry says which rule derived PeakFP16 from it;
//   - PeakTF32 is the TF32 Tensor Core rate: GeForce Ampere/Ada/Blackwell run it at the FP32
//     rate, workstation and data centre Ampere/Ada at twice it;
//   - MemoryBytes is what nvidia-smi reports as total where public logs of the card give it
//     ([SMI] in gpu.go); otherwise the board's capacity in binary units (GDDR boards carry
//     exactly N GiB; the driver reports a few MiB less or more), which the entry says;
//   - NVLinkBandwidth is per direction (half the datasheet's bidirectional total). The
//     optional two-card bridges of PCIe data-centre parts (A100 PCIe, H100 PCIe/NVL) are left
//     out: gpusim's topology takes 300 GB/s and more on Ampere+ for an NVSwitch board; so are
//     Volta bridges, which its topology would take for a mesh (the RTX 2080 Ti's two-card
//     bridge is in, as a bridge: train's bridgedNVLink);
//   - the host link is PCI-SIG's per-direction rate for the card's generation, x16.
var catalog = []GPU{
	// Pascal.
	{Name: "gtx1080", Description: "NVIDIA GeForce GTX 1080 (Pascal GP104)", MemoryBytes: 8 * GiB,
		CCMajor: 6, CCMinor: 1, SMs: 20, MemBandwidth: 320 * GBps, PeakFP32: 8.87 * TFLOPS,
		PeakFP16: 0.139 * TFLOPS, PeakFP16Vector: 0.139 * TFLOPS, L2Bytes: 2 * MiB, PCIeBandwidth: 15.75 * GBps},
	{Name: "titan-x-pascal", Description: "NVIDIA TITAN X (Pascal GP102)", MemoryBytes: 12 * GiB,
		CCMajor: 6, CCMinor: 1, SMs: 28, MemBandwidth: 480 * GBps, PeakFP32: 10.97 * TFLOPS,
		PeakFP16: 0.171 * TFLOPS, PeakFP16Vector: 0.171 * TFLOPS, L2Bytes: 3 * MiB, PCIeBandwidth: 15.75 * GBps},
	{Name: "titan-xp", Description: "NVIDIA TITAN Xp (Pascal GP102)", MemoryBytes: 12 * GiB,
		CCMajor: 6, CCMinor: 1, SMs: 30, MemBandwidth: 547.7 * GBps, PeakFP32: 12.15 * TFLOPS,
		PeakFP16: 0.190 * TFLOPS, PeakFP16Vector: 0.190 * TFLOPS, L2Bytes: 3 * MiB, PCIeBandwidth: 15.75 * GBps},
	{Name: "p100-pcie-16gb", Description: "NVIDIA Tesla P100 PCIe 16GB", MemoryBytes: 16280 * MiB,
		CCMajor: 6, CCMinor: 0, SMs: 56, MemBandwidth: 732 * GBps, PeakFP32: 9.3 * TFLOPS,
		PeakFP16: 18.7 * TFLOPS, PeakFP16Vector: 18.7 * TFLOPS, L2Bytes: 4 * MiB, PCIeBandwidth: 15.75 * GBps},
	{Name: "p100-pcie-12gb", Description: "NVIDIA Tesla P100 PCIe 12GB", MemoryBytes: 12 * GiB,
		CCMajor: 6, CCMinor: 0, SMs: 56, MemBandwidth: 549 * GBps, PeakFP32: 9.3 * TFLOPS,
		PeakFP16: 18.7 * TFLOPS, PeakFP16Vector: 18.7 * TFLOPS, L2Bytes: 3 * MiB, PCIeBandwidth: 15.75 * GBps},

	// Volta.
	{Name: "titan-v", Description: "NVIDIA TITAN V (Volta GV100)", MemoryBytes: 12 * GiB,
		CCMajor: 7, CCMinor: 0, SMs: 80, MemBandwidth: 652.8 * GBps, PeakFP32: 14.9 * TFLOPS,
		PeakFP16: 110 * TFLOPS, PeakFP16Vector: 29.8 * TFLOPS, L2Bytes: 4608 * KiB, PCIeBandwidth: 15.75 * GBps},
	{Name: "v100-pcie-16gb", Description: "NVIDIA Tesla V100-PCIE-16GB", MemoryBytes: 16160 * MiB,
		CCMajor: 7, CCMinor: 0, SMs: 80, MemBandwidth: 900 * GBps, PeakFP32: 14 * TFLOPS,
		PeakFP16: 112 * TFLOPS, PeakFP16Vector: 28 * TFLOPS, L2Bytes: 6 * MiB, PCIeBandwidth: 15.75 * GBps},
	{Name: "v100-pcie-32gb", Description: "NVIDIA Tesla V100-PCIE-32GB", MemoryBytes: 32510 * MiB,
		CCMajor: 7, CCMinor: 0, SMs: 80, MemBandwidth: 900 * GBps, PeakFP32: 14 * TFLOPS,
		PeakFP16: 112 * TFLOPS, PeakFP16Vector: 28 * TFLOPS, L2Bytes: 6 * MiB, PCIeBandwidth: 15.75 * GBps},
	{Name: "v100-sxm3-32gb", Description: "NVIDIA Tesla V100-SXM3-32GB (DGX-2)", MemoryBytes: 32510 * MiB,
		CCMajor: 7, CCMinor: 0, SMs: 80, MemBandwidth: 900 * GBps, PeakFP32: 15.7 * TFLOPS,
		PeakFP16: 125 * TFLOPS, PeakFP16Vector: 31.4 * TFLOPS, L2Bytes: 6 * MiB,
		NVLinkBandwidth: 150 * GBps, PCIeBandwidth: 15.75 * GBps},

	// Turing.
	{Name: "rtx2070", Description: "NVIDIA GeForce RTX 2070 (Turing TU106)", MemoryBytes: 8 * GiB,
		CCMajor: 7, CCMinor: 5, SMs: 36, MemBandwidth: 448 * GBps, PeakFP32: 7.5 * TFLOPS,
		PeakFP16: 29.9 * TFLOPS, PeakFP16Vector: 14.9 * TFLOPS, L2Bytes: 4 * MiB, PCIeBandwidth: 15.75 * GBps},
	{Name: "rtx2080", Description: "NVIDIA GeForce RTX 2080 (Turing TU104)", MemoryBytes: 8 * GiB,
		CCMajor: 7, CCMinor: 5, SMs: 46, MemBandwidth: 448 * GBps, PeakFP32: 10.1 * TFLOPS,
		PeakFP16: 40.3 * TFLOPS, PeakFP16Vector: 20.1 * TFLOPS, L2Bytes: 4 * MiB, PCIeBandwidth: 15.75 * GBps},
	{Name: "rtx2080ti", Description: "NVIDIA GeForce RTX 2080 Ti (Turing TU102)", MemoryBytes: 11 * GiB,
		CCMajor: 7, CCMinor: 5, SMs: 68, MemBandwidth: 616 * GBps, PeakFP32: 13.4 * TFLOPS,
		PeakFP16: 53.8 * TFLOPS, PeakFP16Vector: 26.9 * TFLOPS, L2Bytes: 5632 * KiB, NVLinkBandwidth: 50 * GBps, PCIeBandwidth: 15.75 * GBps},
	{Name: "rtx2070-maxq", Description: "NVIDIA GeForce RTX 2070 with Max-Q Design (laptop)", MemoryBytes: 8 * GiB,
		CCMajor: 7, CCMinor: 5, SMs: 36, MemBandwidth: 384 * GBps, PeakFP32: 5.46 * TFLOPS,
		PeakFP16: 21.8 * TFLOPS, PeakFP16Vector: 10.9 * TFLOPS, L2Bytes: 4 * MiB, PCIeBandwidth: 15.75 * GBps},
	{Name: "rtx2080-maxq", Description: "NVIDIA GeForce RTX 2080 with Max-Q Design (laptop)", MemoryBytes: 8 * GiB,
		CCMajor: 7, CCMinor: 5, SMs: 46, MemBandwidth: 384 * GBps, PeakFP32: 6.45 * TFLOPS,
		PeakFP16: 25.8 * TFLOPS, PeakFP16Vector: 12.9 * TFLOPS, L2Bytes: 4 * MiB, PCIeBandwidth: 15.75 * GBps},
	{Name: "titan-rtx", Description: "NVIDIA TITAN RTX (Turing TU102)", MemoryBytes: 24 * GiB,
		CCMajor: 7, CCMinor: 5, SMs: 72, MemBandwidth: 672 * GBps, PeakFP32: 16.3 * TFLOPS,
		PeakFP16: 130.5 * TFLOPS, PeakFP16Vector: 32.6 * TFLOPS, L2Bytes: 6 * MiB, PCIeBandwidth: 15.75 * GBps},
	{Name: "quadro-rtx5000", Description: "NVIDIA Quadro RTX 5000 (Turing TU104)", MemoryBytes: 16 * GiB,
		CCMajor: 7, CCMinor: 5, SMs: 48, MemBandwidth: 448 * GBps, PeakFP32: 11.2 * TFLOPS,
		PeakFP16: 89.2 * TFLOPS, PeakFP16Vector: 22.3 * TFLOPS, L2Bytes: 4 * MiB, PCIeBandwidth: 15.75 * GBps},
	{Name: "quadro-rtx6000", Description: "NVIDIA Quadro RTX 6000 (Turing TU102)", MemoryBytes: 24 * GiB,
		CCMajor: 7, CCMinor: 5, SMs: 72, MemBandwidth: 672 * GBps, PeakFP32: 16.3 * TFLOPS,
		PeakFP16: 130.5 * TFLOPS, PeakFP16Vector: 32.6 * TFLOPS, L2Bytes: 6 * MiB, PCIeBandwidth: 15.75 * GBps},
	{Name: "quadro-rtx8000", Description: "NVIDIA Quadro RTX 8000 (Turing TU102)", MemoryBytes: 48 * GiB,
		CCMajor: 7, CCMinor: 5, SMs: 72, MemBandwidth: 672 * GBps, PeakFP32: 16.3 * TFLOPS,
		PeakFP16: 130.5 * TFLOPS, PeakFP16Vector: 32.6 * TFLOPS, L2Bytes: 6 * MiB, PCIeBandwidth: 15.75 * GBps},

	// Ampere GeForce (GA10x): TF32 at the FP32 rate, FP16 with FP32 accumulate at twice it.
	{Name: "rtx3060", Description: "NVIDIA GeForce RTX 3060 (Ampere GA106)", MemoryBytes: 12 * GiB,
		CCMajor: 8, CCMinor: 6, SMs: 28, MemBandwidth: 360 * GBps, PeakFP32: 12.7 * TFLOPS,
		PeakTF32: 12.7 * TFLOPS, PeakFP16: 25.4 * TFLOPS, PeakBF16: 25.4 * TFLOPS, PeakFP16Vector: 12.7 * TFLOPS,
		L2Bytes: 3 * MiB, PCIeBandwidth: 31.5 * GBps},
	{Name: "rtx3060ti", Description: "NVIDIA GeForce RTX 3060 Ti (Ampere GA104)", MemoryBytes: 8 * GiB,
		CCMajor: 8, CCMinor: 6, SMs: 38, MemBandwidth: 448 * GBps, PeakFP32: 16.2 * TFLOPS,
		PeakTF32: 16.2 * TFLOPS, PeakFP16: 32.4 * TFLOPS, PeakBF16: 32.4 * TFLOPS, PeakFP16Vector: 16.2 * TFLOPS,
		L2Bytes: 4 * MiB, PCIeBandwidth: 31.5 * GBps},
	{Name: "rtx3070", Description: "NVIDIA GeForce RTX 3070 (Ampere GA104)", MemoryBytes: 8 * GiB,
		CCMajor: 8, CCMinor: 6, SMs: 46, MemBandwidth: 448 * GBps, PeakFP32: 20.3 * TFLOPS,
		PeakTF32: 20.3 * TFLOPS, PeakFP16: 40.6 * TFLOPS, PeakBF16: 40.6 * TFLOPS, PeakFP16Vector: 20.3 * TFLOPS,
		L2Bytes: 4 * MiB, PCIeBandwidth: 31.5 * GBps},
	{Name: "rtx3070ti", Description: "NVIDIA GeForce RTX 3070 Ti (Ampere GA104)", MemoryBytes: 8 * GiB,
		CCMajor: 8, CCMinor: 6, SMs: 48, MemBandwidth: 608 * GBps, PeakFP32: 21.7 * TFLOPS,
		PeakTF32: 21.7 * TFLOPS, PeakFP16: 43.5 * TFLOPS, PeakBF16: 43.5 * TFLOPS, PeakFP16Vector: 21.7 * TFLOPS,
		L2Bytes: 4 * MiB, PCIeBandwidth: 31.5 * GBps},
	{Name: "rtx3080", Description: "NVIDIA GeForce RTX 3080 10GB (Ampere GA102)", MemoryBytes: 10 * GiB,
		CCMajor: 8, CCMinor: 6, SMs: 68, MemBandwidth: 760 * GBps, PeakFP32: 29.8 * TFLOPS,
		PeakTF32: 29.8 * TFLOPS, PeakFP16: 59.5 * TFLOPS, PeakBF16: 59.5 * TFLOPS, PeakFP16Vector: 29.8 * TFLOPS,
		L2Bytes: 5 * MiB, PCIeBandwidth: 31.5 * GBps},
	{Name: "rtx3080-12gb", Description: "NVIDIA GeForce RTX 3080 12GB (Ampere GA102)", MemoryBytes: 12 * GiB,
		CCMajor: 8, CCMinor: 6, SMs: 70, MemBandwidth: 912 * GBps, PeakFP32: 30.6 * TFLOPS,
		PeakTF32: 30.6 * TFLOPS, PeakFP16: 61.3 * TFLOPS, PeakBF16: 61.3 * TFLOPS, PeakFP16Vector: 30.6 * TFLOPS,
		L2Bytes: 6 * MiB, PCIeBandwidth: 31.5 * GBps},
	{Name: "rtx3080ti", Description: "NVIDIA GeForce RTX 3080 Ti (Ampere GA102)", MemoryBytes: 12 * GiB,
		CCMajor: 8, CCMinor: 6, SMs: 80, MemBandwidth: 912 * GBps, PeakFP32: 34.1 * TFLOPS,
		PeakTF32: 34.1 * TFLOPS, PeakFP16: 68.2 * TFLOPS, PeakBF16: 68.2 * TFLOPS, PeakFP16Vector: 34.1 * TFLOPS,
		L2Bytes: 6 * MiB, PCIeBandwidth: 31.5 * GBps},
	{Name: "rtx3090ti", Description: "NVIDIA GeForce RTX 3090 Ti (Ampere GA102)", MemoryBytes: 24 * GiB,
		CCMajor: 8, CCMinor: 6, SMs: 84, MemBandwidth: 1008 * GBps, PeakFP32: 40 * TFLOPS,
		PeakTF32: 40 * TFLOPS, PeakFP16: 80 * TFLOPS, PeakBF16: 80 * TFLOPS, PeakFP16Vector: 40 * TFLOPS,
		L2Bytes: 6 * MiB, NVLinkBandwidth: 56.25 * GBps, PCIeBandwidth: 31.5 * GBps},

	// Ampere workstation (RTX A-series): TF32 at twice the FP32 rate, FP16/BF16 at four times.
	{Name: "rtx-a2000", Description: "NVIDIA RTX A2000 6GB (Ampere GA106)", MemoryBytes: 6 * GiB,
		CCMajor: 8, CCMinor: 6, SMs: 26, MemBandwidth: 288 * GBps, PeakFP32: 8.0 * TFLOPS,
		PeakTF32: 16 * TFLOPS, PeakFP16: 32 * TFLOPS, PeakBF16: 32 * TFLOPS, PeakFP16Vector: 8.0 * TFLOPS,
		L2Bytes: 3 * MiB, PCIeBandwidth: 31.5 * GBps},
	{Name: "rtx-a2000-12gb", Description: "NVIDIA RTX A2000 12GB (Ampere GA106)", MemoryBytes: 12 * GiB,
		CCMajor: 8, CCMinor: 6, SMs: 26, MemBandwidth: 288 * GBps, PeakFP32: 8.0 * TFLOPS,
		PeakTF32: 16 * TFLOPS, PeakFP16: 32 * TFLOPS, PeakBF16: 32 * TFLOPS, PeakFP16Vector: 8.0 * TFLOPS,
		L2Bytes: 3 * MiB, PCIeBandwidth: 31.5 * GBps},
	{Name: "rtx-a4000", Description: "NVIDIA RTX A4000 (Ampere GA104)", MemoryBytes: 16 * GiB,
		CCMajor: 8, CCMinor: 6, SMs: 48, MemBandwidth: 448 * GBps, PeakFP32: 19.2 * TFLOPS,
		PeakTF32: 38.4 * TFLOPS, PeakFP16: 76.7 * TFLOPS, PeakBF16: 76.7 * TFLOPS, PeakFP16Vector: 19.2 * TFLOPS,
		L2Bytes: 4 * MiB, PCIeBandwidth: 31.5 * GBps},
	{Name: "rtx-a4500", Description: "NVIDIA RTX A4500 (Ampere GA102)", MemoryBytes: 20 * GiB,
		CCMajor: 8, CCMinor: 6, SMs: 56, MemBandwidth: 640 * GBps, PeakFP32: 23.7 * TFLOPS,
		PeakTF32: 47.3 * TFLOPS, PeakFP16: 94.6 * TFLOPS, PeakBF16: 94.6 * TFLOPS, PeakFP16Vector: 23.7 * TFLOPS,
		L2Bytes: 5 * MiB, NVLinkBandwidth: 56.25 * GBps, PCIeBandwidth: 31.5 * GBps},
	{Name: "rtx-a5000", Description: "NVIDIA RTX A5000 (Ampere GA102)", MemoryBytes: 24 * GiB,
		CCMajor: 8, CCMinor: 6, SMs: 64, MemBandwidth: 768 * GBps, PeakFP32: 27.8 * TFLOPS,
		PeakTF32: 55.6 * TFLOPS, PeakFP16: 111.1 * TFLOPS, PeakBF16: 111.1 * TFLOPS, PeakFP16Vector: 27.8 * TFLOPS,
		L2Bytes: 6 * MiB, NVLinkBandwidth: 56.25 * GBps, PCIeBandwidth: 31.5 * GBps},
	{Name: "rtx-a5500", Description: "NVIDIA RTX A5500 (Ampere GA102)", MemoryBytes: 24 * GiB,
		CCMajor: 8, CCMinor: 6, SMs: 80, MemBandwidth: 768 * GBps, PeakFP32: 34.1 * TFLOPS,
		PeakTF32: 68.2 * TFLOPS, PeakFP16: 136.4 * TFLOPS, PeakBF16: 136.4 * TFLOPS, PeakFP16Vector: 34.1 * TFLOPS,
		L2Bytes: 6 * MiB, NVLinkBandwidth: 56.25 * GBps, PCIeBandwidth: 31.5 * GBps},
	{Name: "rtx-a6000", Description: "NVIDIA RTX A6000 (Ampere GA102)", MemoryBytes: 48 * GiB,
		CCMajor: 8, CCMinor: 6, SMs: 84, MemBandwidth: 768 * GBps, PeakFP32: 38.7 * TFLOPS,
		PeakTF32: 77.4 * TFLOPS, PeakFP16: 154.8 * TFLOPS, PeakBF16: 154.8 * TFLOPS, PeakFP16Vector: 38.7 * TFLOPS,
		L2Bytes: 6 * MiB, NVLinkBandwidth: 56.25 * GBps, PCIeBandwidth: 31.5 * GBps},

	// Ampere data centre.
	{Name: "a16", Description: "NVIDIA A16 (one of its four GA107 GPUs)", MemoryBytes: 16 * GiB,
		CCMajor: 8, CCMinor: 6, SMs: 10, MemBandwidth: 200 * GBps, PeakFP32: 4.5 * TFLOPS,
		PeakTF32: 9 * TFLOPS, PeakFP16: 17.9 * TFLOPS, PeakBF16: 17.9 * TFLOPS, PeakFP16Vector: 4.5 * TFLOPS,
		L2Bytes: 2 * MiB, PCIeBandwidth: 31.5 * GBps},
	{Name: "a30", Description: "NVIDIA A30 (Ampere GA100)", MemoryBytes: 24 * GiB,
		CCMajor: 8, CCMinor: 0, SMs: 56, MemBandwidth: 933 * GBps, PeakFP32: 10.3 * TFLOPS,
		PeakTF32: 82 * TFLOPS, PeakFP16: 165 * TFLOPS, PeakBF16: 165 * TFLOPS,
		PeakFP16Vector: 41.3 * TFLOPS, PeakBF16Vector: 20.6 * TFLOPS,
		L2Bytes: 24 * MiB, NVLinkBandwidth: 100 * GBps, PCIeBandwidth: 31.5 * GBps},
	{Name: "a40", Description: "NVIDIA A40 (Ampere GA102)", MemoryBytes: 48 * GiB,
		CCMajor: 8, CCMinor: 6, SMs: 84, MemBandwidth: 696 * GBps, PeakFP32: 37.4 * TFLOPS,
		PeakTF32: 74.8 * TFLOPS, PeakFP16: 149.7 * TFLOPS, PeakBF16: 149.7 * TFLOPS, PeakFP16Vector: 37.4 * TFLOPS,
		L2Bytes: 6 * MiB, NVLinkBandwidth: 56.25 * GBps, PCIeBandwidth: 31.5 * GBps},
	{Name: "a100-pcie-40gb", Description: "NVIDIA A100-PCIE-40GB", MemoryBytes: 40536 * MiB,
		CCMajor: 8, CCMinor: 0, SMs: 108, MemBandwidth: 1555 * GBps, PeakFP32: 19.5 * TFLOPS,
		PeakTF32: 156 * TFLOPS, PeakFP16: 312 * TFLOPS, PeakBF16: 312 * TFLOPS,
		PeakFP16Vector: 78 * TFLOPS, PeakBF16Vector: 39 * TFLOPS, L2Bytes: 40 * MiB, PCIeBandwidth: 31.5 * GBps},
	{Name: "a100-pcie-80gb", Description: "NVIDIA A100 80GB PCIe", MemoryBytes: 81920 * MiB,
		CCMajor: 8, CCMinor: 0, SMs: 108, MemBandwidth: 1935 * GBps, PeakFP32: 19.5 * TFLOPS,
		PeakTF32: 156 * TFLOPS, PeakFP16: 312 * TFLOPS, PeakBF16: 312 * TFLOPS,
		PeakFP16Vector: 78 * TFLOPS, PeakBF16Vector: 39 * TFLOPS, L2Bytes: 40 * MiB, PCIeBandwidth: 31.5 * GBps},

	// Ada Lovelace.
	{Name: "l40", Description: "NVIDIA L40 (Ada AD102)", MemoryBytes: 48 * GiB,
		CCMajor: 8, CCMinor: 9, SMs: 142, MemBandwidth: 864 * GBps, PeakFP32: 90.5 * TFLOPS,
		PeakTF32: 90.5 * TFLOPS, PeakFP16: 181.05 * TFLOPS, PeakBF16: 181.05 * TFLOPS, PeakFP16Vector: 90.5 * TFLOPS,
		L2Bytes: 96 * MiB, PCIeBandwidth: 31.5 * GBps},
	{Name: "l40s", Description: "NVIDIA L40S (Ada AD102)", MemoryBytes: 48 * GiB,
		CCMajor: 8, CCMinor: 9, SMs: 142, MemBandwidth: 864 * GBps, PeakFP32: 91.6 * TFLOPS,
		PeakTF32: 183 * TFLOPS, PeakFP16: 362.05 * TFLOPS, PeakBF16: 362.05 * TFLOPS, PeakFP16Vector: 91.6 * TFLOPS,
		L2Bytes: 96 * MiB, PCIeBandwidth: 31.5 * GBps},
	{Name: "rtx4070", Description: "NVIDIA GeForce RTX 4070 (Ada AD104)", MemoryBytes: 12 * GiB,
		CCMajor: 8, CCMinor: 9, SMs: 46, MemBandwidth: 504 * GBps, PeakFP32: 29.1 * TFLOPS,
		PeakTF32: 29.1 * TFLOPS, PeakFP16: 58.3 * TFLOPS, PeakBF16: 58.3 * TFLOPS, PeakFP16Vector: 29.1 * TFLOPS,
		L2Bytes: 36 * MiB, PCIeBandwidth: 31.5 * GBps},
	{Name: "rtx4070ti", Description: "NVIDIA GeForce RTX 4070 Ti (Ada AD104)", MemoryBytes: 12 * GiB,
		CCMajor: 8, CCMinor: 9, SMs: 60, MemBandwidth: 504 * GBps, PeakFP32: 40.1 * TFLOPS,
		PeakTF32: 40.1 * TFLOPS, PeakFP16: 80.2 * TFLOPS, PeakBF16: 80.2 * TFLOPS, PeakFP16Vector: 40.1 * TFLOPS,
		L2Bytes: 48 * MiB, PCIeBandwidth: 31.5 * GBps},
	{Name: "rtx4080", Description: "NVIDIA GeForce RTX 4080 (Ada AD103)", MemoryBytes: 16 * GiB,
		CCMajor: 8, CCMinor: 9, SMs: 76, MemBandwidth: 716.8 * GBps, PeakFP32: 48.7 * TFLOPS,
		PeakTF32: 48.7 * TFLOPS, PeakFP16: 97.5 * TFLOPS, PeakBF16: 97.5 * TFLOPS, PeakFP16Vector: 48.7 * TFLOPS,
		L2Bytes: 64 * MiB, PCIeBandwidth: 31.5 * GBps},

	// Hopper.
	{Name: "h100-pcie", Description: "NVIDIA H100 PCIe 80GB (HBM2e)", MemoryBytes: 81559 * MiB,
		CCMajor: 9, CCMinor: 0, SMs: 114, MemBandwidth: 2000 * GBps, PeakFP32: 51.2 * TFLOPS,
		PeakTF32: 378 * TFLOPS, PeakFP16: 756 * TFLOPS, PeakBF16: 756 * TFLOPS,
		PeakFP16Vector: 102.4 * TFLOPS, PeakBF16Vector: 102.4 * TFLOPS, L2Bytes: 50 * MiB, PCIeBandwidth: 63 * GBps},
	{Name: "h100-nvl", Description: "NVIDIA H100 NVL 94GB (HBM3, PCIe)", MemoryBytes: 94 * GiB,
		CCMajor: 9, CCMinor: 0, SMs: 132, MemBandwidth: 3900 * GBps, PeakFP32: 60 * TFLOPS,
		PeakTF32: 417.5 * TFLOPS, PeakFP16: 835.5 * TFLOPS, PeakBF16: 835.5 * TFLOPS,
		PeakFP16Vector: 120 * TFLOPS, PeakBF16Vector: 120 * TFLOPS, L2Bytes: 50 * MiB, PCIeBandwidth: 63 * GBps},

	// Blackwell.
	{Name: "rtx5090", Description: "NVIDIA GeForce RTX 5090 (Blackwell GB202)", MemoryBytes: 32 * GiB,
		CCMajor: 12, CCMinor: 0, SMs: 170, MemBandwidth: 1792 * GBps, PeakFP32: 104.8 * TFLOPS,
		PeakTF32: 104.8 * TFLOPS, PeakFP16: 209.5 * TFLOPS, PeakBF16: 209.5 * TFLOPS, PeakFP16Vector: 104.8 * TFLOPS,
		L2Bytes: 96 * MiB, PCIeBandwidth: 63 * GBps},
	{Name: "b200", Description: "NVIDIA B200 (HGX B200, SXM, 1000 W)", MemoryBytes: 180 * 1000 * 1000 * 1000,
		CCMajor: 10, CCMinor: 0, SMs: 148, MemBandwidth: 8000 * GBps, PeakFP32: 80 * TFLOPS,
		PeakTF32: 1100 * TFLOPS, PeakFP16: 2250 * TFLOPS, PeakBF16: 2250 * TFLOPS,
		NVLinkBandwidth: 900 * GBps, PCIeBandwidth: 63 * GBps},
}

// specSources names, per profile, the document its figures come from (and how a figure not
// printed there was derived). `gpusim list devices -o json` shows it.
var specSources = map[string]string{
	// The first thirteen: gpu.go's source keys.
	"v100-16gb": "[V100] Tesla V100 datasheet (SXM2), Volta whitepaper table 1; [SMI]",
	"v100-32gb": "[V100] Tesla V100 datasheet (SXM2), Volta whitepaper table 1; [SMI]",
	"a100-40gb": "[A100] A100 datasheet, Ampere GA100 whitepaper table 1; [SMI]",
	"a100-80gb": "[A100] A100 datasheet (80GB SXM: 2,039 GB/s); [SMI]",
	"h100-80gb": "[H100] H100 datasheet (SXM5), Hopper whitepaper table 2; [SMI]",
	"h200":      "[H200] H200 datasheet (SXM); memory and L2 measured on the H200 here",
	"t4":        "[T4] Tesla T4 datasheet, Turing whitepaper appendix A; [SMI]",
	"l4":        "[L4] L4 datasheet (sparse halved), Ada whitepaper appendix; [SMI]",
	"a10":       "[A10] A10 datasheet (sparse halved), GA102 whitepaper; [SMI]",
	"rtx3090":   "[GA102] Ampere GA102 whitepaper table 9; [SMI]",
	"rtx4090":   "[AD102] Ada Lovelace whitepaper table 2; [SMI]",
	"gtx1080ti": "[GP102] GeForce GTX 1080 Ti spec page, Pascal tuning guide (FP16 1/64); [SMI]",
	"p100-16gb": "[P100] Tesla P100 datasheet (SXM2), GP100 whitepaper table 1; [SMI]",

	"gtx1080":        "GeForce GTX 1080 spec page and GTX 1080 whitepaper (GP104: 2,560 cores x 1,733 MHz x 2; 2 MB L2); FP16 at 1/64 of FP32 as on every GP10x but GP100 (Pascal tuning guide); 8 GiB GDDR5X board capacity",
	"titan-x-pascal": "NVIDIA TITAN X (Pascal) spec page (3,584 cores, 1,531 MHz boost, 480 GB/s; 10.97 TFLOPS = cores x boost x 2); GP102 L2 3 MB; FP16 1/64; 12 GiB board capacity",
	"titan-xp":       "NVIDIA TITAN Xp spec page (3,840 cores, 1,582 MHz boost, 547.7 GB/s; 12.15 TFLOPS); GP102 L2 3 MB; FP16 1/64; 12 GiB board capacity",
	"p100-pcie-16gb": "Tesla P100 PCIe datasheet (9.3 TFLOPS FP32, 18.7 FP16, 732 GB/s, 16 GB CoWoS HBM2); GP100 whitepaper (56 SMs, 4 MB L2); nvidia-smi total as the SXM2 16 GB part",
	"p100-pcie-12gb": "Tesla P100 PCIe datasheet (12 GB, 549 GB/s: three of four HBM2 stacks); L2 3 MB with three memory partitions (GP100 whitepaper: 512 KB per 64-bit controller pair); 12 GiB board capacity",
	"titan-v":        "NVIDIA TITAN V spec page (5,120 cores, 640 Tensor Cores, 1,455 MHz boost, 110 deep-learning TFLOPS, 12 GB HBM2, 652.8 GB/s); 4.5 MB L2 (three of four HBM2 stacks); 12 GiB board capacity",
	"v100-pcie-16gb": "Tesla V100 PCIe datasheet (14 TFLOPS FP32, 112 Tensor TFLOPS, 900 GB/s, 1,380 MHz boost); Volta whitepaper (80 SMs, 6 MB L2); [SMI] as the SXM2 16 GB part",
	"v100-pcie-32gb": "Tesla V100 PCIe datasheet (32 GB); [SMI] as the SXM2 32 GB part",
	"v100-sxm3-32gb": "NVIDIA DGX-2 datasheet (16 Tesla V100 32 GB, 2 PFLOPS Tensor = 125 each, NVSwitch, 300 GB/s NVLink per GPU) and Tesla V100 datasheet (SXM, 15.7 TFLOPS): the SXM2's 1,530 MHz boost, which TechPowerUp's V100 SXM3 32 GB entry lists too; its 350 W power limit (nvidia-smi) against the SXM2's 300 W is not modelled (docs/multigpu.md); the DGX-2 rows of DeepLearningExamples ran on it",
	"rtx2070":        "Turing whitepaper appendix A, RTX 2070 reference (1,620 MHz): 7.5 TFLOPS FP32, 59.7 FP16-accumulate Tensor TFLOPS, so 29.9 with FP32 accumulate (GeForce half rate); 448 GB/s, 4 MB L2",
	"rtx2080":        "Turing whitepaper appendix A, RTX 2080 reference (1,710 MHz): 10.1 TFLOPS FP32, 80.5 FP16-accumulate, 40.3 FP32-accumulate Tensor TFLOPS; 448 GB/s, 4 MB L2",
	"rtx2080ti":      "Turing whitepaper appendix A, RTX 2080 Ti reference (1,545 MHz): 13.4 TFLOPS FP32, 107.6 FP16-accumulate, 53.8 FP32-accumulate Tensor TFLOPS; 616 GB/s, 5.5 MB L2; 11 GiB board capacity; NVLink bridge of two TU102 links, 100 GB/s bidirectional (Turing whitepaper: NVLink on TU102)",
	"rtx2070-maxq":   "GeForce RTX 2070 Max-Q laptop spec page: 2,304 cores, boost up to 1,185 MHz (the Max-Q range's top), 8 GB GDDR6 at 12 Gbps on 256 bits = 384 GB/s; FP32 = cores x boost x 2 = 5.46 TFLOPS; Tensor rates by Turing GeForce's ratios (FP32 accumulate 4x FP32) - derived, not printed",
	"rtx2080-maxq":   "GeForce RTX 2080 Max-Q laptop spec page: 2,944 cores, boost up to 1,095 MHz (the Max-Q range's top), 8 GB GDDR6 at 12 Gbps = 384 GB/s; FP32 6.45 TFLOPS = cores x boost x 2; Tensor rates by Turing GeForce's ratios - derived, not printed",
	"titan-rtx":      "NVIDIA TITAN RTX spec page (4,608 cores, 1,770 MHz boost, 130 Tensor TFLOPS, 24 GB GDDR6, 672 GB/s); Turing whitepaper (TU102: 6 MB L2; TITAN/Quadro run FP32 accumulate at the full rate)",
	"quadro-rtx5000": "Quadro RTX 5000 datasheet: 3,072 cores, 11.2 TFLOPS FP32, 89.2 Tensor TFLOPS, 16 GB GDDR6, 448 GB/s, NVLink 50 GB/s bidirectional (two cards; left out, see above); 1,815 MHz boost; TU104 4 MB L2",
	"quadro-rtx6000": "Quadro RTX 6000 datasheet: 4,608 cores, 16.3 TFLOPS FP32, 130.5 Tensor TFLOPS, 24 GB GDDR6, 672 GB/s; TU102 6 MB L2",
	"quadro-rtx8000": "Quadro RTX 8000 datasheet: as the RTX 6000 with 48 GB GDDR6",
	"rtx3060":        "GeForce RTX 3060 spec page (3,584 cores, 1,777 MHz boost, 12 GB, 360 GB/s); FP32 = cores x boost x 2; Tensor rates by GA10x GeForce's ratios (GA102 whitepaper table 9: TF32 1x, FP16 FP32-accumulate 2x FP32) - derived; GA106 3 MB L2",
	"rtx3060ti":      "GeForce RTX 3060 Ti spec page (4,864 cores, 1,665 MHz boost, 8 GB GDDR6, 448 GB/s); GA104 whitepaper; Tensor rates by GA10x GeForce's ratios - derived; 4 MB L2",
	"rtx3070":        "Ampere GA102 whitepaper appendix (RTX 3070, GA104: 5,888 cores, 1,725 MHz, 20.3 TFLOPS, 40.6 FP16 FP32-accumulate Tensor TFLOPS, 448 GB/s, 4 MB L2)",
	"rtx3070ti":      "GeForce RTX 3070 Ti spec page (6,144 cores, 1,770 MHz boost, 8 GB GDDR6X, 608 GB/s); Tensor rates by GA10x GeForce's ratios - derived; 4 MB L2",
	"rtx3080":        "Ampere GA102 whitepaper table 9 (RTX 3080: 8,704 cores, 1,710 MHz, 29.8 TFLOPS, 59.5 FP16 FP32-accumulate Tensor TFLOPS, 10 GB GDDR6X, 760 GB/s, 5 MB L2)",
	"rtx3080-12gb":   "GeForce RTX 3080 12GB spec page (8,960 cores, 1,710 MHz, 912 GB/s); Tensor rates by GA10x GeForce's ratios - derived; 6 MB L2 (384-bit bus)",
	"rtx3080ti":      "GeForce RTX 3080 Ti spec page (10,240 cores, 1,665 MHz, 12 GB GDDR6X, 912 GB/s); Tensor rates by GA10x GeForce's ratios - derived; 6 MB L2",
	"rtx3090ti":      "GeForce RTX 3090 Ti spec page (10,752 cores, 1,860 MHz, 24 GB GDDR6X at 21 Gbps, 1,008 GB/s, NVLink bridge 112.5 GB/s); Tensor rates by GA10x GeForce's ratios - derived; 6 MB L2",
	"rtx-a2000":      "NVIDIA RTX A2000 datasheet (3,328 cores, 8.0 TFLOPS FP32, 63.9 Tensor TFLOPS with sparsity, 6 GB GDDR6, 288 GB/s); 26 SMs at 1,200 MHz; TF32 = 2x FP32 as on every RTX A-series sheet; GA106 3 MB L2",
	"rtx-a2000-12gb": "NVIDIA RTX A2000 12GB datasheet (as the 6 GB card with 12 GB)",
	"rtx-a4000":      "NVIDIA RTX A4000 datasheet (6,144 cores, 19.2 TFLOPS FP32, 153.4 Tensor TFLOPS with sparsity, 16 GB GDDR6, 448 GB/s); 48 SMs at 1,560 MHz; GA104 4 MB L2",
	"rtx-a4500":      "NVIDIA RTX A4500 datasheet (7,168 cores, 23.7 TFLOPS FP32, 189.2 Tensor TFLOPS with sparsity, 20 GB GDDR6, 640 GB/s, NVLink 112.5 GB/s); 5 MB L2 (320-bit bus)",
	"rtx-a5000":      "NVIDIA RTX A5000 datasheet (8,192 cores, 27.8 TFLOPS FP32, 222.2 Tensor TFLOPS with sparsity, 24 GB GDDR6, 768 GB/s, NVLink 112.5 GB/s); GA102 6 MB L2",
	"rtx-a5500":      "NVIDIA RTX A5500 datasheet (10,240 cores, 34.1 TFLOPS FP32, 272.8 Tensor TFLOPS with sparsity, 24 GB GDDR6, 768 GB/s, NVLink 112.5 GB/s); GA102 6 MB L2",
	"rtx-a6000":      "NVIDIA RTX A6000 datasheet (10,752 cores, 38.7 TFLOPS FP32, 309.7 Tensor TFLOPS with sparsity, 48 GB GDDR6, 768 GB/s, NVLink 112.5 GB/s); 84 SMs at 1,800 MHz; GA102 6 MB L2",
	"a16":            "NVIDIA A16 datasheet, per GPU of four: 1,280 cores, FP32 4.5, TF32 9, FP16 17.9 TFLOPS (dense), 16 GB GDDR6, 200 GB/s; the board's PCIe Gen4 x16 is shared by its four GPUs; GA107 2 MB L2",
	"a30":            "NVIDIA A30 datasheet (FP32 10.3, TF32 82, BF16/FP16 165 TFLOPS dense, 24 GB HBM2, 933 GB/s, NVLink 200 GB/s bidirectional); 56 SMs at 1,440 MHz; GA100's non-tensor FP16 4x and BF16 2x FP32 (A100 whitepaper table 1); 24 MB L2",
	"a40":            "NVIDIA A40 datasheet (FP32 37.4, TF32 74.8, BF16 149.7 with FP32 accumulate, 48 GB GDDR6, 696 GB/s, NVLink 112.5 GB/s bidirectional); 84 SMs at 1,740 MHz; GA102 6 MB L2",
	"a100-pcie-40gb": "[A100] A100 datasheet, PCIe 40GB (same peaks as SXM at 1,410 MHz, 1,555 GB/s, 250 W); [SMI] as the SXM4 40 GB part",
	"a100-pcie-80gb": "[A100] A100 datasheet, 80GB PCIe (1,935 GB/s, 300 W); [SMI] as the SXM4 80 GB part",
	"l40":            "NVIDIA L40 datasheet (FP32 90.5, TF32 90.5, BF16/FP16 181.05 TFLOPS dense, 48 GB GDDR6, 864 GB/s); 142 SMs at 2,490 MHz; AD102 96 MB L2",
	"l40s":           "NVIDIA L40S datasheet (FP32 91.6, TF32 183, BF16/FP16 362.05 TFLOPS dense, 48 GB GDDR6, 864 GB/s); 142 SMs at 2,520 MHz; AD102 96 MB L2",
	"rtx4070":        "GeForce RTX 4070 spec page (5,888 cores, 2,475 MHz boost, 12 GB GDDR6X, 504 GB/s, 36 MB L2); FP32 = cores x boost x 2; Tensor rates by Ada GeForce's ratios (Ada whitepaper appendix: TF32 1x, FP16 FP32-accumulate 2x FP32) - derived",
	"rtx4070ti":      "GeForce RTX 4070 Ti spec page (7,680 cores, 2,610 MHz boost, 12 GB GDDR6X, 504 GB/s, 48 MB L2); Tensor rates by Ada GeForce's ratios - derived",
	"rtx4080":        "Ada Lovelace whitepaper appendix (RTX 4080 16GB: 9,728 cores, 2,505 MHz, 48.7 TFLOPS, 97.5 FP16 FP32-accumulate Tensor TFLOPS, 716.8 GB/s, 64 MB L2)",
	"h100-pcie":      "H100 datasheet, PCIe column (FP32 51, TF32 756 and FP16/BF16 1,513 with sparsity, 80 GB HBM2e, 2 TB/s, 114 SMs at 1,755 MHz: 51.2 TFLOPS) and Hopper whitepaper (50 MB L2); non-tensor FP16 2x FP32 as on the SXM5; nvidia-smi total as the SXM5 80 GB part",
	"h100-nvl":       "H100 datasheet, NVL column (per GPU: FP32 60, TF32 835 and FP16/BF16 1,671 with sparsity, 94 GB HBM3, 3.9 TB/s); 132 SMs; non-tensor FP16 2x FP32; 94 GiB board capacity (nvidia-smi figure not known here)",
	"rtx5090":        "NVIDIA RTX Blackwell whitepaper appendix (RTX 5090: 170 SMs, 21,760 cores, 2,407 MHz boost, 104.8 TFLOPS FP32, 32 GB GDDR7, 1,792 GB/s, 96 MB L2, compute capability 12.0); Tensor rates by the GeForce ratios of Ada (TF32 1x, FP16 FP32-accumulate 2x FP32) - derived; PCIe Gen5",
	"b200":           "NVIDIA HGX B200 datasheet, per GPU at 1,000 W (FP32 80, TF32 2.2 and FP16/BF16 4.5 PFLOPS with sparsity, 180 GB HBM3e of the board's 1,440 GB, 8 TB/s, NVLink 5 1.8 TB/s bidirectional); 148 SMs; compute capability 10.0; no L2 size or non-tensor FP16 rate in the datasheet (left at 0: the FP32 rate); PCIe Gen5 to the host",
}

// catalogAliases maps other spellings people type to profile names. LookupGPU also ignores
// case, spaces, dashes and underscores and a leading "nvidia", "geforce" or "tesla", so
// "GeForce RTX 2080 Ti", "rtx-2080-ti" and "rtx2080ti" are one name; only spellings that
// differ beyond that are listed.
var catalogAliases = map[string]string{
	"v100-sxm2-16gb": "v100-16gb", "v100-sxm2-32gb": "v100-32gb", "v100-sxm2": "v100-16gb",
	"v100-pcie": "v100-pcie-16gb", "v100-sxm3": "v100-sxm3-32gb", "v100-dgx2": "v100-sxm3-32gb",
	"a100-sxm-40gb": "a100-40gb", "a100-sxm-80gb": "a100-80gb", "a100-80gb-sxm": "a100-80gb",
	"a100-pcie": "a100-pcie-40gb", "a100-80gb-pcie": "a100-pcie-80gb", "a100-pcie-40g": "a100-pcie-40gb",
	"h100-sxm": "h100-80gb", "h100-sxm5": "h100-80gb", "h100-sxm5-80gb": "h100-80gb", "h100-80gb-hbm3": "h100-80gb",
	"h100-pcie-80gb": "h100-pcie", "h100-nvl-94gb": "h100-nvl", "h200-sxm": "h200", "h200-sxm-141gb": "h200",
	"p100-sxm2-16gb": "p100-16gb", "p100-pcie": "p100-pcie-16gb",
	"1080ti": "gtx1080ti", "1080": "gtx1080", "titanx": "titan-x-pascal", "titan-x": "titan-x-pascal",
	"titan-x-(pascal)": "titan-x-pascal", "2080ti": "rtx2080ti", "2080": "rtx2080", "2070": "rtx2070",
	"rtx2070-max-q": "rtx2070-maxq", "rtx-2070-with-max-q-design": "rtx2070-maxq",
	"rtx2080-max-q": "rtx2080-maxq", "rtx-2080-with-max-q-design": "rtx2080-maxq",
	"rtx5000": "quadro-rtx5000", "rtx8000": "quadro-rtx8000",
	"3060": "rtx3060", "3060ti": "rtx3060ti", "3070": "rtx3070", "3070ti": "rtx3070ti", "3080": "rtx3080",
	"3080ti": "rtx3080ti", "3090": "rtx3090", "3090ti": "rtx3090ti", "rtx3080-10gb": "rtx3080",
	"a2000": "rtx-a2000", "a4000": "rtx-a4000", "a4500": "rtx-a4500", "a5000": "rtx-a5000",
	"a5500": "rtx-a5500", "a6000": "rtx-a6000", "a2000-12gb": "rtx-a2000-12gb",
	"4070": "rtx4070", "4070ti": "rtx4070ti", "4080": "rtx4080", "4090": "rtx4090", "5090": "rtx5090",
	"tesla-t4": "t4", "b200-sxm": "b200", "hgx-b200": "b200",
}

// nameKey folds a GPU name to the form LookupGPU compares: lower case, no spaces, dashes,
// underscores or parentheses, and no leading vendor or brand word.
func nameKey(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	for _, p := range []string{"nvidia ", "nvidia-", "geforce ", "geforce-", "tesla ", "tesla-"} {
		s = strings.TrimPrefix(s, p)
	}
	return strings.Map(func(r rune) rune {
		switch r {
		case ' ', '-', '_', '(', ')':
			return -1
		}
		return r
	}, s)
}

// byKey maps nameKey of every profile name and alias to the profile name, built once in init.
var byKey map[string]string

func buildKeys() {
	byKey = map[string]string{}
	add := func(alias, name string) {
		k := nameKey(alias)
		if prev, ok := byKey[k]; ok && prev != name {
			panic("hw: GPU name " + alias + " folds to " + k + " of both " + prev + " and " + name)
		}
		byKey[k] = name
	}
	for _, g := range builtin {
		add(g.Name, g.Name)
	}
	for a, n := range aliases {
		add(a, n)
	}
	for a, n := range catalogAliases {
		add(a, n)
	}
}

// resolveName returns the profile name a user's spelling means, or "".
func resolveName(name string) string { return byKey[nameKey(name)] }

// SpecSource names the spec sheet a built-in profile's figures come from ("" for an unknown
// name).
func SpecSource(name string) string { return specSources[resolveName(name)] }

// Aliases returns the other spellings of a built-in profile that LookupGPU accepts beyond
// case, spaces and dashes, sorted.
func Aliases(name string) []string {
	n := resolveName(name)
	var out []string
	for _, m := range []map[string]string{aliases, catalogAliases} {
		for a, to := range m {
			if to == n && n != "" {
				out = append(out, a)
			}
		}
	}
	sort.Strings(out)
	return out
}
