// Package collective models the cross-GPU communication of data-parallel training: NCCL
// all-reduce and its friends over a topology, TensorFlow's gradient packing, and the
// copy-based alternatives tf.distribute offers.
//
// # NCCL's cost model
//
// A collective of S bytes (the per-rank buffer) on n GPUs costs, for each algorithm a (ring,
// tree) and protocol p (LL, LL128, Simple),
//
//	t(a, p) = lat(a, p) + S / algbw(a, p)
//
// with NCCL's own tables and formulas (NVIDIA/nccl src/graph/tuning.cc, ncclTopoTuneModel and
// ncclTopoGetAlgoTime, v2.19):
//
//	ring latency = baseLat + 2(n-1) * hwLat            (all-reduce; n-1 steps for all-gather)
//	tree latency = baseLat + 2 * ((n/nodes - 1) * hwLat_intra + log2(nodes) * hwLat_net)
//	ring algbw   = busbw * n / (2(n-1))                (all-reduce)
//	tree algbw   = busbw * 0.5, times a correction factor for medium sizes
//
// where busbw is the per-GPU bandwidth NCCL's topology search finds (BusBandwidthOf: the spec
// NVLink or PCIe bandwidth times NCCL's per-link figure, e.g. 20 of 25 GB/s per NVLink 3 link)
// and LL/LL128 trade bandwidth (1/4, 0.92) for latency. NCCL picks the (a, p) with the least
// t; Collective does the same ("auto") or takes a forced "ring/simple" as NCCL_ALGO/NCCL_PROTO
// would. On one host, ring wins at every size (LL below ~2 MB, LL128 to ~32-64 MB, Simple
// above); tree wins small messages across hosts. NVLink SHARP (NVLS) is not modelled, so H100
// figures are those of NCCL_NVLS_ENABLE=0.
//
// Results are reported as nccl-tests reports them (NVIDIA/nccl-tests doc/PERFORMANCE.md):
// algbw = S/t and busbw = algbw * 2(n-1)/n for all-reduce, which is comparable with the link
// bandwidth whatever n is. On 8 GPUs the model gives a large all-reduce busbw of 235 GB/s on
// A100 (NVSwitch; NCCL 2.7's A100 cap) and 370 GB/s on H100, the figures nccl-tests shows
// (NVIDIA's sjeaugey in nccl-tests#212: "NCCL can get an effective NVLink bandwidth of
// 370GB/s" on H100; ~200-230 GB/s on A100 in nccl-tests#149 and #178); an 8-byte all-reduce
// costs ~15 us of pure latency.
//
// # TensorFlow's packing and cross-device ops
//
// Pack reproduces _ConcatAndSplitPacker (tensorflow/python/distribute/cross_device_ops.py):
// gradients are concatenated into one buffer, split into num_packs packs (the last takes the
// remainder), each all-reduced, then concatenated and split back. Which of those steps copy
// and which share a buffer follows the kernels (SplitV shares 64-byte-aligned slices; the NCCL
// kernel works in place on a buffer it owns alone), and PackPlan.Stages lists the buffers in
// order so that the simulator allocates them; PackPlan.ExtraBytes is the "pack buffers" line
// of a memory report. PlanGradientAllReduce is the one call the training loop needs per
// optimizer update: pack buffers plus the time, for NcclAllReduce (the default),
// HierarchicalCopyAllReduce or ReductionToOneDevice (what TF falls back to with virtual GPUs:
// SelectCrossDeviceOps reproduces that choice). OverlapBucketed times the alternative where
// buckets are all-reduced while the backward pass runs.
//
// # Boxes and hosts
//
// Topology.PCIePath "sys" caps a PCIe ring at the sockets' link (NCCL's SKL_QPI_BW / AMD_BW);
// Nodes > 1 makes rings and trees cross the network at NetBandwidth, the NICs of a host
// together (one ring per NIC). NCCLBufferBytes is what NCCL's ring and tree connections
// allocate per GPU outside TF's allocator.
//
// The package takes plain numbers (Topology) and imports nothing of the simulator's hardware
// profiles. Example:
//
//	topo := collective.Topology{GPUs: 8, Kind: collective.NVSwitch, LinkBandwidth: 300e9, CCMajor: 8}
//	r := collective.AllReduce(topo, 1<<30, "auto")  // r.BusBW ~ 233e9, r.Algo "ring"
//	g, err := collective.PlanGradientAllReduce(topo, gradBytes, collective.DefaultGradientOptions())
//	// g.Seconds: all-reduce time per update; g.Pack.Stages: buffers to allocate; g.Pack.ExtraBytes
package collective
