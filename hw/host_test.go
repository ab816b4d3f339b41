package hw

import (
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
