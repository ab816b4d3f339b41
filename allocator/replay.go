package allocator

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// ReplayHeader is the output header of `gpusim alloc replay` (docs/design.md), the names of
// jax.Device.memory_stats().
const ReplayHeader = "op,id,bytes,result,bytes_in_use,peak_bytes_in_use,pool_bytes,peak_pool_bytes,largest_free_block_bytes,num_allocs,largest_alloc_size,bytes_limit"

// ReplayHeaderPtr is ReplayHeader with the ptr column that record_bfc_trace.py adds with
// RECORD_PTR=1 (--with-ptr).
const ReplayHeaderPtr = ReplayHeader + ",ptr"

// Trace operations.
const (
	OpAlloc = "alloc"
	OpFree  = "free"
	// OpInit is the first row of a recorded trace: the statistics before any operation. Replay
	// echoes it with the fresh allocator's statistics, so that replaying a recorded trace prints
	// the recorded file row for row.
	OpInit = "init"
)

// TraceOp is one row of an allocation trace.
type TraceOp struct {
	Op    string
	ID    int64 // as written in the trace (or assigned in order for an alloc without one)
	Bytes int64
	Line  int // line number in the file, for messages
	// Ptr is the device address in the trace's optional ptr column (record_bfc_trace.py with
	// RECORD_PTR=1): the buffer an alloc row created or a free row released; 0 when the trace has no ptr column or the row none.
	Ptr  int64
	slot int32
}

// Trace is a parsed allocation trace.
type Trace struct {
	Name string
	Ops  []TraceOp
	// HasPtr says the trace has a ptr column: Replay then places each region the allocator grows
	// at the address the driver gave it on the real GPU (see Replay).
	HasPtr bool
	slots  int
}

// TraceError is bad input in a trace: it names the file, line and field.
type TraceError struct {
	File  string
	Line  int
	Field string
	Err   error
}

func (e *TraceError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
	}
	return fmt.Sprintf("%s:%d: %s: %v", e.File, e.Line, e.Field, e.Err)
}

func (e *TraceError) Unwrap() error { return e.Err }

// ErrBadTrace is wrapped by every TraceError.
var ErrBadTrace = errors.New("bad trace")

// maxTraceLine bounds one line of a trace: a row is a few dozen bytes.
const maxTraceLine = 1 << 20

// ReadTrace parses a CSV trace with a header naming at least the columns op and bytes; id and
// ptr (a device address, decimal or 0x-hex) are optional (more columns are ignored). An alloc row with no id column or an empty id gets the
// next id in order (0, 1, 2, ... counting allocs); a free must name the id of an earlier alloc.
// Ops are alloc, free and init; anything else is an error, as are negative sizes, a free of an
// unknown id, a missing column and a truncated line.
func ReadTrace(r io.Reader, name string) (*Trace, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxTraceLine)
	tp := newTraceParser(name)
	line := 0
	var fields [16][]byte
	for sc.Scan() {
		line++
		raw := bytes.TrimRight(sc.Bytes(), "\r")
		if len(bytes.TrimSpace(raw)) == 0 {
			continue
		}
		f := splitComma(raw, fields[:0])
		if tp.colOp < 0 {
			if err := tp.header(line, raw, f); err != nil {
				return nil, err
			}
			continue
		}
		if err := tp.row(line, f); err != nil {
			return nil, err
		}
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		// Not a trace (a binary file, /dev/zero): a row is a few dozen bytes.
		return nil, tp.bad(line+1, "", "a line longer than %d bytes: not a CSV trace", maxTraceLine)
	} else if err != nil {
		return nil, fmt.Errorf("%s:%d: %w", name, line+1, err)
	}
	if tp.colOp < 0 {
		return nil, tp.bad(1, "", "empty trace: no header")
	}
	return tp.tr, nil
}

// traceParser is ReadTrace's state between rows: the header's columns and the live ids with
// the slots they hold.
type traceParser struct {
	tr                             *Trace
	colOp, colID, colBytes, colPtr int
	ncols                          int
	ids                            map[int64]int32 // trace id -> slot of the live allocation
	known                          map[int64]bool  // every id ever allocated
	free                           []int32         // recycled slots
	nextAuto                       int64
}

func newTraceParser(name string) *traceParser {
	return &traceParser{tr: &Trace{Name: name}, colOp: -1, colID: -1, colBytes: -1, colPtr: -1,
		ids: map[int64]int32{}, known: map[int64]bool{}}
}

// bad is a TraceError for line and field of this trace, wrapping ErrBadTrace.
func (p *traceParser) bad(line int, field, format string, args ...any) error {
	return &TraceError{File: p.tr.Name, Line: line, Field: field, Err: fmt.Errorf("%w: "+format, append([]any{ErrBadTrace}, args...)...)}
}

// header finds the columns in the header row f; op and bytes are required.
func (p *traceParser) header(line int, raw []byte, f [][]byte) error {
	p.ncols = len(f)
	for i, h := range f {
		switch strings.TrimSpace(string(h)) {
		case "op":
			p.colOp = i
		case "id":
			p.colID = i
		case "bytes":
			p.colBytes = i
		case "ptr":
			p.colPtr = i
		}
	}
	if p.colOp < 0 {
		return p.bad(line, "op", "missing column op in header %q", raw)
	}
	if p.colBytes < 0 {
		return p.bad(line, "bytes", "missing column bytes in header %q", raw)
	}
	p.tr.HasPtr = p.colPtr >= 0
	return nil
}

// row parses one data row and appends its op to the trace.
func (p *traceParser) row(line int, f [][]byte) error {
	if len(f) < p.ncols {
		return p.bad(line, "", "truncated line: %d fields, header has %d", len(f), p.ncols)
	}
	op, hasID, err := p.fields(line, f)
	if err != nil {
		return err
	}
	switch op.Op {
	case OpAlloc:
		err = p.alloc(line, &op, hasID)
	case OpFree:
		err = p.release(line, &op, hasID)
	case OpInit:
	default:
		err = p.bad(line, "op", "unknown op %q (want alloc, free or init)", op.Op)
	}
	if err != nil {
		return err
	}
	p.tr.Ops = append(p.tr.Ops, op)
	return nil
}

// fields reads the op, id, bytes and ptr columns of a row; hasID says whether the id was given.
func (p *traceParser) fields(line int, f [][]byte) (op TraceOp, hasID bool, err error) {
	op = TraceOp{Op: string(bytes.TrimSpace(f[p.colOp])), Line: line, slot: -1}
	var idField []byte
	if p.colID >= 0 {
		idField = bytes.TrimSpace(f[p.colID])
	}
	if len(idField) > 0 {
		v, err := strconv.ParseInt(string(idField), 10, 64)
		if err != nil {
			return op, false, p.bad(line, "id", "not an integer: %q", idField)
		}
		op.ID = v
	}
	bf := bytes.TrimSpace(f[p.colBytes])
	if len(bf) > 0 {
		v, err := strconv.ParseInt(string(bf), 10, 64)
		if err != nil {
			return op, false, p.bad(line, "bytes", "not an integer: %q", bf)
		}
		if v < 0 {
			return op, false, p.bad(line, "bytes", "negative size %d", v)
		}
		op.Bytes = v
	} else if op.Op == OpAlloc {
		return op, false, p.bad(line, "bytes", "empty size")
	}
	if p.colPtr >= 0 {
		if pf := bytes.TrimSpace(f[p.colPtr]); len(pf) > 0 {
			v, err := parsePtr(pf)
			if err != nil {
				return op, false, p.bad(line, "ptr", "%v", err)
			}
			op.Ptr = v
		}
	}
	return op, len(idField) > 0, nil
}

// alloc numbers an alloc without an id and gives it a slot, reusing a freed one first.
func (p *traceParser) alloc(line int, op *TraceOp, hasID bool) error {
	if !hasID {
		op.ID = p.nextAuto
	}
	p.nextAuto++
	if _, live := p.ids[op.ID]; live {
		return p.bad(line, "id", "alloc of id %d that is still live", op.ID)
	}
	var s int32
	if n := len(p.free); n > 0 {
		s, p.free = p.free[n-1], p.free[:n-1]
	} else {
		s = int32(p.tr.slots)
		p.tr.slots++
	}
	p.ids[op.ID] = s
	p.known[op.ID] = true
	op.slot = s
	return nil
}

// release gives a free the slot of its live alloc and recycles the slot.
func (p *traceParser) release(line int, op *TraceOp, hasID bool) error {
	if !hasID {
		return p.bad(line, "id", "free without an id")
	}
	s, live := p.ids[op.ID]
	if !live {
		if p.known[op.ID] {
			return p.bad(line, "id", "free of id %d that was already freed", op.ID)
		}
		return p.bad(line, "id", "free of unknown id %d", op.ID)
	}
	delete(p.ids, op.ID)
	p.free = append(p.free, s)
	op.slot = s
	return nil
}

// parsePtr reads a device address: decimal as record_bfc_trace.py writes it, or 0x-prefixed hex.
func parsePtr(b []byte) (int64, error) {
	s := string(b)
	var v int64
	var err error
	if h, ok := strings.CutPrefix(s, "0x"); ok {
		v, err = strconv.ParseInt(h, 16, 64)
	} else {
		v, err = strconv.ParseInt(s, 10, 64)
	}
	if err != nil || v < 0 {
		return 0, fmt.Errorf("not an address: %q", s)
	}
	return v, nil
}

// splitComma splits a CSV line on commas (trace fields are plain integers and words: no quoting).
func splitComma(b []byte, out [][]byte) [][]byte {
	for {
		i := bytes.IndexByte(b, ',')
		if i < 0 {
			return append(out, b)
		}
		out = append(out, b[:i])
		b = b[i+1:]
	}
}

// ReplayConfig selects the allocator a trace is replayed on.
type ReplayConfig struct {
	Growth                bool // --mode growth; false = preallocate
	Limit                 int64
	Variant               Variant
	GarbageCollection     bool
	FragmentationFraction float64
	// IgnorePtr places regions with the model of the driver (vaSpace) even when the trace has
	// a ptr column (--ignore-ptr): what a simulation without recorded addresses gets.
	IgnorePtr bool
	// WithPtr makes WriteReplay append a ptr column: the simulated address of the chunk an alloc
	// row got or a free row released (0 for init and OOM rows), as record_bfc_trace.py records
	// it with RECORD_PTR=1.
	WithPtr bool
}

// NewReplayAllocator builds the BFC allocator a replay uses: "GPU_0_bfc" on an unlimited device
// (the limit is the allocator's own), retrying as TF and JAX do.
func NewReplayAllocator(cfg ReplayConfig) *BFC { return newReplayAllocator(cfg, nil) }

func newReplayAllocator(cfg ReplayConfig, sub SubAllocator) *BFC {
	o := BFCOptions{
		AllowGrowth:           cfg.Growth,
		GarbageCollection:     cfg.GarbageCollection,
		FragmentationFraction: cfg.FragmentationFraction,
		AllowRetryOnFailure:   true,
		Variant:               cfg.Variant,
		NoOOMLog:              true,
	}
	return NewBFC("GPU_0_bfc", cfg.Limit, o, sub)
}

// ReplayRow is one output row.
type ReplayRow struct {
	Op    string
	ID    int64
	Bytes int64
	OK    bool
	Stats Stats
	// Ptr is the simulated address of the chunk the alloc got or the free released (0 for init,
	// OOM, 0-byte allocations and frees of those).
	Ptr int64
}

// recordedSub is an unlimited device that places every region where the recording's driver
// did: at the ptr of the alloc row that grew the pool. That row's buffer is the new region's
// first chunk (the bins held no fitting chunk before Extend, and a new region's only chunk is
// its whole range, carved from its low end), so its address is the region's base. Verified on
// every trace in testdata/traces-ptr: every later address of the region lies inside it, and
// replaying with WithPtr reproduces every recorded address.
type recordedSub struct {
	ptr     int64 // the current alloc row's recorded ptr
	used    bool  // a region was already placed at ptr in this row
	regions [][2]int64
	err     error
}

func (s *recordedSub) Alloc(n int64) (int64, bool) {
	if s.err != nil {
		return 0, false
	}
	if s.ptr == 0 {
		s.err = errors.New("the alloc grows the pool but has no ptr (want the address of the new region's first chunk)")
		return 0, false
	}
	if s.used {
		s.err = fmt.Errorf("the alloc grows the pool twice; only one region base is recorded (%#x)", s.ptr)
		return 0, false
	}
	for _, r := range s.regions {
		if s.ptr < r[0]+r[1] && r[0] < s.ptr+n {
			s.err = fmt.Errorf("region [%#x, %#x) at the recorded ptr overlaps the region [%#x, %#x)", s.ptr, s.ptr+n, r[0], r[0]+r[1])
			return 0, false
		}
	}
	s.used = true
	s.regions = append(s.regions, [2]int64{s.ptr, n})
	return s.ptr, true
}

func (s *recordedSub) Free(addr, n int64) {
	for i, r := range s.regions {
		if r[0] == addr {
			s.regions = append(s.regions[:i], s.regions[i+1:]...)
			return
		}
	}
}

// Replay runs the trace on a fresh allocator and calls emit after every op with the statistics
// right after it. A free of an id whose alloc failed (OOM) changes nothing. When the trace has a
// ptr column (and cfg.IgnorePtr is false), each region is placed at the recorded address of the
// alloc that grew the pool, so ties between equal-size chunks of different regions break as on
// the recording GPU; otherwise regions are placed by the model of the driver (vaSpace).
func Replay(tr *Trace, cfg ReplayConfig, emit func(ReplayRow)) error {
	if cfg.Variant != Classic && cfg.Growth {
		return fmt.Errorf("variant %v needs --mode preallocate: spatial partitioning requires a single fixed address range", cfg.Variant)
	}
	if cfg.Limit <= 0 {
		return fmt.Errorf("limit must be positive, got %d", cfg.Limit)
	}
	var rec *recordedSub
	var sub SubAllocator
	if tr.HasPtr && !cfg.IgnorePtr {
		rec = &recordedSub{}
		sub = rec
	}
	a := newReplayAllocator(cfg, sub)
	handles := make([]Handle, tr.slots)
	for i := range tr.Ops {
		op := &tr.Ops[i]
		ok := true
		var ptr int64
		switch op.Op {
		case OpAlloc:
			if rec != nil {
				rec.ptr, rec.used = op.Ptr, false
			}
			h, got := a.Allocate(op.Bytes)
			if rec != nil && rec.err != nil {
				return &TraceError{File: tr.Name, Line: op.Line, Field: "ptr", Err: fmt.Errorf("%w: %w", ErrBadTrace, rec.err)}
			}
			ok = got
			if !got {
				h = oomHandle
			}
			handles[op.slot] = h
			ptr = a.addr(h)
		case OpFree:
			if h := handles[op.slot]; h != oomHandle {
				ptr = a.addr(h)
				a.Free(h)
			}
		}
		if emit != nil {
			emit(ReplayRow{Op: op.Op, ID: op.ID, Bytes: op.Bytes, OK: ok, Stats: a.Stats(), Ptr: ptr})
		}
	}
	return nil
}

const oomHandle = Handle(-2)

// AppendRow appends r as a CSV line in ReplayHeader's column order.
func AppendRow(b []byte, r ReplayRow) []byte {
	b = append(b, r.Op...)
	b = append(b, ',')
	b = strconv.AppendInt(b, r.ID, 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, r.Bytes, 10)
	if r.OK {
		b = append(b, ",ok"...)
	} else {
		b = append(b, ",oom"...)
	}
	s := r.Stats
	for _, v := range [...]int64{s.BytesInUse, s.PeakBytesInUse, s.PoolBytes, s.PeakPoolBytes,
		s.LargestFreeBlockBytes, s.NumAllocs, s.LargestAllocSize, s.BytesLimit} {
		b = append(b, ',')
		b = strconv.AppendInt(b, v, 10)
	}
	return append(b, '\n')
}

// AppendRowPtr is AppendRow with the ptr column (ReplayHeaderPtr).
func AppendRowPtr(b []byte, r ReplayRow) []byte {
	b = AppendRow(b, r)
	b[len(b)-1] = ','
	b = strconv.AppendInt(b, r.Ptr, 10)
	return append(b, '\n')
}

// WriteReplay replays tr and writes the CSV (header and one row per op) to w.
func WriteReplay(w io.Writer, tr *Trace, cfg ReplayConfig) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	appendRow := AppendRow
	if cfg.WithPtr {
		bw.WriteString(ReplayHeaderPtr + "\n")
		appendRow = AppendRowPtr
	} else {
		bw.WriteString(ReplayHeader + "\n")
	}
	var buf []byte
	var werr error
	err := Replay(tr, cfg, func(r ReplayRow) {
		buf = appendRow(buf[:0], r)
		if _, err := bw.Write(buf); err != nil && werr == nil {
			werr = err
		}
	})
	if err != nil {
		return err
	}
	if werr != nil {
		return werr
	}
	return bw.Flush()
}
