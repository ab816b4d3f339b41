package hw

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"

	"github.com/gpusim/gpusim/internal/limitread"
	"github.com/gpusim/gpusim/internal/yamldoc"
	"go.yaml.in/yaml/v3"
)

// LoadProfile reads a GPU profile file (YAML). The keys are GPU's yaml tags; an optional
// `base: NAME` starts from a built-in profile, so a file may set only what it changes:
//
//	base: a100-80gb
//	name: my-a100
//	launch_overhead: 8e-6
//	efficiency:
//	  memory: 0.8
//
// Errors name the file, line and key.
func LoadProfile(path string) (GPU, error) {
	data, err := limitread.ReadFile(path, maxProfileBytes)
	if err != nil {
		return GPU{}, fmt.Errorf("load gpu profile: %w", err)
	}
	return ParseProfile(path, data)
}

// maxProfileBytes bounds a profile file: a profile is a few kilobytes of YAML.
const maxProfileBytes = 4 << 20

// ParseProfile parses profile data; name is used in error messages.
func ParseProfile(name string, data []byte) (GPU, error) {
	doc, err := oneDocument(name, data)
	if err != nil {
		return GPU{}, err
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return GPU{}, fmt.Errorf("%s:%d: a gpu profile is a mapping of keys to values", name, max(doc.Line, 1))
	}
	root := doc.Content[0]
	var g GPU
	lines := map[string]int{}
	// base first, wherever it appears.
	baseLine, baseName, err := baseKey(name, root)
	if err != nil {
		return GPU{}, err
	}
	if baseLine > 0 {
		// An @file base is refused before any lookup: LookupGPU would load it, and a file
		// naming itself (or two naming each other) would recurse until the stack overflows.
		if strings.HasPrefix(baseName, "@") {
			return GPU{}, fmt.Errorf("%s:%d: base: %q is not a built-in gpu (a profile file extends a built-in profile, not another file)", name, baseLine, baseName)
		}
		b, err := LookupGPU(baseName)
		if err != nil {
			return GPU{}, fmt.Errorf("%s:%d: base: %q is not a built-in gpu", name, baseLine, baseName)
		}
		g = b
		g.Efficiency.MemoryByKind = cloneMap(b.Efficiency.MemoryByKind)
		g.Efficiency.ElementsPerSMCycle = cloneMap(b.Efficiency.ElementsPerSMCycle)
	}
	if err := decodeInto(name, root, reflect.ValueOf(&g).Elem(), "", lines, map[string]bool{"base": true}); err != nil {
		return GPU{}, err
	}
	if err := g.validate(); err != nil {
		var fe *fieldError
		if errors.As(err, &fe) {
			return GPU{}, fe.at(name, lines, baseLine, baseName, root.Line, "not set, and no base: to take it from")
		}
		return GPU{}, fmt.Errorf("%s: %w", name, err)
	}
	return g, nil
}

// oneDocument parses a profile file's YAML: one document (yamldoc).
func oneDocument(file string, data []byte) (yaml.Node, error) {
	doc, second, err := yamldoc.Decode(data)
	if err != nil {
		return doc, fmt.Errorf("%s: %w", file, err)
	}
	if second > 0 {
		return doc, fmt.Errorf("%s:%d: a second YAML document: a profile is one document", file, second)
	}
	return doc, nil
}

// decodeInto sets the fields of struct v from mapping node m, key by key, so that an unknown
// key or a wrong type is reported with its line. prefix is the dotted path of m.
func decodeInto(file string, m *yaml.Node, v reflect.Value, prefix string, lines map[string]int, skip map[string]bool) error {
	fields := map[string]reflect.Value{}
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		tag := strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0]
		if tag != "" && tag != "-" {
			fields[tag] = v.Field(i)
		}
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, val := m.Content[i], m.Content[i+1]
		path := prefix + k.Value
		if skip[k.Value] && prefix == "" {
			continue
		}
		if seen[k.Value] {
			return fmt.Errorf("%s:%d: %s: duplicate key", file, k.Line, path)
		}
		seen[k.Value] = true
		f, ok := fields[k.Value]
		if !ok {
			return fmt.Errorf("%s:%d: %s: unknown key", file, k.Line, path)
		}
		lines[path] = k.Line
		if f.Kind() == reflect.Struct {
			if val.Kind != yaml.MappingNode {
				return fmt.Errorf("%s:%d: %s: want a mapping", file, val.Line, path)
			}
			if err := decodeInto(file, val, f, path+".", lines, nil); err != nil {
				return err
			}
			continue
		}
		if f.Kind() == reflect.Map {
			// Merge into the map inherited from base.
			var mm map[string]float64
			if err := val.Decode(&mm); err != nil {
				return fmt.Errorf("%s:%d: %s: %w", file, val.Line, path, stripLine(err))
			}
			if f.IsNil() {
				f.Set(reflect.ValueOf(map[string]float64{}))
			}
			for j := 0; j+1 < len(val.Content); j += 2 {
				kk := val.Content[j].Value
				if !knownKind(kk) && !slices.Contains(MemoryClasses, kk) {
					return fmt.Errorf("%s:%d: %s.%s: unknown work kind (known: %s)", file, val.Content[j].Line, path, kk, strings.Join(append(append([]string(nil), Kinds...), MemoryClasses...), ", "))
				}
				lines[path+"."+kk] = val.Content[j].Line
				f.SetMapIndex(reflect.ValueOf(kk), reflect.ValueOf(mm[kk]))
			}
			continue
		}
		p := reflect.New(f.Type())
		if err := val.Decode(p.Interface()); err != nil {
			return fmt.Errorf("%s:%d: %s: %w", file, val.Line, path, stripLine(err))
		}
		f.Set(p.Elem())
	}
	return nil
}

// stripLine drops yaml's own "line N: " prefix, since the caller names the line.
func stripLine(err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg := te.Errors[0]
		if i := strings.Index(msg, ": "); strings.HasPrefix(msg, "line ") && i > 0 {
			msg = msg[i+2:]
		}
		return errors.New(msg)
	}
	return err
}

// baseKey finds a profile file's `base: NAME` key in its top-level mapping root: its line
// (0 when the file has none) and NAME. A second base: is an error on its line, as a repeated
// key is anywhere else in the file (decodeInto), rather than the last one silently winning.
func baseKey(file string, root *yaml.Node) (line int, name string, err error) {
	for i := 0; i+1 < len(root.Content); i += 2 {
		if k := root.Content[i]; k.Value == "base" {
			if line > 0 {
				return 0, "", fmt.Errorf("%s:%d: base: duplicate key (first on line %d)", file, k.Line, line)
			}
			line, name = k.Line, root.Content[i+1].Value
		}
	}
	return line, name, nil
}

// fieldError is a failed check of a profile: field is the yaml key whose value failed, msg
// what is wrong with it. A check that reads several keys lists the others in also, each with
// the message to give at that key: where a file sets pcie_path: sys but leaves
// inter_socket_bandwidth at its zero, the error belongs on the pcie_path line.
type fieldError struct {
	field, msg string
	also       []fieldError
}

func (e *fieldError) Error() string { return e.field + ": " + e.msg }

// at places e on the line of the key the file sets that the check is about: field's own line
// where the file sets it, else the line of the first key of also that it sets, else the
// base: line (the values all came from the base profile), else the mapping's first line
// with unset saying where the values came from. lines maps dotted keys to their lines.
func (e *fieldError) at(file string, lines map[string]int, baseLine int, base string, rootLine int, unset string) error {
	if l := lines[e.field]; l > 0 {
		return fmt.Errorf("%s:%d: %s: %s", file, l, e.field, e.msg)
	}
	for _, o := range e.also {
		if l := lines[o.field]; l > 0 {
			return fmt.Errorf("%s:%d: %s: %s", file, l, o.field, o.msg)
		}
	}
	if baseLine > 0 {
		return fmt.Errorf("%s:%d: base: %s: %s: %s", file, baseLine, base, e.field, e.msg)
	}
	return fmt.Errorf("%s:%d: %s: %s (%s)", file, rootLine, e.field, unset, e.msg)
}

// validate checks the profile's numbers; errors are *fieldError naming the yaml key.
func (g GPU) validate() error {
	bad := func(field, msg string) error { return &fieldError{field: field, msg: msg} }
	switch {
	case g.Name == "":
		return bad("name", "a profile needs a name")
	case !(g.PredictionError >= 0 && g.PredictionError < 10):
		return bad("prediction_error", "must be from 0 (not a fitted profile) to below 10 (a log-normal spread)")
	case g.MemoryBytes <= 0:
		return bad("memory_bytes", "must be positive")
	case g.ContextBytes < 0 || g.ContextBytes >= g.MemoryBytes:
		return &fieldError{field: "context_bytes", msg: fmt.Sprintf("%d: must be at least 0 and below memory_bytes (%d)", g.ContextBytes, g.MemoryBytes),
			also: []fieldError{{field: "memory_bytes", msg: fmt.Sprintf("%d: must be above context_bytes (%d)", g.MemoryBytes, g.ContextBytes)}}}
	case g.CCMajor < 3:
		return bad("cc_major", "must be 3 or more")
	case g.CCMinor < 0:
		return bad("cc_minor", "must not be negative")
	case g.SMs <= 0:
		return bad("sms", "must be positive")
	case g.MemBandwidth <= 0:
		return bad("mem_bandwidth", "must be positive (B/s)")
	case g.PeakFP32 <= 0:
		return bad("peak_fp32", "must be positive (FLOP/s)")
	case g.PeakTF32 < 0:
		return bad("peak_tf32", "must not be negative")
	case g.PeakFP16 < 0:
		return bad("peak_fp16", "must not be negative")
	case g.PeakBF16 < 0:
		return bad("peak_bf16", "must not be negative")
	case g.PeakFP16Vector < 0:
		return bad("peak_fp16_vector", "must not be negative")
	case g.PeakBF16Vector < 0:
		return bad("peak_bf16_vector", "must not be negative")
	case g.NVLinkBandwidth < 0:
		return bad("nvlink_bandwidth", "must not be negative")
	case g.PCIeBandwidth <= 0:
		return bad("pcie_bandwidth", "must be positive (B/s)")
	case g.LaunchOverhead < 0:
		return bad("launch_overhead", "must not be negative (s)")
	case g.StepOverhead < 0:
		return bad("step_overhead", "must not be negative (s)")
	case g.HostDispatchScale < 0:
		return bad("host_dispatch_scale", "must not be negative (0 = 1)")
	case !(g.PowerLimit == 0 || g.PowerLimit >= 1 && g.PowerLimit <= maxProfilePower): // NaN fails too
		return bad("power_limit_w", fmt.Sprintf("%g: must be 0 (unknown: the boost clock) or from 1 to %g W", g.PowerLimit, float64(maxProfilePower)))
	case !(g.SustainedClockHz == 0 || g.SustainedClockHz >= minProfileClock && g.SustainedClockHz <= maxProfileClock):
		return bad("sustained_clock_hz", fmt.Sprintf("%g: must be 0 (unknown: the power-limit rule) or from %g to %g Hz", g.SustainedClockHz, float64(minProfileClock), float64(maxProfileClock)))
	case g.Cooling != "" && !slices.Contains(CoolingClasses, g.Cooling):
		return bad("cooling", fmt.Sprintf("%q: want one of %s, or leave it out", g.Cooling, strings.Join(CoolingClasses, ", ")))
	}
	if err := g.checkRanges(); err != nil {
		return err
	}
	e := g.Efficiency
	fracs := []struct {
		key string
		v   float64
	}{{"fp32", e.FP32}, {"tf32", e.TF32}, {"half", e.Half}, {"conv_fp32", e.ConvFP32}, {"conv_tf32", e.ConvTF32}, {"conv_half", e.ConvHalf}, {"attention", e.Attention},
		{"pseudo_half", e.PseudoHalf}, {"vector", e.Vector}, {"memory", e.Memory}, {"pcie", e.PCIe}}
	for _, f := range fracs {
		if !(f.v > 0 && f.v <= 2) {
			return bad("efficiency."+f.key, fmt.Sprintf("%g: must be in (0, 2]", f.v))
		}
	}
	for _, k := range append(append([]string(nil), Kinds...), MemoryClasses...) {
		if v, ok := e.MemoryByKind[k]; ok && !(v > 0 && v <= 1.5) {
			return bad("efficiency.memory_by_kind."+k, fmt.Sprintf("%g: must be in (0, 1.5]", v))
		}
		if v, ok := e.ElementsPerSMCycle[k]; ok && !(v > 0 && v <= 64) {
			return bad("efficiency.elements_per_sm_cycle."+k, fmt.Sprintf("%g: must be in (0, 64]", v))
		}
	}
	for _, f := range []struct {
		key string
		v   float64
	}{{"compute_ramp", e.ComputeRamp}, {"conv_ramp", e.ConvRamp}, {"memory_ramp", e.MemoryRamp}, {"kernel_gap", e.KernelGap}, {"pcie_latency", e.PCIeLatency}} {
		if !(f.v >= 0 && f.v <= 1) { // NaN fails too
			return bad("efficiency."+f.key, fmt.Sprintf("%g: must be in [0, 1] seconds", f.v))
		}
	}
	return nil
}

// Bounds of a profile's spec-sheet numbers. The switch in validate checks their signs; these
// bound them so that every cost the model derives from them is a finite time inside sim.Time's
// int64 nanoseconds (a NaN, an infinity or a bandwidth of 1e-300 B/s would otherwise reach
// sim.FromSeconds, which panics), each far outside what any GPU has.
const (
	// maxProfilePower: 10 kW, ten times the 1,000 W of a B200 board.
	maxProfilePower = 10000
	// minProfileClock and maxProfileClock bound a measured sustained clock: 100 MHz, below
	// any GPU's idle clock under NVML (210 MHz on GeForce and Tesla boards alike), and 10 GHz,
	// about five times the fastest boost clock shipped (2,520 MHz, RTX 4090).
	minProfileClock = 100e6
	maxProfileClock = 10e9
	// maxProfileSMs: gpusim's bound, several times the 144 SMs of a full GH100 or GB100 die.
	maxProfileSMs = 1024
	// maxProfileMemory: 16 TiB, as scenarios' memory keys (a hundred times an H200's 141 GB).
	maxProfileMemory = 1 << 44
	// minProfileRate and maxProfileRate bound every bandwidth (B/s) and peak (FLOP/s) that is
	// set: 1 MB/s, below any bus a GPU sits on, to 1e18, above any GPU's dense peak (an H200's
	// FP16 Tensor Core rate is about 1e15).
	minProfileRate = 1e6
	maxProfileRate = 1e18
	// maxProfileHostCost: one second per kernel launch or per step outside its ops (measured
	// costs are microseconds to milliseconds: launch_overhead 6e-6, step_overhead 4.5e-3).
	maxProfileHostCost = 1
	// maxProfileDispatchScale: a host a thousand times slower than the recording host.
	maxProfileDispatchScale = 1000
	// maxProfileCCMajor, maxProfileCCMinor: nvcc's sm_XY architecture names give the minor
	// version one digit; 99 is far above today's majors (Blackwell's 10 and 12).
	maxProfileCCMajor = 99
	maxProfileCCMinor = 9
)

// checkRanges checks the profile's spec-sheet numbers against their bounds (the constants
// above); a rate of 0 is allowed where 0 means "no such path".
func (g GPU) checkRanges() error {
	bad := func(field, msg string) error { return &fieldError{field: field, msg: msg} }
	ints := []struct {
		key       string
		v, lo, hi int64
	}{
		{"memory_bytes", g.MemoryBytes, 1, maxProfileMemory},
		{"cc_major", int64(g.CCMajor), 3, maxProfileCCMajor},
		{"cc_minor", int64(g.CCMinor), 0, maxProfileCCMinor},
		{"sms", int64(g.SMs), 1, maxProfileSMs},
		{"l2_bytes", g.L2Bytes, 0, maxProfileMemory},
	}
	for _, f := range ints {
		if f.v < f.lo || f.v > f.hi {
			return bad(f.key, fmt.Sprintf("%d: must be in [%d, %d]", f.v, f.lo, f.hi))
		}
	}
	rates := []struct {
		key    string
		v      float64
		zeroOK bool
		unit   string
	}{
		{"mem_bandwidth", g.MemBandwidth, false, "B/s"},
		{"peak_fp32", g.PeakFP32, false, "FLOP/s"},
		{"peak_tf32", g.PeakTF32, true, "FLOP/s"},
		{"peak_fp16", g.PeakFP16, true, "FLOP/s"},
		{"peak_bf16", g.PeakBF16, true, "FLOP/s"},
		{"peak_fp16_vector", g.PeakFP16Vector, true, "FLOP/s"},
		{"peak_bf16_vector", g.PeakBF16Vector, true, "FLOP/s"},
		{"nvlink_bandwidth", g.NVLinkBandwidth, true, "B/s"},
		{"pcie_bandwidth", g.PCIeBandwidth, false, "B/s"},
	}
	for _, f := range rates {
		if f.zeroOK && f.v == 0 {
			continue
		}
		if !(f.v >= minProfileRate && f.v <= maxProfileRate) { // NaN fails too
			zero := ""
			if f.zeroOK {
				zero = " (or 0: none)"
			}
			return bad(f.key, fmt.Sprintf("%g: must be in [%g, %g] %s%s", f.v, float64(minProfileRate), float64(maxProfileRate), f.unit, zero))
		}
	}
	secs := []struct {
		key    string
		v, max float64
		unit   string
	}{
		{"launch_overhead", g.LaunchOverhead, maxProfileHostCost, " seconds"},
		{"step_overhead", g.StepOverhead, maxProfileHostCost, " seconds"},
		{"host_dispatch_scale", g.HostDispatchScale, maxProfileDispatchScale, " (0 = 1)"},
	}
	for _, f := range secs {
		if !(f.v >= 0 && f.v <= f.max) {
			return bad(f.key, fmt.Sprintf("%g: must be in [0, %g]%s", f.v, f.max, f.unit))
		}
	}
	return nil
}

// WriteProfile writes g as a complete profile file that LoadProfile reads back unchanged.
func (g GPU) WriteProfile(w io.Writer) error {
	if err := g.validate(); err != nil {
		return fmt.Errorf("write gpu profile %q: %w", g.Name, err)
	}
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "# gpusim GPU profile %q. Units: bytes, B/s, FLOP/s, seconds.\n", g.Name)
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(g); err != nil {
		return fmt.Errorf("write gpu profile %q: %w", g.Name, err)
	}
	if err := enc.Close(); err != nil {
		return fmt.Errorf("write gpu profile %q: %w", g.Name, err)
	}
	_, err := w.Write(buf.Bytes())
	if err != nil {
		return fmt.Errorf("write gpu profile %q: %w", g.Name, err)
	}
	return nil
}

func cloneMap(m map[string]float64) map[string]float64 {
	if m == nil {
		return nil
	}
	c := make(map[string]float64, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}
