package visibility

import (
	"fmt"
	"strings"
)

// GPU is one physical GPU of the host, as the driver reports it.
type GPU struct {
	// PCIBusID is "0000:07:00.0"; nvidia-smi numbers GPUs in ascending PCI bus ID order.
	PCIBusID string
	// UUID is nvidia-smi -L's "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6".
	UUID string
	// Name is the marketing name ("NVIDIA A100-SXM4-40GB").
	Name string
	// CCMajor, CCMinor is the compute capability; SMs the multiprocessor count.
	CCMajor, CCMinor, SMs int
	// MemoryBytes is the card's memory.
	MemoryBytes int64
	// Speed ranks GPUs for CUDA's FASTEST_FIRST order (any monotone score, e.g. peak FLOP/s);
	// 0 falls back to (compute capability, SMs).
	Speed float64
	// MIG are the UUIDs of the MIG devices carved out of this GPU ("MIG-..."), if any.
	MIG []string
}

// Host is the machine's GPUs in nvidia-smi order (index i is what nvidia-smi calls GPU i).
type Host struct {
	GPUs []GPU
}

// CUDA_DEVICE_ORDER values (CUDA programming guide, environment variables: "FASTEST_FIRST,
// PCI_BUS_ID, (default is FASTEST_FIRST)").
const (
	FastestFirst = "FASTEST_FIRST"
	PCIBusID     = "PCI_BUS_ID"
)

// CUDAOrder returns nvidia-smi indices in CUDA's enumeration order before CUDA_VISIBLE_DEVICES.
// PCI_BUS_ID is nvidia-smi's order. FASTEST_FIRST (the default, and what CUDA assumes for an
// unrecognised value) "guesses which device is fastest using a simple heuristic, and makes that
// device 0, leaving the order of the rest of the devices unspecified": here the fastest (Speed,
// else compute capability then SM count; ties to the lower PCI index) goes first and the rest
// keep PCI order, which is what homogeneous machines show.
func CUDAOrder(h Host, deviceOrder string) []int {
	order := make([]int, len(h.GPUs))
	for i := range order {
		order[i] = i
	}
	if strings.TrimSpace(deviceOrder) == PCIBusID || len(order) < 2 {
		return order
	}
	fastest := 0
	for i := 1; i < len(h.GPUs); i++ {
		if faster(h.GPUs[i], h.GPUs[fastest]) {
			fastest = i
		}
	}
	return append([]int{fastest}, append(order[:fastest:fastest], order[fastest+1:]...)...)
}

func faster(a, b GPU) bool {
	if a.Speed != 0 || b.Speed != 0 {
		return a.Speed > b.Speed
	}
	if a.CCMajor*10+a.CCMinor != b.CCMajor*10+b.CCMinor {
		return a.CCMajor*10+a.CCMinor > b.CCMajor*10+b.CCMinor
	}
	return a.SMs > b.SMs
}

// Visible is one device a process's CUDA sees after CUDA_VISIBLE_DEVICES.
type Visible struct {
	// Ordinal is the CUDA device ordinal inside the process (TF's platform device id).
	Ordinal int
	// GPU is the nvidia-smi index of the physical GPU.
	GPU int
	// MIG is the MIG device UUID when the entry named a MIG instance ("" for a whole GPU).
	MIG string
}

// Parse is the outcome of parsing CUDA_VISIBLE_DEVICES.
type Parse struct {
	Devices []Visible
	// Notes explain, in order, what CUDA did with each surprising entry (an invalid entry that
	// ended the list, a duplicate that emptied it, a MIG instance beyond the first).
	Notes []string
}

// ParseVisibleDevices applies CUDA_VISIBLE_DEVICES to h. value nil means the variable is unset
// (every GPU visible, in CUDA order). The rules are the CUDA programming guide's ("Device
// Enumeration and Properties", CUDA_VISIBLE_DEVICES) and, where the guide is silent, what
// PyTorch's _parse_visible_devices (torch/cuda/__init__.py) reproduces of the driver:
//
//   - an empty value hides every GPU;
//   - entries are integer indices into CUDAOrder, or GPU UUIDs, or MIG UUIDs ("MIG-..."); a
//     UUID may be abbreviated to any prefix that names one device ("GPU-8932f937");
//   - devices are enumerated in the order of the list (2,1 puts GPU 2 first);
//   - an invalid entry (negative, not a number, out of range, an unknown or ambiguous UUID)
//     ends the list: only the entries before it are visible (0,2,-1,1 shows 0 and 2);
//   - integers are read as strtoul reads them, so "1gpu2" is 1, and blanks around are skipped;
//   - the list's kind is fixed by its start: after a leading "GPU-" or "MIG-" an entry of the
//     other kind ends it, and after a leading integer a UUID does;
//   - a device named twice makes the whole list empty (PyTorch: "Repeated ordinal results in
//     empty set");
//   - only one MIG instance can be enumerated: the ones after the first are dropped.
func ParseVisibleDevices(h Host, deviceOrder string, value *string) Parse {
	order := CUDAOrder(h, deviceOrder)
	var p Parse
	if value == nil {
		for i, g := range order {
			p.Devices = append(p.Devices, Visible{Ordinal: i, GPU: g})
		}
		return p
	}
	v := *value
	if strings.TrimSpace(v) == "" {
		p.Notes = append(p.Notes, "CUDA_VISIBLE_DEVICES is empty: CUDA shows no GPU")
		return p
	}
	entries := strings.Split(v, ",")
	trimmed := strings.TrimSpace(entries[0])
	var mode string
	switch {
	case strings.HasPrefix(trimmed, "GPU-"):
		mode = "GPU-"
	case strings.HasPrefix(trimmed, "MIG-"):
		mode = "MIG-"
	}
	seen := map[string]bool{}
	stop := func(i int, e, why string) {
		p.Notes = append(p.Notes, fmt.Sprintf("entry %d %q %s: CUDA stops there, so only the %d device(s) before it are visible", i, e, why, len(p.Devices)))
	}
	for i, raw := range entries {
		e := strings.TrimSpace(raw)
		var vis Visible
		var key string
		switch mode {
		case "":
			n, ok := strtoul(e)
			if !ok {
				stop(i, raw, "is not a device index")
				return p
			}
			if n >= len(order) {
				stop(i, raw, fmt.Sprintf("is out of range (%d GPUs)", len(order)))
				return p
			}
			vis = Visible{GPU: order[n]}
			key = fmt.Sprint(order[n])
		case "GPU-":
			if !strings.HasPrefix(e, "GPU-") {
				stop(i, raw, "is not a GPU UUID like the first entry")
				return p
			}
			g, why := matchUUID(h, e)
			if g < 0 {
				stop(i, raw, why)
				return p
			}
			vis = Visible{GPU: g}
			key = fmt.Sprint(g)
		case "MIG-":
			if !strings.HasPrefix(e, "MIG-") {
				stop(i, raw, "is not a MIG UUID like the first entry")
				return p
			}
			g, mig, why := matchMIG(h, e)
			if g < 0 {
				stop(i, raw, why)
				return p
			}
			vis = Visible{GPU: g, MIG: mig}
			key = mig
		}
		if seen[key] {
			p.Notes = append(p.Notes, fmt.Sprintf("entry %d %q repeats a device: CUDA then shows no GPU at all", i, raw))
			p.Devices = nil
			return p
		}
		seen[key] = true
		vis.Ordinal = len(p.Devices)
		p.Devices = append(p.Devices, vis)
	}
	if mode == "MIG-" && len(p.Devices) > 1 {
		p.Notes = append(p.Notes, fmt.Sprintf("%d MIG instances listed: CUDA enumerates only one MIG instance per process, the first", len(p.Devices)))
		p.Devices = p.Devices[:1]
	}
	return p
}

// strtoul reads a leading unsigned decimal the way the driver's strtoul does: blanks first, an
// optional '+', digits, anything after ignored. A '-' or no digit is invalid.
func strtoul(s string) (int, bool) {
	s = strings.TrimLeft(s, " \t\n\r\v\f")
	s = strings.TrimPrefix(s, "+")
	n, digits := 0, 0
	for _, c := range s {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int(c-'0')
		digits++
		if n > 1<<20 {
			return 0, false
		}
	}
	return n, digits > 0
}

func matchUUID(h Host, prefix string) (int, string) {
	found := -1
	for i, g := range h.GPUs {
		if g.UUID != "" && strings.HasPrefix(g.UUID, prefix) {
			if found >= 0 {
				return -1, "matches more than one GPU UUID"
			}
			found = i
		}
	}
	if found < 0 {
		return -1, "matches no GPU UUID"
	}
	return found, ""
}

// matchMIG accepts "MIG-<uuid prefix>" (CUDA 11.2+ MIG UUIDs) and the older
// "MIG-GPU-<uuid>/<gpu instance>/<compute instance>" form, which names the instance by index
// into the GPU's MIG list.
func matchMIG(h Host, e string) (int, string, string) {
	if strings.HasPrefix(e, "MIG-GPU-") {
		uuid, rest, _ := strings.Cut(strings.TrimPrefix(e, "MIG-"), "/")
		g, why := matchUUID(h, uuid)
		if g < 0 {
			return -1, "", why
		}
		var gi, ci int
		if _, err := fmt.Sscanf(rest, "%d/%d", &gi, &ci); err != nil || gi >= len(h.GPUs[g].MIG) || gi < 0 {
			return -1, "", "names no MIG instance of that GPU"
		}
		return g, h.GPUs[g].MIG[gi], ""
	}
	type hit struct {
		g   int
		mig string
	}
	var hits []hit
	for i, g := range h.GPUs {
		for _, m := range g.MIG {
			if strings.HasPrefix(m, e) {
				hits = append(hits, hit{i, m})
			}
		}
	}
	switch len(hits) {
	case 0:
		return -1, "", "matches no MIG device"
	case 1:
		return hits[0].g, hits[0].mig, ""
	}
	return -1, "", "matches more than one MIG device"
}

// UniformHost returns a host of n copies of g (a typical 8-GPU server), numbered in PCI order
// with made-up but stable bus IDs and UUIDs ("0000:07:00.0", "GPU-00000000-0000-4000-8000-000000000000"),
// so that reports and UUID entries of CUDA_VISIBLE_DEVICES have something to show and match.
func UniformHost(n int, g GPU) Host {
	h := Host{GPUs: make([]GPU, n)}
	for i := range h.GPUs {
		d := g
		d.PCIBusID = fmt.Sprintf("0000:%02x:00.0", (0x07+0x10*i)%0x100)
		d.UUID = fmt.Sprintf("GPU-%08x-0000-4000-8000-%012x", i, i)
		d.MIG = nil
		h.GPUs[i] = d
	}
	return h
}
