//go:build cgo

package calibrate

import (
	"path/filepath"
	"testing"

	"github.com/gpusim/gpusim/hw"
)

// TestMockInventoryProfile: go-nvml's mock answers like one H200 and one unknown Hopper card;
// their profiles, written to files, load through hw.LookupGPU("@FILE") as --set
// hardware.gpu=@FILE does.
func TestMockInventoryProfile(t *testing.T) {
	h200 := &mockGPU{name: "NVIDIA H200", uuid: "GPU-0", bus: "00000000:18:00.0", mem: h200Memory, cores: 16896,
		links: []string{"00000000:2A:00.0"}}
	other := &mockGPU{name: "NVIDIA Hopper Test", uuid: "GPU-1", bus: "00000000:2a:00.0", mem: h200Memory, cores: 16896,
		unsupported: map[string]bool{"nvlink": true}}
	r, err := OpenNVML(newMockNVML(h200, other))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	inv, err := r.Inventory()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	builtin, err := hw.LookupGPU("h200")
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []struct {
		name       string
		peakFP32   float64
		nvlinkBW   float64
		efficiency float64 // tf32 efficiency: the built-in's, or hw's default
	}{
		// The H200 keeps its built-in peaks and efficiencies; NVML gives one NVLink link.
		{"h200", builtin.PeakFP32, 25e9, builtin.Efficiency.TF32},
		// 132 SMs x 128 FP32 lanes x 2 x 1980 MHz for the unknown card.
		// NVLink unsupported: no bandwidth.
		{"hopper-test", 132 * 128 * 2 * 1980e6, 0, hw.DefaultEfficiency().TF32},
	} {
		g, err := ProfileFromInventory(inv, i)
		if err != nil {
			t.Fatalf("ProfileFromInventory(%d): %v", i, err)
		}
		path := filepath.Join(dir, want.name+".yaml")
		if err := WriteFileAtomic(path, g.WriteProfile); err != nil {
			t.Fatal(err)
		}
		got, err := hw.LookupGPU("@" + path)
		if err != nil {
			t.Fatalf("profile of GPU %d does not load: %v", i, err)
		}
		if got.Name != want.name || got.MemoryBytes != int64(h200Memory.Total) || got.SMs != 132 ||
			got.PeakFP32 != want.peakFP32 || got.NVLinkBandwidth != want.nvlinkBW || got.Efficiency.TF32 != want.efficiency {
			t.Errorf("GPU %d profile: name %q memory %d SMs %d fp32 %g nvlink %g tf32 eff %g; want %q %d 132 %g %g %g",
				i, got.Name, got.MemoryBytes, got.SMs, got.PeakFP32, got.NVLinkBandwidth, got.Efficiency.TF32,
				want.name, h200Memory.Total, want.peakFP32, want.nvlinkBW, want.efficiency)
		}
	}
}
