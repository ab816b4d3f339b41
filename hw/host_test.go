package hw

import (
	"math"
	"strings"
	"testing"
)

func TestParseHostBase(t *testing.T) {
	h, err := ParseHost("h.yaml", []byte("base: dgx-a100\nname: my-box\ninterconnect: pcie\npcie_path: phb\n"))
	if err != nil {
		t.Fatal(err)
	}
	base, _ := LookupHost("dgx-a100")
	if h.Name != "my-box" || h.Interconnect != InterconnectPCIe || h.PCIePath != "phb" || h.Cores != base.Cores || h.DiskBandwidth != base.DiskBandwidth {
		t.Errorf("ParseHost with base = %+v", h)
	}
}

// TestParseHostErrors checks that a bad host file is one line naming the file, line and key;
// decode_rate is refused with where the decode is priced (the map's cost per element).
func TestParseHostErrors(t *testing.T) {
	tests := []struct{ data, want string }{
		{"base: h200-vm\ndecode_rate: 39e6\n", "h.yaml:2: decode_rate: unknown key (a JPEG's decode is part of the map function's CPU time per element: input.map.cost_ms)"},
		{"name: x\ncores: 8\n\ndecode_rate: 1\n", "h.yaml:4: decode_rate: unknown key"},
		{"base: h200-vm\ncroes: 8\n", "h.yaml:2: croes: unknown key"},
		{"base: h200-vm\ncores: 0\n", "h.yaml:2: cores: 0: want > 0"},
		{"base: h200-vm\nnetwork: token-ring\n", "h.yaml:2: network: \"token-ring\": want ib, roce or ethernet"},
		// A check on a key the file leaves unset stands on the line of the key that needs it.
		{"base: dgx-a100\ninterconnect: pcie\npcie_path: sys\n", "h.yaml:3: pcie_path: sys needs inter_socket_bandwidth, the bandwidth of the sockets' link"},
		{"name: x\n\npcie_path: sys\n", "h.yaml:3: pcie_path: sys needs inter_socket_bandwidth"},
		{"base: dgx-a100\npcie_path: sys\ninter_socket_bandwidth: 0\n", "h.yaml:3: inter_socket_bandwidth: 0: a sys path crosses"},
		{"base: pcie-8x\nname: x\ninter_socket_bandwidth: 0\n", "h.yaml:3: inter_socket_bandwidth: 0: a sys path crosses"},
		{"base: dgx-a100\nname: x\ncores: 7\n", "h.yaml:3: cores: 7 with threads_per_core 2: want an even count"},
		{"base: h200-vm\nthreads_per_core: 2\ncores: 15\n", "h.yaml:2: threads_per_core: 2 threads per core on 15 cores"},
		{"name: x\nbase: h200-vm\nthreads_per_core: 3\n", "h.yaml:3: threads_per_core: 3: want 0, 1 or 2"},
		{"base: nope\n", "h.yaml:1: base: \"nope\" is not a built-in host"},
		{"base: dgx-a100\ncores: 8\nbase: dgx-1\n", "h.yaml:3: base: duplicate key (first on line 1)"},
	}
	for _, tc := range tests {
		_, err := ParseHost("h.yaml", []byte(tc.data))
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("ParseHost(%q) error = %v, want one line containing %q", tc.data, err, tc.want)
		}
	}
}

// TestFieldErrorAt checks where a failed check stands when the file sets none of its keys:
// on the base: line when the values came from the base profile, else on the mapping's first
// line saying where they came from.
func TestFieldErrorAt(t *testing.T) {
	fe := &fieldError{field: "inter_socket_bandwidth", msg: "0: want > 0", also: []fieldError{{field: "pcie_path", msg: "sys needs inter_socket_bandwidth"}}}
	tests := []struct {
		lines    map[string]int
		baseLine int
		want     string
	}{
		{map[string]int{"inter_socket_bandwidth": 4, "pcie_path": 3}, 1, "h.yaml:4: inter_socket_bandwidth: 0: want > 0"},
		{map[string]int{"pcie_path": 3}, 1, "h.yaml:3: pcie_path: sys needs inter_socket_bandwidth"},
		{map[string]int{"name": 3}, 2, "h.yaml:2: base: b: inter_socket_bandwidth: 0: want > 0"},
		{map[string]int{}, 0, "h.yaml:1: inter_socket_bandwidth: unset here (0: want > 0)"},
	}
	for _, tc := range tests {
		if got := fe.at("h.yaml", tc.lines, tc.baseLine, "b", 1, "unset here").Error(); got != tc.want {
			t.Errorf("at(%v, base line %d) = %q, want %q", tc.lines, tc.baseLine, got, tc.want)
		}
	}
}

// TestNVLinkShare: the share of a GPU's NVLinks a ring over a set of DGX-1 GPUs can use, from
// its nvidia-smi topo matrix: the fewest links a rank has to the other ranks, of 6.
func TestNVLinkShare(t *testing.T) {
	dgx1, err := LookupHost("dgx-1")
	if err != nil {
		t.Fatal(err)
	}
	a100, err := LookupHost("dgx-a100")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		h    Host
		gpus []int
		want float64
	}{
		{dgx1, []int{0, 1, 2, 3, 4, 5, 6, 7}, 1},
		{dgx1, []int{0, 1, 2, 3}, 4.0 / 6}, // GPUs 0 and 1 have 4 links into the quad, 2 and 3 five
		{dgx1, []int{4, 5, 6, 7}, 4.0 / 6},
		{dgx1, []int{0, 1}, 1.0 / 6}, // NV1
		{dgx1, []int{0, 3}, 2.0 / 6}, // NV2
		{dgx1, []int{0}, 1},
		{a100, []int{0, 1, 2, 3}, 1}, // NVSwitch: no matrix
	} {
		if got := tc.h.NVLinkShare(tc.gpus); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s.NVLinkShare(%v) = %v, want %v", tc.h.Name, tc.gpus, got, tc.want)
		}
	}
	for i, row := range dgx1.NVLinks {
		s := 0
		for j, l := range row {
			s += l
			if dgx1.NVLinks[j][i] != l {
				t.Errorf("dgx-1 NVLinks[%d][%d] = %d, NVLinks[%d][%d] = %d: want a symmetric matrix", i, j, l, j, i, dgx1.NVLinks[j][i])
			}
		}
		if s != 6 {
			t.Errorf("dgx-1 GPU %d has %d NVLinks, want 6 (V100 SXM2)", i, s)
		}
	}
}
