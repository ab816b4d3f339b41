package visibility

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Row is one line of the device mapping table a report prints: how nvidia-smi's GPU N became
// (or did not become) a TF device.
type Row struct {
	// NvidiaSMI is the GPU's nvidia-smi index; PCIBusID, UUID and Name identify it.
	NvidiaSMI      int
	PCIBusID, UUID string
	Name           string
	MIG            string
	// CUDAOrdinal is the device's ordinal inside the process (-1 if CUDA hides it).
	CUDAOrdinal int
	// PhysicalDevice is "/physical_device:GPU:N" ("" if CUDA hides it).
	PhysicalDevice string
	// TFDevice is "/device:GPU:N" and FullName the job/replica/task form ("" if TF does not use it).
	TFDevice, FullName string
	// MemoryLimitMiB is the logical device's memory_limit (0 = TF's default limit).
	MemoryLimitMiB int64
	// Status is "used", "hidden by CUDA_VISIBLE_DEVICES", "hidden by set_visible_devices" or
	// TF's reason for ignoring it.
	Status string
}

// Table returns one row per logical device and one per host GPU that does not become one, in
// nvidia-smi order (a GPU split into logical devices has a row for each). It initializes the
// context, as a report reads the devices of a run that has started.
func (c *Context) Table() []Row {
	logical := c.LogicalDevices()
	byGPU := map[int][]PhysicalDevice{}
	for _, p := range c.physical {
		byGPU[p.GPU] = append(byGPU[p.GPU], p)
	}
	var rows []Row
	for gi, g := range c.host.GPUs {
		base := Row{NvidiaSMI: gi, PCIBusID: g.PCIBusID, UUID: g.UUID, Name: g.Name, CUDAOrdinal: -1}
		phys := byGPU[gi]
		if len(phys) == 0 {
			base.Status = "hidden by CUDA_VISIBLE_DEVICES"
			rows = append(rows, base)
			continue
		}
		for _, p := range phys {
			r := base
			r.CUDAOrdinal, r.PhysicalDevice, r.MIG = p.Ordinal, p.Name, p.MIG
			used := false
			for _, l := range logical {
				if l.Physical != p.Index {
					continue
				}
				u := r
				u.TFDevice, u.FullName, u.MemoryLimitMiB, u.Status = l.Name, l.FullName, l.MemoryLimitMiB, "used"
				rows = append(rows, u)
				used = true
			}
			if used {
				continue
			}
			switch {
			case !c.visible[p.Index]:
				r.Status = "hidden by set_visible_devices"
			case c.ignored[p.Index] != "":
				r.Status = "ignored by TF: " + ignoredShort(c.ignored[p.Index])
			default:
				r.Status = "unused"
			}
			rows = append(rows, r)
		}
	}
	return rows
}

func ignoredShort(why string) string {
	if i := strings.Index(why, ") with "); i >= 0 {
		s := why[i+len(") with "):]
		if j := strings.Index(s, ". You can adjust"); j >= 0 {
			s = s[:j]
		}
		return strings.TrimSuffix(s, ".")
	}
	return why
}

// WriteTable prints rows as an aligned text table.
func WriteTable(w io.Writer, rows []Row) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "nvidia-smi\tpci bus id\tname\tcuda ordinal\tphysical device\ttf device\tmemory_limit\tstatus")
	for _, r := range rows {
		ord, lim := "-", "-"
		if r.CUDAOrdinal >= 0 {
			ord = fmt.Sprint(r.CUDAOrdinal)
		}
		if r.MemoryLimitMiB > 0 {
			lim = fmt.Sprintf("%d MiB", r.MemoryLimitMiB)
		}
		name := r.Name
		if r.MIG != "" {
			name += " " + r.MIG
		}
		fmt.Fprintf(tw, "GPU %d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.NvidiaSMI, dash(r.PCIBusID), dash(name), ord, dash(r.PhysicalDevice), dash(r.TFDevice), lim, r.Status)
	}
	return tw.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// SplitBatch splits a global batch across replicas as tf.distribute does when it rebatches a
// dataset for MirroredStrategy (tensorflow/python/data/experimental/ops/distribute.py,
// batch_sizes_for_worker, whose sizes "differ by at most one" and sum to G): every replica gets
// floor(G/n) and the first G mod n get one more.
func SplitBatch(global, replicas int) ([]int, error) {
	if replicas < 1 {
		return nil, fmt.Errorf("visibility: split batch: replicas: %d, want >= 1", replicas)
	}
	if global < 0 {
		return nil, fmt.Errorf("visibility: split batch: global batch: %d, want >= 0", global)
	}
	out := make([]int, replicas)
	for i := range out {
		out[i] = global / replicas
		if i < global%replicas {
			out[i]++
		}
	}
	return out, nil
}
