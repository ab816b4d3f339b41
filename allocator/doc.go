// Package allocator reproduces TensorFlow's GPU memory allocators, byte for byte where TF's
// decisions are deterministic, and the physical GPUs that processes share.
//
// # BFC
//
// BFC is tsl::BFCAllocator (xla/tsl/framework/bfc_allocator.cc, the code TF and JAX both use),
// single-threaded: requests round up to 256 B; free chunks sit in 21 bins ordered by
// (size, address); a request takes the first chunk that fits, searching from its own bin up; a
// chunk is split when it is at least twice the request or would waste at least
// max_internal_fragmentation (128 MiB, or FragmentationFraction x limit); a free chunk merges
// with its free neighbours inside its region. Without growth the first allocation reserves the
// whole limit as one region; with growth regions start at 2 MiB and double (curr_region), and
// Extend backs off by 0.9x when the device cannot supply a region. Before declaring OOM, garbage
// collection (TF's default, off in JAX) returns whole unused regions and extends again. A failed
// allocation waits MaxWait (10 s, kMaxMillisToWait) for frees first: OOM.Wait reports it, so a
// step-time model can charge it.
//
// Stats are memory_stats as GetStats computes them: bytes_in_use counts chunk sizes (not
// requested sizes), largest_alloc_size is the largest chunk handed out, largest_free_block_bytes
// the largest free chunk, pool_bytes the regions held.
//
// Variants: Classic (TF 2.x) and XLASpatial, newer XLA's spatial partitioning of a preallocated
// pool (the untouched top of the region is a central gap outside the bins, carved from its low
// end after the binned holes; chunks freed next to it rejoin it), which JAX 0.11.2 uses.
// XLASpatialExact is the later revision that carves the gap exactly.
//
// Ground truth: testdata/traces holds 23,000 operations recorded on an H200 with JAX 0.11.2;
// TestReplayRecordedTraces replays them and compares every statistic of every row.
// testdata/traces-ptr holds 28 growth traces (58,088 rows) with every buffer's device address:
// TestReplayRecordedAddresses replays them with the driver's region addresses and compares every
// column, the simulated addresses included; TestReplayPlacementModel checks the placement model
// (Device and the default sub-allocator place regions with it: see vaSpace) against them.
//
// # Other allocators
//
// Async models TF_GPU_ALLOCATOR=cuda_malloc_async (CUDA's stream-ordered pool) and Platform a
// cudaMalloc per tensor; both are modelled from CUDA's documented behaviour and say in their
// comments what is approximated.
//
// # Devices and processes
//
// A Device is a physical GPU (total memory, driver reserve, context size). StartProcess creates
// a CUDA context per GPU for the process, resolves TF's (or JAX's) memory options into one
// allocator per logical device (Resolve, DefaultLimit, MinSystemMemory: TF's rules and error
// texts) and, for a preallocating TF process, reserves the pools at once. Allocators draw regions
// from the shared Device, so a second process that finds the card full fails at start-up or at
// its first large allocation, as it does for real. Exit returns everything.
//
// # Replay
//
// ReadTrace, Replay and WriteReplay implement `gpusim alloc replay`: input columns op,id,bytes;
// output ReplayHeader columns, one row per op, the same as record_bfc_trace.py records on a GPU.
// A trace with a ptr column (record_bfc_trace.py with RECORD_PTR=1) is replayed with each
// region at the recorded address of the alloc that grew it; ReplayConfig.IgnorePtr uses the placement model instead,
// and ReplayConfig.WithPtr adds the simulated addresses (ReplayHeaderPtr, AppendRowPtr).
//
// Example:
//
//	dev := allocator.NewDevice(allocator.H200Spec(0))
//	p, err := allocator.StartProcess("train", []*allocator.Device{dev}, allocator.Options{})
//	if err != nil { ... } // TF's error text, e.g. "ValueError: Memory growth cannot differ ..."
//	a := p.Allocators()[0]
//	h, ok := a.Allocate(3 << 30)
//	if !ok { fmt.Println(a.LastOOM().Message) }
//	a.Free(h)
//	p.Exit()
package allocator
