// Package visibility works out which GPUs a TensorFlow process uses and what it calls them:
// the numbering rules that silently put jobs on the wrong card.
//
// Four numberings meet here, and a report prints all of them (Context.Table, WriteTable):
//
//   - nvidia-smi's index: the host's GPUs in PCI bus order (Host.GPUs order);
//   - CUDA's ordinal inside the process: CUDAOrder (CUDA_DEVICE_ORDER; FASTEST_FIRST by
//     default, which may put a faster card first) filtered and reordered by
//     CUDA_VISIBLE_DEVICES (ParseVisibleDevices: integer indices or GPU-/MIG- UUID prefixes,
//     list order, an invalid entry ends the list, "" hides everything, unset shows everything,
//     a repeated device empties the list);
//   - TF's physical devices, "/physical_device:GPU:N": one per CUDA device
//     (Context.PhysicalDevices, tf.config.list_physical_devices);
//   - TF's logical devices, "/device:GPU:N" and "/job:localhost/replica:0/task:0/device:GPU:N":
//     the physical devices left by tf.config.set_visible_devices, in physical order, minus
//     those TF ignores (compute capability, SM count), each split into its
//     set_logical_device_configuration memory limits (Context.LogicalDevices).
//
// Context follows TF's eager context: configuration calls succeed until the first GPU use
// initializes the devices, after which a change raises RuntimeError ("Visible devices cannot be
// modified after being initialized"); errors are *Error values whose text is TF's exception.
// Context.Place resolves a tf.device scope for one op the way EagerContext::SelectDevice does,
// including soft placement (on by default in TF 2) and the host<->device copies an op that
// lands on the CPU costs. SplitBatch is MirroredStrategy's per-replica batch split.
//
// Example, CUDA_VISIBLE_DEVICES=2,3 on a 4-GPU host:
//
//	ctx := visibility.NewContext(host, visibility.Options{Env: map[string]string{"CUDA_VISIBLE_DEVICES": "2,3"}})
//	devs := ctx.LogicalDevices()           // devs[0].GPU == 2, devs[1].GPU == 3
//	p, _ := ctx.Place(visibility.Op{Name: "MatMul", Device: "/GPU:1"}, nil, visibility.DefaultHostLink())
//	// p.GPU == 3: a hard-coded GPU:1 lands on nvidia-smi GPU 3
package visibility
