package collective

import "testing"

// Without PCIe peer-to-peer (GeForce) a PCIe ring runs NCCL's SHM transport at SHMEfficiency
// of the P2P ring's bus bandwidth, and a box whose host path binds the staged copies gives each
// of n GPUs HostBandwidth/n, so the ring slows as GPUs are added.
func TestSHMBusBandwidth(t *testing.T) {
	p2p := Topology{GPUs: 4, Kind: PCIe, LinkBandwidth: 15.75e9, CCMajor: 7, CCMinor: 5}
	shm := p2p
	shm.SHM = true
	if got, want := BusBandwidthOf(shm), SHMEfficiency*BusBandwidthOf(p2p); !within(got, want, 1e-9) {
		t.Errorf("SHM bus bandwidth %.3g, want %.3g", got, want)
	}
	host := Topology{GPUs: 2, Kind: PCIe, LinkBandwidth: 31.5e9, CCMajor: 8, CCMinor: 6, SHM: true, HostBandwidth: 6.5e9}
	prev := BusBandwidthOf(host)
	for _, n := range []int{4, 8} {
		host.GPUs = n
		got := BusBandwidthOf(host)
		if !within(got, 6.5e9/float64(n), 1e-9) {
			t.Errorf("%d GPUs: bus bandwidth %.3g, want HostBandwidth/n = %.3g", n, got, 6.5e9/float64(n))
		}
		if got >= prev {
			t.Errorf("%d GPUs: bus bandwidth %.3g not below %.3g with fewer GPUs", n, got, prev)
		}
		prev = got
	}
	nv := Topology{GPUs: 2, Kind: NVLink, LinkBandwidth: 50e9, CCMajor: 7, CCMinor: 5, SHM: true}
	nv.SHM = false
	if BusBandwidthOf(nv) <= BusBandwidthOf(shm) {
		t.Error("an NVLink bridge pair is not faster than the SHM ring")
	}
}
