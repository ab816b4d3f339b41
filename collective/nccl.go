package collective

import (
	"fmt"
	"math"
	"strings"
)

// Op is a collective operation.
type Op string

// Collectives NCCL offers (the ones TF's cross-device ops use are AllReduce and Broadcast).
const (
	OpAllReduce     Op = "all_reduce"
	OpAllGather     Op = "all_gather"
	OpReduceScatter Op = "reduce_scatter"
	OpBroadcast     Op = "broadcast"
	OpReduce        Op = "reduce"
)

// NCCL algorithms and protocols (names as NCCL_ALGO / NCCL_PROTO spell them, lower case).
const (
	AlgoRing = "ring"
	AlgoTree = "tree"

	ProtoLL     = "ll"
	ProtoLL128  = "ll128"
	ProtoSimple = "simple"
)

// Result is the cost of one collective, reported the way nccl-tests reports it
// (doc/PERFORMANCE.md in NVIDIA/nccl-tests): AlgBW = S/t; BusBW = AlgBW x the operation's
// correction factor (2(n-1)/n for all-reduce, (n-1)/n for all-gather and reduce-scatter, 1 for
// broadcast and reduce), comparable with the hardware's link bandwidth whatever n is.
type Result struct {
	// Seconds is the whole time of the collective: NCCL's latency + bytes/bandwidth, plus the
	// topology's extra Latency.
	Seconds float64
	// AlgBW and BusBW are bytes/s.
	AlgBW, BusBW float64
	// Algo is the algorithm used ("ring", "tree", or "none" for one GPU or zero bytes).
	Algo string
	// Protocol is the NCCL protocol used ("ll", "ll128", "simple").
	Protocol string
	// LatencySeconds is the size-independent part of Seconds.
	LatencySeconds float64
	// Op and Bytes repeat the request.
	Op    Op
	Bytes int64
}

// NCCL's tuning tables, NVIDIA/nccl src/graph/tuning.cc (v2.19, ncclTopoTuneModel). Latencies
// in microseconds, bandwidths in GB/s. Index order: algorithm {tree, ring}, protocol
// {ll, ll128, simple}.
var (
	baseLat = [2][3]float64{{6.8, 14.0, 0}, {6.6, 14.0, 8.4}}

	// hwLat[hardware][algorithm][protocol], hardware = {NVLink, PCI, network}.
	hwLat = [3][2][3]float64{
		{{.6, 1.25, 28}, {.6, 1.9, 3.4}},
		{{1.0, 1.9, 28}, {1.0, 2.5, 5.7}},
		{{5.0, 8.5, 28}, {2.7, 4.0, 14.0}},
	}

	// [architecture {Volta, Ampere, Hopper}][nodes {1, 2, >2}]
	llMaxBws             = [3][3]float64{{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {87.7, 22.5, 19.0}}
	perChMaxRingLL128Bws = [3][3]float64{{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 36.7}}
	perChMaxTreeLL128Bws = [3][3]float64{{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 29.0}}
	perChMaxTreeBws      = [3][3]float64{{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}}

	// treeCorrectionFactor[protocol][log2(bytes/64)] (ncclTopoGetAlgoTime): trees fall short
	// of the model at medium sizes.
	treeCorrectionFactor = [3][23]float64{
		{1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
		{1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0},
		{.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9},
	}
)

const (
	hwNVLink = 0
	hwPCI    = 1
	hwNet    = 2

	algTree = 0
	algRing = 1
)

var (
	algoNames  = [2]string{AlgoTree, AlgoRing}
	protoNames = [3]string{ProtoLL, ProtoLL128, ProtoSimple}
)

// netOverheadUS is NCCL's per-step network post overhead on x86 Intel hosts (getNetOverhead:
// 1 us; x3 for the Simple protocol).
const netOverheadUS = 1.0

func log2i(n int64) int {
	l := 0
	for n >>= 1; n > 0; n >>= 1 {
		l++
	}
	return l
}

// model holds NCCL's per-(algorithm, protocol) latency and algorithm bandwidth for one
// topology and operation, as ncclTopoTuneModel fills comm->latencies and comm->bandwidths.
type model struct {
	lat [2][3]float64 // us
	bw  [2][3]float64 // algorithm bandwidth, GB/s; 0 = disabled
}

func buildModel(t Topology, op Op) model {
	var m model
	tn := newTuning(t, op)
	for a := 0; a < 2; a++ {
		if a == algTree && op != OpAllReduce {
			continue
		}
		for p := 0; p < 3; p++ {
			if p == 1 && !tn.ll128 {
				continue
			}
			m.bw[a][p] = tn.algBandwidth(a, p)
			m.lat[a][p] = tn.latency(a, p)
		}
	}
	return m
}

// tuning is what ncclTopoTuneModel derives from the topology and operation before it fills
// the table: the architecture and node-count indices of its bandwidth caps, the channels,
// the steps of a ring and whether LL128 is enabled.
type tuning struct {
	op                  Op
	n, nNodes           int
	arch, index2        int
	llMaxBw             float64
	nCh, ppn            float64
	intraHw             int
	nsteps, nInterSteps int
	ll128               bool
	busGBs              float64
}

func newTuning(t Topology, op Op) tuning {
	tn := tuning{op: op, n: t.GPUs, nNodes: t.nodes()}
	n, nNodes := tn.n, tn.nNodes
	cc := t.cc()
	tn.arch = 1
	switch {
	case cc >= 90:
		tn.arch = 2
	case cc < 80:
		tn.arch = 0
	}
	tn.index2 = 2
	if nNodes <= 2 {
		tn.index2 = nNodes - 1
	}
	index1 := tn.arch
	if nNodes > 1 {
		index1 = 0 // multi-node LL limit follows the CPU vendor; Intel assumed
	}
	tn.llMaxBw = llMaxBws[index1][tn.index2]
	tn.nCh = float64(t.channels())
	tn.ppn = float64(n) / float64(nNodes)
	tn.intraHw = hwNVLink
	if t.Kind == PCIe {
		tn.intraHw = hwPCI
	}
	switch op {
	case OpAllReduce:
		tn.nsteps = 2 * (n - 1)
		if nNodes > 1 {
			tn.nInterSteps = 2 * nNodes
		}
	case OpAllGather, OpReduceScatter:
		tn.nsteps = n - 1
		tn.nInterSteps = nNodes - 1
	default:
		tn.nsteps = n
		tn.nInterSteps = nNodes
	}
	// LL128 runs only on NVLink between identical Volta, Ampere or Hopper GPUs (tuning.cc,
	// "Enable LL128 by default only on Volta/Ampere/Hopper+NVLink").
	tn.ll128 = t.Kind != PCIe && (cc == 70 || cc == 80 || cc == 90)
	tn.busGBs = BusBandwidthOf(t) / 1e9
	return tn
}

// algBandwidth is comm->bandwidths[op][a][p]: the bus bandwidth capped per protocol and
// channel, times the algorithm's ratio, in GB/s.
func (tn tuning) algBandwidth(a, p int) float64 {
	arch, index2 := tn.arch, tn.index2
	bus := tn.busGBs
	if a == algRing && p == 0 {
		f := 1.0 / 3.0
		if tn.nNodes > 1 || tn.op == OpAllReduce || tn.op == OpReduce {
			f = 1.0 / 4.0
		}
		bus = math.Min(tn.llMaxBw, bus*f)
	}
	if a == algRing && p == 1 {
		f := 0.92
		if tn.ppn < 2 {
			f = 0.7
		}
		bus = math.Min(bus*f, tn.nCh*perChMaxRingLL128Bws[arch][index2])
	}
	if a == algTree {
		bus = math.Min(bus*.92, tn.nCh*perChMaxTreeBws[arch][index2])
		if p == 0 {
			bus = math.Min(bus/3.8, tn.llMaxBw)
		}
		if p == 1 {
			f := 120.0 / 128.0
			if tn.nNodes == 1 {
				f = 7.0 / 9.0
			}
			bus = math.Min(bus*f, tn.nCh*perChMaxTreeLL128Bws[arch][index2])
		}
	}
	ratio := 0.5
	if a == algRing {
		ratio = float64(tn.n) / float64(tn.nsteps)
	}
	return bus * ratio
}

// latency is comm->latencies[op][a][p]: the base latency plus each step's hop, in us.
func (tn tuning) latency(a, p int) float64 {
	nNodes := tn.nNodes
	lat := baseLat[a][p]
	intraLat := hwLat[tn.intraHw][a][p]
	interLat := hwLat[hwNet][a][p]
	if a != algRing {
		return lat + 2*(float64(tn.n/nNodes-1)*intraLat+float64(log2i(int64(nNodes)))*interLat)
	}
	if tn.op == OpBroadcast || tn.op == OpReduce {
		hw := tn.intraHw
		if nNodes > 1 {
			hw = hwNet
		}
		return lat + float64(tn.nsteps)*hwLat[hw][a][p]
	}
	if nNodes > 1 {
		ovh := netOverheadUS
		if p == 2 {
			ovh *= 3
		}
		intraLat = math.Max(intraLat, ovh)
	}
	return lat + (float64(tn.nsteps-tn.nInterSteps)*intraLat + float64(tn.nInterSteps)*interLat)
}

// timeUS is ncclTopoGetAlgoTime: latency + bytes / (1000 x GB/s), in microseconds, with the
// tree correction factor and the multi-node ring plateau.
func (m model) timeUS(t Topology, a, p int, bytes int64) float64 {
	bw := m.bw[a][p]
	if bw == 0 {
		return -1
	}
	lat := m.lat[a][p]
	if a == algTree {
		if ls := log2i(bytes >> 6); ls < 23 {
			bw *= treeCorrectionFactor[p][ls]
		}
	}
	if a == algRing && p == 2 && t.nodes() > 1 && bytes/(int64(t.channels())*int64(t.GPUs)) >= 64 {
		if t.cc() < 80 {
			lat *= 1.9
		} else {
			lat *= 1.4
		}
	}
	return lat + float64(bytes)/(1000*bw)
}

// busFactor is nccl-tests' bus bandwidth correction for op on n ranks.
func busFactor(op Op, n int) float64 {
	switch op {
	case OpAllReduce:
		return 2 * float64(n-1) / float64(n)
	case OpAllGather, OpReduceScatter:
		return float64(n-1) / float64(n)
	default:
		return 1
	}
}

// parseAlgo splits "ring", "tree/ll128", "auto" or "" into allowed algorithm and protocol masks.
func parseAlgo(algo string) (algos [2]bool, protos [3]bool, err error) {
	s := strings.ToLower(strings.TrimSpace(algo))
	a, p, _ := strings.Cut(s, "/")
	switch a {
	case "", "auto", "nccl":
		algos = [2]bool{true, true}
	case AlgoTree:
		algos[algTree] = true
	case AlgoRing:
		algos[algRing] = true
	default:
		return algos, protos, fmt.Errorf("collective: algorithm %q: want auto, ring or tree, optionally /ll, /ll128 or /simple", algo)
	}
	switch p {
	case "":
		protos = [3]bool{true, true, true}
	case ProtoLL:
		protos[0] = true
	case ProtoLL128:
		protos[1] = true
	case ProtoSimple:
		protos[2] = true
	default:
		return algos, protos, fmt.Errorf("collective: protocol %q in %q: want ll, ll128 or simple", p, algo)
	}
	return algos, protos, nil
}

// Collective returns the time of op over bytes (the per-rank buffer size, as nccl-tests counts
// it) on t. algo is "auto" (or "") for NCCL's own choice — the (algorithm, protocol) pair of
// least modelled time, as ncclTopoGetAlgoTime ranks them — or forces one as NCCL_ALGO and
// NCCL_PROTO would: "ring", "tree", "ring/simple", "tree/ll".
func Collective(t Topology, op Op, bytes int64, algo string) (Result, error) {
	if err := t.Validate(); err != nil {
		return Result{}, err
	}
	if bytes < 0 {
		return Result{}, fmt.Errorf("collective: bytes: %d, want >= 0", bytes)
	}
	switch op {
	case OpAllReduce, OpAllGather, OpReduceScatter, OpBroadcast, OpReduce:
	default:
		return Result{}, fmt.Errorf("collective: op %q unknown", op)
	}
	algos, protos, err := parseAlgo(algo)
	if err != nil {
		return Result{}, err
	}
	if t.GPUs == 1 || bytes == 0 {
		// One rank has nothing to exchange and NCCL returns at once for a count of 0.
		return Result{Algo: "none", Op: op, Bytes: bytes}, nil
	}
	m := buildModel(t, op)
	best, bestA, bestP := math.Inf(1), -1, -1
	for a := 0; a < 2; a++ {
		for p := 0; p < 3; p++ {
			if !algos[a] || !protos[p] {
				continue
			}
			us := m.timeUS(t, a, p, bytes)
			if us >= 0 && us < best {
				best, bestA, bestP = us, a, p
			}
		}
	}
	if bestA < 0 {
		return Result{}, fmt.Errorf("collective: %s is not available for %s on %d %s GPUs (cc %d.%d)", algo, op, t.GPUs, t.Kind, t.cc()/10, t.cc()%10)
	}
	sec := best*1e-6 + t.Latency
	algbw := float64(bytes) / sec
	return Result{
		Seconds:        sec,
		AlgBW:          algbw,
		BusBW:          algbw * busFactor(op, t.GPUs),
		Algo:           algoNames[bestA],
		Protocol:       protoNames[bestP],
		LatencySeconds: m.lat[bestA][bestP]*1e-6 + t.Latency,
		Op:             op,
		Bytes:          bytes,
	}, nil
}

// AllReduce is Collective(t, OpAllReduce, bytes, algo) for callers that validated t already.
// It panics on a topology or algorithm Validate would reject (a programmer mistake).
func AllReduce(t Topology, bytes int64, algo string) Result {
	r, err := Collective(t, OpAllReduce, bytes, algo)
	if err != nil {
		panic(err.Error())
	}
	return r
}

// Candidate is one (algorithm, protocol) pair's modelled cost, as NCCL's tuning table shows it
// (NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING prints latency/bandwidth per pair).
type Candidate struct {
	Algo, Protocol string
	LatencySeconds float64 // NCCL's latency for the pair
	AlgBW          float64 // bytes/s, before the tree correction factor
	Seconds        float64 // for the requested size; 0 when the pair is disabled
	Chosen         bool
}

// Candidates lists every (algorithm, protocol) pair NCCL would weigh for op at bytes, in the
// order of the tuning table (tree then ring; ll, ll128, simple), marking the one chosen.
func Candidates(t Topology, op Op, bytes int64) ([]Candidate, error) {
	chosen, err := Collective(t, op, bytes, "auto")
	if err != nil {
		return nil, err
	}
	if t.GPUs == 1 {
		return nil, nil
	}
	m := buildModel(t, op)
	var out []Candidate
	for a := 0; a < 2; a++ {
		for p := 0; p < 3; p++ {
			c := Candidate{Algo: algoNames[a], Protocol: protoNames[p], LatencySeconds: m.lat[a][p] * 1e-6, AlgBW: m.bw[a][p] * 1e9}
			if us := m.timeUS(t, a, p, bytes); us >= 0 {
				c.Seconds = us*1e-6 + t.Latency
			}
			c.Chosen = c.Algo == chosen.Algo && c.Protocol == chosen.Protocol
			out = append(out, c)
		}
	}
	return out, nil
}

// Crossovers returns the message sizes (powers of two from 8 B to maxBytes) at which NCCL's
// choice of (algorithm, protocol) for op changes, as "algo/proto" keyed by the first size using
// it. It is what a report prints to explain the choice by message size.
func Crossovers(t Topology, op Op, maxBytes int64) ([]Crossover, error) {
	var out []Crossover
	last := ""
	for b := int64(8); b <= maxBytes; b *= 2 {
		r, err := Collective(t, op, b, "auto")
		if err != nil {
			return nil, err
		}
		k := r.Algo + "/" + r.Protocol
		if k != last {
			out = append(out, Crossover{FromBytes: b, Algo: r.Algo, Protocol: r.Protocol})
			last = k
		}
	}
	return out, nil
}

// Crossover marks the smallest power-of-two size at which NCCL switches to Algo/Protocol.
type Crossover struct {
	FromBytes      int64
	Algo, Protocol string
}
