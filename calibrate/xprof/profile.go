package xprof

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/gpusim/gpusim/internal/limitread"
)

// Profile is what an import reads of a traced run: the device's kernels and the step markers.
type Profile struct {
	// Format is FormatXSpace or FormatChromeTrace.
	Format string
	// Kernels are the GPU operations of the trace (kernels, memory copies and sets), sorted
	// by device and start.
	Kernels []Kernel
	// Steps are the step markers (events with a step_num stat on a host plane), sorted by
	// start.
	Steps []Step
	// Hostnames, Errors and Warnings are the XSpace's own (none in a Chrome trace).
	Hostnames, Errors, Warnings []string
}

// The formats Load reads.
const (
	FormatXSpace      = "xspace"
	FormatChromeTrace = "chrome-trace"
)

// Kernel is one operation a GPU ran.
type Kernel struct {
	// Device is the GPU's ordinal (the N of /device:GPU:N); Stream names the timeline (the
	// CUDA stream: "Stream #14(Compute,MemcpyD2D)").
	Device int
	Stream string
	// Name is the kernel's (the CUDA function name, "MemcpyD2D", "Memset").
	Name string
	// Start and Duration are in picoseconds, Start from the profile's first timeline.
	Start, Duration int64
	// Op is the op that launched it: XLA's HLO instruction (the hlo_op stat: "fusion.12",
	// "cudnn-conv-bw-filter.53", or the command buffer a fusion ran in), TensorFlow's op
	// (tf_op: "model/conv1/Conv2D:Conv2D"), else the name of the "XLA Ops" or "TensorFlow Ops"
	// event around it. Module is XLA's HLO module (hlo_module: "jit_train_step").
	Op, Module string
	// Framework says which stat gave Op: "xla" (hlo_op, or an XLA Ops event), "tf" (tf_op,
	// or a TensorFlow Ops event) or "" (none).
	Framework string
	// Memcpy marks a memory copy or set (a memcpy_details or memset_details stat, or a
	// Memcpy/Memset name).
	Memcpy bool
}

// End is the kernel's end, in picoseconds from the profile's origin.
func (k Kernel) End() int64 { return k.Start + k.Duration }

// Step is one step marker: a host event with a step_num stat, as
// jax.profiler.StepTraceAnnotation and tf.profiler.experimental.Trace(name, step_num=N)
// write it (and TensorFlow's Keras fit around each train step).
type Step struct {
	Name            string
	Num             int64
	Start, Duration int64 // picoseconds
}

// End is the step's end, in picoseconds from the profile's origin.
func (s Step) End() int64 { return s.Start + s.Duration }

// MaxBytes bounds a profile file after decompression. A traced step of ResNet-50 under JAX,
// its HLO protos included, takes about 2 MB of XSpace (testdata/h200/profiles); a gigabyte
// holds hundreds of traced steps. A longer input (or a gzip bomb) is an error, not a filled
// memory.
const MaxBytes = 1 << 30

// Load reads a profile: an XSpace (HOST.xplane.pb) or a Chrome trace (HOST.trace.json),
// either of them gzip-compressed, told apart by their content. Every error names the path.
func Load(path string) (*Profile, error) {
	f, err := limitread.Open(path, MaxBytes)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := readAll(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	p, err := Decode(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// readAll reads r, gunzipping it when it starts with gzip's magic, up to MaxBytes.
func readAll(r io.Reader) ([]byte, error) {
	var head [2]byte
	n, err := io.ReadFull(r, head[:])
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, err
	}
	r = io.MultiReader(bytes.NewReader(head[:n]), r)
	if n == 2 && head[0] == 0x1f && head[1] == 0x8b {
		zr, err := gzip.NewReader(r)
		if err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
				return nil, errors.New("truncated: the gzip stream ends early")
			}
			return nil, err
		}
		defer zr.Close()
		r = zr
	}
	data, err := io.ReadAll(io.LimitReader(r, MaxBytes+1))
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, errors.New("truncated: the gzip stream ends early")
		}
		return nil, err
	}
	if len(data) > MaxBytes {
		return nil, fmt.Errorf("longer than %d bytes decompressed, more than a profile holds", MaxBytes)
	}
	return data, nil
}

// Decode reads a profile from its bytes (not compressed): a Chrome trace when it starts with
// '{' (after white space), else an XSpace. A profile with no GPU operation is an error: there
// is nothing to import.
func Decode(data []byte) (*Profile, error) {
	var p *Profile
	var err error
	if t := bytes.TrimLeft(data, " \t\r\n"); len(t) > 0 && t[0] == '{' {
		p, err = decodeChromeTrace(data)
	} else {
		p, err = decodeXSpace(data)
	}
	if err != nil {
		return nil, err
	}
	if len(p.Kernels) == 0 {
		return nil, fmt.Errorf("no GPU kernels: the %s has no /device:GPU timeline with kernels (was the profile taken on a GPU?)", p.Format)
	}
	p.sort()
	return p, nil
}

func (p *Profile) sort() {
	sort.SliceStable(p.Kernels, func(i, j int) bool {
		a, b := p.Kernels[i], p.Kernels[j]
		if a.Device != b.Device {
			return a.Device < b.Device
		}
		return a.Start < b.Start
	})
	sort.SliceStable(p.Steps, func(i, j int) bool { return p.Steps[i].Start < p.Steps[j].Start })
}

// maxSpanNS bounds how far apart two timelines of one profile may start: a profile covers
// seconds to hours, and picoseconds from the origin stay within int64 up to 106 days; 10 days
// keeps every sum of a start and a duration in range.
const maxSpanNS = 10 * 24 * 3600 * 1e9

// devicePrefix begins the name of a GPU's plane (tsl/profiler/utils/xplane_schema.h,
// kGpuPlanePrefix).
const devicePrefix = "/device:GPU:"

// deviceOrdinal is the N of a plane "/device:GPU:N" (ok false for other planes).
func deviceOrdinal(name string) (int, bool) {
	s, ok := strings.CutPrefix(name, devicePrefix)
	if !ok {
		return 0, false
	}
	if i := strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' }); i >= 0 {
		s = s[:i]
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n >= 0
}

// kernelLine reports whether a device plane's line holds the GPU's operations: the CUPTI
// tracer names each CUDA stream's timeline "Stream #N" with what ran on it in parentheses
// (xla/backends/profiler/gpu/cupti_collector.cc).
func kernelLine(name string) bool { return strings.HasPrefix(name, "Stream #") }

// Lines of derived op events on a device plane (tsl/profiler/utils/xplane_schema.h,
// kXlaOpLineName and kTensorFlowOpLineName): each event spans the kernels its op launched.
const (
	xlaOpsLine = "XLA Ops"
	tfOpsLine  = "TensorFlow Ops"
)

// Stat names (tsl/profiler/utils/xplane_schema.h, the StatType names).
const (
	statHLOOp     = "hlo_op"
	statHLOModule = "hlo_module"
	statTFOp      = "tf_op"
	statStepNum   = "step_num"
	statMemcpy    = "memcpy_details"
	statMemset    = "memset_details"
)

// decoder carries what decodeXSpace reads across planes.
type decoder struct {
	p       *Profile
	origin  int64 // ns since the epoch of the first timeline with events
	hasOrig bool
	scratch []Stat
}

func decodeXSpace(data []byte) (*Profile, error) {
	d := &decoder{p: &Profile{Format: FormatXSpace}}
	err := msg{data, 0}.each("XSpace", func(f field) error {
		switch f.num {
		case spacePlanes:
			if err := f.want("XSpace.planes", protowire.BytesType); err != nil {
				return err
			}
			return d.plane(f.sub)
		case spaceErrors, spaceWarnings, spaceHostnames:
			if err := f.want("XSpace strings", protowire.BytesType); err != nil {
				return err
			}
			switch f.num {
			case spaceErrors:
				d.p.Errors = append(d.p.Errors, f.str())
			case spaceWarnings:
				d.p.Warnings = append(d.p.Warnings, f.str())
			default:
				d.p.Hostnames = append(d.p.Hostnames, f.str())
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return d.p, nil
}

// opSpan is one event of an "XLA Ops" or "TensorFlow Ops" line.
type opSpan struct {
	start, end int64
	name, fw   string
}

// plane reads one XPlane: the kernels of a GPU plane, the step markers of any other.
func (d *decoder) plane(m msg) error {
	pl, err := readPlane(m)
	if err != nil {
		return err
	}
	dev, isDevice := deviceOrdinal(pl.name)
	first := len(d.p.Kernels)
	var ops []opSpan
	for _, lm := range pl.lines {
		l, err := readLine(lm)
		if err != nil {
			return err
		}
		if len(l.events) == 0 {
			continue
		}
		var role int
		switch {
		case isDevice && kernelLine(l.name):
			role = roleKernels
		case isDevice && (l.name == xlaOpsLine || l.name == tfOpsLine):
			role = roleOps
		case !isDevice:
			role = roleSteps
		default:
			continue
		}
		base, err := d.lineBase(l, lm.off)
		if err != nil {
			return err
		}
		for _, em := range l.events {
			e, err := readEvent(em, d.scratch)
			d.scratch = e.stats
			if err != nil {
				return err
			}
			if e.occurrences != 0 {
				continue // aggregated: no time of its own
			}
			if e.offsetPS < 0 || e.durationPS < 0 || e.offsetPS > maxSpanNS*1000 || e.durationPS > maxSpanNS*1000 {
				return &wireError{em.off, fmt.Sprintf("XEvent on %q: offset %d ps, duration %d ps: out of range", l.name, e.offsetPS, e.durationPS)}
			}
			start := base + e.offsetPS
			meta := pl.events[e.metadataID]
			name := ""
			if meta != nil {
				name = meta.Name
			}
			switch role {
			case roleKernels:
				d.p.Kernels = append(d.p.Kernels, pl.kernel(dev, l.name, name, start, e, meta))
			case roleOps:
				fw := "xla"
				if l.name == tfOpsLine {
					fw = "tf"
				}
				ops = append(ops, opSpan{start, start + e.durationPS, name, fw})
			case roleSteps:
				if n, ok := pl.stepNum(e.stats, meta); ok {
					d.p.Steps = append(d.p.Steps, Step{Name: name, Num: n, Start: start, Duration: e.durationPS})
				}
			}
		}
	}
	attributeOps(d.p.Kernels[first:], ops)
	return nil
}

const (
	roleKernels = iota + 1
	roleOps
	roleSteps
)

// lineBase is a line's start in picoseconds from the profile's origin (the first timeline
// with events).
func (d *decoder) lineBase(l *line, off int) (int64, error) {
	if !d.hasOrig {
		d.origin, d.hasOrig = l.timestampNS, true
	}
	diff := l.timestampNS - d.origin
	if diff > maxSpanNS || diff < -maxSpanNS {
		return 0, &wireError{off, fmt.Sprintf("XLine %q: timestamp_ns %d is more than 10 days from the first timeline's %d", l.name, l.timestampNS, d.origin)}
	}
	return diff * 1000, nil
}

// kernel builds the Kernel of one event of a stream line: its op and module from the
// event's stats, else its metadata's.
func (pl *plane) kernel(dev int, stream, name string, start int64, e event, meta *EventMetadata) Kernel {
	k := Kernel{Device: dev, Stream: stream, Name: name, Start: start, Duration: e.durationPS}
	look := func(stats []Stat) {
		for _, s := range stats {
			switch pl.statName(s) {
			case statHLOOp:
				if k.Op == "" || k.Framework != "xla" {
					k.Op, k.Framework = pl.statString(s), "xla"
				}
			case statTFOp:
				if k.Op == "" {
					k.Op, k.Framework = pl.statString(s), "tf"
				}
			case statHLOModule:
				if k.Module == "" {
					k.Module = pl.statString(s)
				}
			case statMemcpy, statMemset:
				k.Memcpy = true
			}
		}
	}
	look(e.stats)
	if meta != nil {
		look(meta.Stats)
	}
	if strings.HasPrefix(name, "Memcpy") || strings.HasPrefix(name, "Memset") {
		k.Memcpy = true
	}
	return k
}

// stepNum is the step_num stat of a host event, from its own stats or its metadata's.
func (pl *plane) stepNum(stats []Stat, meta *EventMetadata) (int64, bool) {
	for _, s := range stats {
		if pl.statName(s) == statStepNum {
			return pl.statInt(s)
		}
	}
	if meta != nil {
		for _, s := range meta.Stats {
			if pl.statName(s) == statStepNum {
				return pl.statInt(s)
			}
		}
	}
	return 0, false
}

// attributeOps gives each kernel without an op the op event of its device that spans it (the
// innermost one open at its start that ends at or after its end; the profiler derives these
// lines from the annotations the kernels were launched under, and their events nest). One
// sweep over both in start order, the open op events on a stack.
func attributeOps(ks []Kernel, ops []opSpan) {
	if len(ops) == 0 {
		return
	}
	// At one start, the longer (outer) event first.
	sort.Slice(ops, func(i, j int) bool {
		if ops[i].start != ops[j].start {
			return ops[i].start < ops[j].start
		}
		return ops[i].end > ops[j].end
	})
	idx := make([]int, len(ks))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return ks[idx[a]].Start < ks[idx[b]].Start })
	var open []opSpan
	next := 0
	for _, i := range idx {
		k := &ks[i]
		for ; next < len(ops) && ops[next].start <= k.Start; next++ {
			for len(open) > 0 && open[len(open)-1].end < ops[next].start {
				open = open[:len(open)-1]
			}
			open = append(open, ops[next])
		}
		for len(open) > 0 && open[len(open)-1].end < k.Start {
			open = open[:len(open)-1]
		}
		if k.Op != "" {
			continue
		}
		// The innermost open event that holds the whole kernel, among the few innermost.
		for j := len(open) - 1; j >= 0 && j >= len(open)-maxOpDepth; j-- {
			if open[j].end >= k.End() {
				k.Op, k.Framework = open[j].name, open[j].fw
				break
			}
		}
	}
}

// maxOpDepth bounds how many nested op events are tried for one kernel: XLA's and
// TensorFlow's op lines nest a few deep at most (an op inside a while loop's or a
// function's).
const maxOpDepth = 4

func parseInt(s string) (int64, bool) {
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}
