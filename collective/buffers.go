package collective

// NCCL's per-connection buffer sizes (NVIDIA/nccl src/include/device.h, v2.19): a connection's
// receiving side holds a FIFO of NCCL_STEPS = 8 slots per protocol.
const (
	// DEFAULT_BUFFSIZE, NCCL_BUFFSIZE's default: the Simple protocol's 4 MiB.
	ncclSimpleBufferBytes = 1 << 22
	// DEFAULT_LL_BUFFSIZE = NCCL_LL_LINES_PER_THREAD (8) x NCCL_LL_MAX_NTHREADS (512) x
	// NCCL_STEPS (8) x sizeof(union ncclLLFifoLine) (16).
	ncclLLBufferBytes = 8 * 512 * 8 * 16
	// DEFAULT_LL128_BUFFSIZE = NCCL_LL128_ELEMS_PER_THREAD (120) x NCCL_LL128_MAX_NTHREADS
	// (640) x NCCL_STEPS (8) x sizeof(uint64_t).
	ncclLL128BufferBytes = 120 * 640 * 8 * 8
)

// NCCLBufferBytes is the device memory NCCL's communicator takes on each GPU of t for its ring
// channels: per channel, one receive connection (from the previous GPU of the ring) with a
// buffer per protocol (LL128 only where NCCL enables it: NVLink between Volta, Ampere or
// Hopper GPUs). NCCL allocates it with cudaMalloc when the communicator first connects, outside
// TF's allocator: it is memory the BFC pool cannot have. Tree connections, which NCCL adds
// when it picks the tree, are not counted. 0 for one GPU.
func NCCLBufferBytes(t Topology) int64 {
	if t.GPUs < 2 {
		return 0
	}
	per := int64(ncclSimpleBufferBytes + ncclLLBufferBytes)
	if cc := t.cc(); t.Kind != PCIe && (cc == 70 || cc == 80 || cc == 90) {
		per += ncclLL128BufferBytes
	}
	return int64(t.channels()) * per
}
