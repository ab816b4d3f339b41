package xprof

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// The Chrome trace JSON the profiler writes beside the XSpace (HOST.trace.json.gz, what
// TensorBoard's trace viewer loads; tsl/profiler/convert/trace_events_to_json.cc): an object
// whose "traceEvents" are the Trace Event Format's events. Metadata events ("ph": "M") name
// each pid (process_name: the XPlane, "/device:GPU:0") and each pid/tid (thread_name: the
// XLine, "Stream #14(...)"); complete events ("ph": "X") carry "ts" and "dur" in
// microseconds and the XStats as "args".

// chromeEvent is one element of traceEvents, as far as the import reads it.
type chromeEvent struct {
	Ph   string                     `json:"ph"`
	Pid  json.RawMessage            `json:"pid"`
	Tid  json.RawMessage            `json:"tid"`
	Name string                     `json:"name"`
	Ts   json.Number                `json:"ts"`
	Dur  json.Number                `json:"dur"`
	Args map[string]json.RawMessage `json:"args"`
}

// chromeSpan is a complete event kept until the names of the processes and threads are known
// (metadata events may come after the events they name).
type chromeSpan struct {
	pid, tid   string
	name       string
	start, dur int64 // ps
	op, fw     string
	module     string
	memcpy     bool
	step       int64
	hasStep    bool
}

func decodeChromeTrace(data []byte) (*Profile, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := expectDelim(dec, '{'); err != nil {
		return nil, err
	}
	c := &chromeReader{procs: map[string]string{}, threads: map[string]string{}}
	found := false
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, chromeErr(dec, err)
		}
		key, _ := tok.(string)
		if key != "traceEvents" {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, chromeErr(dec, err)
			}
			continue
		}
		found = true
		if err := expectDelim(dec, '['); err != nil {
			return nil, err
		}
		for dec.More() {
			var ev chromeEvent
			if err := dec.Decode(&ev); err != nil {
				return nil, chromeErr(dec, fmt.Errorf("traceEvents[%d]: %w", c.n, err))
			}
			if err := c.add(ev); err != nil {
				return nil, fmt.Errorf("not a valid Chrome trace: traceEvents[%d]: %w", c.n, err)
			}
			c.n++
		}
		if err := expectDelim(dec, ']'); err != nil {
			return nil, err
		}
	}
	if err := expectDelim(dec, '}'); err != nil {
		return nil, err
	}
	if !found {
		return nil, errors.New("not a Chrome trace: no traceEvents")
	}
	return c.profile(), nil
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return chromeErr(dec, err)
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return fmt.Errorf("not a valid Chrome trace: %v at byte %d, want %q", tok, dec.InputOffset(), string(want))
	}
	return nil
}

// chromeErr places a decoding error by byte offset.
func chromeErr(dec *json.Decoder, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("not a valid Chrome trace (truncated): the JSON ends early at byte %d", dec.InputOffset())
	}
	return fmt.Errorf("not a valid Chrome trace: %w at byte %d", err, dec.InputOffset())
}

type chromeReader struct {
	n       int
	procs   map[string]string // pid -> process (plane) name
	threads map[string]string // pid/tid -> thread (line) name
	spans   []chromeSpan
	origin  int64 // µs of the first complete event
	hasOrig bool
}

func (c *chromeReader) add(ev chromeEvent) error {
	pid, tid := string(ev.Pid), string(ev.Tid)
	switch ev.Ph {
	case "M":
		var name string
		if raw, ok := ev.Args["name"]; ok {
			name = argString(raw)
		}
		switch ev.Name {
		case "process_name":
			c.procs[pid] = name
		case "thread_name":
			c.threads[pid+"/"+tid] = name
		}
		return nil
	case "X":
	default:
		return nil
	}
	us, frac, err := micros(ev.Ts)
	if err != nil {
		return fmt.Errorf("ts: %w", err)
	}
	dus, dfrac, err := micros(ev.Dur)
	if err != nil {
		return fmt.Errorf("dur: %w", err)
	}
	if !c.hasOrig {
		c.origin, c.hasOrig = us, true
	}
	diff := us - c.origin
	if diff > maxSpanNS/1000 || diff < -maxSpanNS/1000 || dus < 0 || dus > maxSpanNS/1000 {
		return fmt.Errorf("ts %s, dur %s: more than 10 days from the first event", ev.Ts, ev.Dur)
	}
	s := chromeSpan{pid: pid, tid: tid, name: ev.Name, start: diff*1e6 + frac, dur: dus*1e6 + dfrac}
	for k, raw := range ev.Args {
		switch k {
		case statHLOOp:
			s.op, s.fw = argString(raw), "xla"
		case statHLOModule:
			s.module = argString(raw)
		case statMemcpy, statMemset:
			s.memcpy = true
		case statStepNum:
			s.step, s.hasStep = parseInt(strings.TrimSpace(argString(raw)))
		}
	}
	if raw, ok := ev.Args[statTFOp]; ok && s.op == "" {
		s.op, s.fw = argString(raw), "tf"
	}
	c.spans = append(c.spans, s)
	return nil
}

// profile sorts the complete events into kernels (GPU planes' stream lines), op spans (their
// XLA Ops and TensorFlow Ops lines) and step markers (host planes).
func (c *chromeReader) profile() *Profile {
	p := &Profile{Format: FormatChromeTrace}
	ops := map[int][]opSpan{}
	for _, s := range c.spans {
		proc := c.procs[s.pid]
		thread := c.threads[s.pid+"/"+s.tid]
		dev, isDevice := deviceOrdinal(proc)
		switch {
		case isDevice && kernelLine(thread):
			k := Kernel{Device: dev, Stream: thread, Name: s.name, Start: s.start, Duration: s.dur, Op: s.op, Framework: s.fw, Module: s.module, Memcpy: s.memcpy}
			if strings.HasPrefix(s.name, "Memcpy") || strings.HasPrefix(s.name, "Memset") {
				k.Memcpy = true
			}
			p.Kernels = append(p.Kernels, k)
		case isDevice && (thread == xlaOpsLine || thread == tfOpsLine):
			fw := "xla"
			if thread == tfOpsLine {
				fw = "tf"
			}
			ops[dev] = append(ops[dev], opSpan{s.start, s.start + s.dur, s.name, fw})
		case !isDevice && s.hasStep:
			p.Steps = append(p.Steps, Step{Name: s.name, Num: s.step, Start: s.start, Duration: s.dur})
		}
	}
	p.sort()
	for lo := 0; lo < len(p.Kernels); {
		hi := lo
		for hi < len(p.Kernels) && p.Kernels[hi].Device == p.Kernels[lo].Device {
			hi++
		}
		attributeOps(p.Kernels[lo:hi], ops[p.Kernels[lo].Device])
		lo = hi
	}
	return p
}

// argString is an args value as text: a JSON string's contents, else the value as written.
func argString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(bytes.TrimSpace(raw))
}

// micros splits a decimal number of microseconds into whole microseconds and the rest in
// picoseconds, exactly: a float64 holds an absolute timestamp in microseconds only to a
// quarter of one.
func micros(n json.Number) (int64, int64, error) {
	s := string(n)
	if s == "" {
		return 0, 0, nil
	}
	neg := strings.HasPrefix(s, "-")
	if strings.ContainsAny(s, "eE") {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || f > 9e15 || f < -9e15 {
			return 0, 0, fmt.Errorf("%s: not a time in microseconds", s)
		}
		us := int64(f)
		return us, int64((f - float64(us)) * 1e6), nil
	}
	whole, frac, _ := strings.Cut(strings.TrimPrefix(s, "-"), ".")
	us, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("%s: not a time in microseconds", s)
	}
	if len(frac) > 6 {
		frac = frac[:6]
	}
	var ps int64
	if frac != "" {
		if ps, err = strconv.ParseInt(frac+strings.Repeat("0", 6-len(frac)), 10, 64); err != nil {
			return 0, 0, fmt.Errorf("%s: not a time in microseconds", s)
		}
	}
	if neg {
		us, ps = -us, -ps
	}
	return us, ps, nil
}
