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
		{"base: dgx-a100\ninterconnect: pcie\npcie_path: sys\n", "h.yaml:1: inter_socket_bandwidth: 0: a sys path crosses"},
		{"base: nope\n", "h.yaml:1: base: \"nope\" is not a built-in host"},
	}
	for _, tc := range tests {
		_, err := ParseHost("h.yaml", []byte(tc.data))
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("ParseHost(%q) error = %v, want one line containing %q", tc.data, err, tc.want)
		}
	}
}
