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

// NCCLBufferBytes is the device memory NCCL's communicator takes on the most loaded GPU of t
// for its channels' connections: per channel, one receive connection per peer it receives
// from, each with a buffer per protocol (LL128 only where NCCL enables it: NVLink between
// Volta, Ampere or Hopper GPUs; with P2P read the Simple buffer sits on the sender, which
// leaves the total per GPU the same: src/transport/p2p.cc p2pSendSetup/p2pRecvSetup).
// initTransportsRank (src/init.cc, v2.19) connects the rings (receive from ring.prev), then
// the trees (receive from tree.up and every tree.down), on every channel, whatever the
// algorithm later used; ncclTransportP2pConnect (src/transport.cc) skips a peer already
// connected. One node's tree is a chain that shares one neighbour with the ring, so an
// interior GPU receives from one more peer; across nodes the head GPU of a node also receives
// from its parent and two children of the inter-node double binary tree (NCCL_MAX_TREE_ARITY
// 3), three more than its ring. Two GPUs have only each other. NCCL allocates it with
// cudaMalloc when the communicator connects, outside TF's allocator: memory the BFC pool
// cannot have. 0 for one GPU.
func NCCLBufferBytes(t Topology) int64 {
	if t.GPUs < 2 {
		return 0
	}
	per := int64(ncclSimpleBufferBytes + ncclLLBufferBytes)
	if cc := t.cc(); t.Kind != PCIe && (cc == 70 || cc == 80 || cc == 90) {
		per += ncclLL128BufferBytes
	}
	peers := int64(1) // the ring's previous GPU
	switch {
	case t.nodes() > 1:
		peers += 3
	case t.GPUs > 2:
		peers++
	}
	return int64(t.channels()) * peers * per
}
