package xprof

import (
	"fmt"
	"math"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
)

// The XSpace schema: field numbers of tsl/profiler/protobuf/xplane.proto (openxla/xla's
// xla/tsl/profiler/protobuf/xplane.proto, the same in tensorflow/core/profiler/protobuf), the
// messages jax.profiler.trace and tf.profiler.experimental serialize to HOST.xplane.pb. Only
// the fields a profile import reads are named; others are skipped by their wire type, as a
// protobuf parser skips unknown fields.
const (
	// XSpace
	spacePlanes    = 1 // repeated XPlane
	spaceErrors    = 2 // repeated string
	spaceWarnings  = 3 // repeated string
	spaceHostnames = 4 // repeated string

	// XPlane
	planeID            = 1 // int64
	planeName          = 2 // string
	planeLines         = 3 // repeated XLine
	planeEventMetadata = 4 // map<int64, XEventMetadata>
	planeStatMetadata  = 5 // map<int64, XStatMetadata>
	planeStats         = 6 // repeated XStat

	// A map<K, V> entry on the wire: key 1, value 2.
	mapKey   = 1
	mapValue = 2

	// XLine
	lineID          = 1  // int64
	lineName        = 2  // string
	lineTimestampNS = 3  // int64, ns since the Unix epoch
	lineEvents      = 4  // repeated XEvent
	lineDurationPS  = 9  // int64
	lineDisplayID   = 10 // int64
	lineDisplayName = 11 // string

	// XEvent
	eventMetadataID     = 1 // int64
	eventOffsetPS       = 2 // int64, oneof data: ps from XLine.timestamp_ns
	eventDurationPS     = 3 // int64
	eventStats          = 4 // repeated XStat
	eventNumOccurrences = 5 // int64, oneof data: an aggregated event

	// XStat
	statMetadataID = 1 // int64
	statDouble     = 2 // double, oneof value
	statUint64     = 3 // uint64
	statInt64      = 4 // int64
	statStr        = 5 // string
	statBytes      = 6 // bytes
	statRef        = 7 // uint64: the id of an XStatMetadata whose name is the value

	// XEventMetadata
	eventMetaID          = 1 // int64
	eventMetaName        = 2 // string
	eventMetaDisplayName = 4 // string
	eventMetaStats       = 5 // repeated XStat

	// XStatMetadata
	statMetaID   = 1 // int64
	statMetaName = 2 // string
)

// wireError is a malformed XSpace: what was being read and the byte offset in the file.
type wireError struct {
	at   int
	what string
}

func (e *wireError) Error() string {
	return fmt.Sprintf("not a valid XSpace (truncated or corrupt): %s at byte %d", e.what, e.at)
}

// msg is one message's bytes and where they start in the file (for errors).
type msg struct {
	b   []byte
	off int
}

// field is one decoded field of a message: its number and wire type, the value of a varint,
// fixed32 or fixed64 field in x, the payload of a length-delimited one in sub.
type field struct {
	num protowire.Number
	typ protowire.Type
	x   uint64
	sub msg
}

// each calls fn for every field of m, in wire order, with protowire's checks: a tag, varint or
// length that runs past the message is an error naming its offset, and so is a group (XSpace
// has none; a start-group tag in it is corruption).
func (m msg) each(what string, fn func(f field) error) error {
	b, at := m.b, m.off
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return &wireError{at, what + ": bad field tag"}
		}
		f := field{num: num, typ: typ}
		start := at
		b, at = b[n:], at+n
		switch typ {
		case protowire.VarintType:
			f.x, n = protowire.ConsumeVarint(b)
		case protowire.Fixed64Type:
			f.x, n = protowire.ConsumeFixed64(b)
		case protowire.Fixed32Type:
			var v uint32
			v, n = protowire.ConsumeFixed32(b)
			f.x = uint64(v)
		case protowire.BytesType:
			var v []byte
			v, n = protowire.ConsumeBytes(b)
			if n >= 0 {
				f.sub = msg{v, at + n - len(v)}
			}
		default:
			return &wireError{start, fmt.Sprintf("%s: field %d has wire type %d, which XSpace does not use", what, num, typ)}
		}
		if n < 0 {
			return &wireError{start, fmt.Sprintf("%s: field %d runs past the end of its message", what, num)}
		}
		b, at = b[n:], at+n
		if err := fn(f); err != nil {
			return err
		}
	}
	return nil
}

// want checks that f has the wire type its field number has in the schema.
func (f field) want(what string, typ protowire.Type) error {
	if f.typ != typ {
		return &wireError{f.sub.off, fmt.Sprintf("%s: field %d has wire type %d, want %d", what, f.num, f.typ, typ)}
	}
	return nil
}

// int64 is f as a proto3 int64 (two's complement in a varint).
func (f field) int64() int64 { return int64(f.x) }

// str is a string field's value, copied out of the file's buffer.
func (f field) str() string { return string(f.sub.b) }

// StatMetadata is an XStatMetadata: a stat's name, shared by every stat of the plane with
// its id.
type StatMetadata struct {
	ID   int64
	Name string
}

// EventMetadata is an XEventMetadata: an event's name, shared by every event of the plane
// with its id, and the stats that hold for all of them.
type EventMetadata struct {
	ID          int64
	Name        string
	DisplayName string
	Stats       []Stat
}

// Stat is one XStat: its metadata id and its value, of one of the oneof's kinds.
type Stat struct {
	MetadataID int64
	Kind       StatKind
	// Num holds a double's bits, a uint64, an int64's two's complement or a ref's id.
	Num uint64
	// Str holds a string or bytes value.
	Str string
}

// StatKind says which member of XStat's value oneof a Stat holds.
type StatKind uint8

// The kinds of a stat's value.
const (
	StatNone StatKind = iota
	StatDouble
	StatUint64
	StatInt64
	StatString
	StatBytes
	StatRef
)

// readStat decodes one XStat.
func readStat(m msg) (Stat, error) {
	var s Stat
	err := m.each("XStat", func(f field) error {
		var err error
		switch f.num {
		case statMetadataID:
			err = f.want("XStat.metadata_id", protowire.VarintType)
			s.MetadataID = f.int64()
		case statDouble:
			err = f.want("XStat.double_value", protowire.Fixed64Type)
			s.Kind, s.Num = StatDouble, f.x
		case statUint64:
			err = f.want("XStat.uint64_value", protowire.VarintType)
			s.Kind, s.Num = StatUint64, f.x
		case statInt64:
			err = f.want("XStat.int64_value", protowire.VarintType)
			s.Kind, s.Num = StatInt64, f.x
		case statStr:
			err = f.want("XStat.str_value", protowire.BytesType)
			s.Kind, s.Str = StatString, f.str()
		case statBytes:
			err = f.want("XStat.bytes_value", protowire.BytesType)
			s.Kind, s.Str = StatBytes, f.str()
		case statRef:
			err = f.want("XStat.ref_value", protowire.VarintType)
			s.Kind, s.Num = StatRef, f.x
		}
		return err
	})
	return s, err
}

// plane is one XPlane as the import reads it: its name, the metadata maps, and its lines
// still encoded (decoded one at a time by lines, so that a plane's events are never all
// held as structs).
type plane struct {
	id     int64
	name   string
	events map[int64]*EventMetadata
	stats  map[int64]*StatMetadata
	lines  []msg
}

// readPlane decodes an XPlane's name and metadata maps and keeps its lines' bytes.
func readPlane(m msg) (*plane, error) {
	p := &plane{events: map[int64]*EventMetadata{}, stats: map[int64]*StatMetadata{}}
	err := m.each("XPlane", func(f field) error {
		switch f.num {
		case planeID:
			if err := f.want("XPlane.id", protowire.VarintType); err != nil {
				return err
			}
			p.id = f.int64()
		case planeName:
			if err := f.want("XPlane.name", protowire.BytesType); err != nil {
				return err
			}
			p.name = f.str()
		case planeLines:
			if err := f.want("XPlane.lines", protowire.BytesType); err != nil {
				return err
			}
			p.lines = append(p.lines, f.sub)
		case planeEventMetadata:
			if err := f.want("XPlane.event_metadata", protowire.BytesType); err != nil {
				return err
			}
			return readMapEntry(f.sub, "XPlane.event_metadata", func(key int64, v msg) error {
				em, err := readEventMetadata(v)
				if err != nil {
					return err
				}
				if em.ID == 0 {
					em.ID = key
				}
				p.events[key] = em
				return nil
			})
		case planeStatMetadata:
			if err := f.want("XPlane.stat_metadata", protowire.BytesType); err != nil {
				return err
			}
			return readMapEntry(f.sub, "XPlane.stat_metadata", func(key int64, v msg) error {
				sm, err := readStatMetadata(v)
				if err != nil {
					return err
				}
				if sm.ID == 0 {
					sm.ID = key
				}
				p.stats[key] = sm
				return nil
			})
		}
		return nil
	})
	return p, err
}

// readMapEntry decodes one entry of a map<int64, Message> field.
func readMapEntry(m msg, what string, fn func(key int64, v msg) error) error {
	var key int64
	var val msg
	err := m.each(what, func(f field) error {
		switch f.num {
		case mapKey:
			if err := f.want(what+" key", protowire.VarintType); err != nil {
				return err
			}
			key = f.int64()
		case mapValue:
			if err := f.want(what+" value", protowire.BytesType); err != nil {
				return err
			}
			val = f.sub
		}
		return nil
	})
	if err != nil {
		return err
	}
	return fn(key, val)
}

func readEventMetadata(m msg) (*EventMetadata, error) {
	em := &EventMetadata{}
	err := m.each("XEventMetadata", func(f field) error {
		switch f.num {
		case eventMetaID:
			if err := f.want("XEventMetadata.id", protowire.VarintType); err != nil {
				return err
			}
			em.ID = f.int64()
		case eventMetaName:
			if err := f.want("XEventMetadata.name", protowire.BytesType); err != nil {
				return err
			}
			em.Name = f.str()
		case eventMetaDisplayName:
			if err := f.want("XEventMetadata.display_name", protowire.BytesType); err != nil {
				return err
			}
			em.DisplayName = f.str()
		case eventMetaStats:
			if err := f.want("XEventMetadata.stats", protowire.BytesType); err != nil {
				return err
			}
			s, err := readStat(f.sub)
			if err != nil {
				return err
			}
			em.Stats = append(em.Stats, s)
		}
		return nil
	})
	return em, err
}

func readStatMetadata(m msg) (*StatMetadata, error) {
	sm := &StatMetadata{}
	err := m.each("XStatMetadata", func(f field) error {
		switch f.num {
		case statMetaID:
			if err := f.want("XStatMetadata.id", protowire.VarintType); err != nil {
				return err
			}
			sm.ID = f.int64()
		case statMetaName:
			if err := f.want("XStatMetadata.name", protowire.BytesType); err != nil {
				return err
			}
			sm.Name = f.str()
		}
		return nil
	})
	return sm, err
}

// line is an XLine's header; its events are visited by eachEvent.
type line struct {
	id, displayID         int64
	name, displayName     string
	timestampNS, duration int64
	events                []msg
}

func readLine(m msg) (*line, error) {
	l := &line{}
	err := m.each("XLine", func(f field) error {
		var err error
		switch f.num {
		case lineID:
			err = f.want("XLine.id", protowire.VarintType)
			l.id = f.int64()
		case lineDisplayID:
			err = f.want("XLine.display_id", protowire.VarintType)
			l.displayID = f.int64()
		case lineName:
			err = f.want("XLine.name", protowire.BytesType)
			l.name = f.str()
		case lineDisplayName:
			err = f.want("XLine.display_name", protowire.BytesType)
			l.displayName = f.str()
		case lineTimestampNS:
			err = f.want("XLine.timestamp_ns", protowire.VarintType)
			l.timestampNS = f.int64()
		case lineDurationPS:
			err = f.want("XLine.duration_ps", protowire.VarintType)
			l.duration = f.int64()
		case lineEvents:
			err = f.want("XLine.events", protowire.BytesType)
			l.events = append(l.events, f.sub)
		}
		return err
	})
	return l, err
}

// event is one XEvent, its stats resolved against its plane.
type event struct {
	metadataID  int64
	offsetPS    int64
	occurrences int64 // num_occurrences: an aggregated event, no time of its own
	durationPS  int64
	stats       []Stat
}

func readEvent(m msg, stats []Stat) (event, error) {
	e := event{stats: stats[:0]}
	err := m.each("XEvent", func(f field) error {
		var err error
		switch f.num {
		case eventMetadataID:
			err = f.want("XEvent.metadata_id", protowire.VarintType)
			e.metadataID = f.int64()
		case eventOffsetPS:
			err = f.want("XEvent.offset_ps", protowire.VarintType)
			e.offsetPS = f.int64()
		case eventNumOccurrences:
			err = f.want("XEvent.num_occurrences", protowire.VarintType)
			e.occurrences = f.int64()
		case eventDurationPS:
			err = f.want("XEvent.duration_ps", protowire.VarintType)
			e.durationPS = f.int64()
		case eventStats:
			if err = f.want("XEvent.stats", protowire.BytesType); err != nil {
				return err
			}
			var s Stat
			s, err = readStat(f.sub)
			e.stats = append(e.stats, s)
		}
		return err
	})
	return e, err
}

// statName is the name of a stat's metadata on p ("" when it has none).
func (p *plane) statName(s Stat) string {
	if m := p.stats[s.MetadataID]; m != nil {
		return m.Name
	}
	return ""
}

// statString is a stat's value as text: a string or a ref's name as is, a number printed.
func (p *plane) statString(s Stat) string {
	switch s.Kind {
	case StatString, StatBytes:
		return s.Str
	case StatRef:
		if m := p.stats[int64(s.Num)]; m != nil {
			return m.Name
		}
		return ""
	case StatUint64:
		return fmt.Sprint(s.Num)
	case StatInt64:
		return fmt.Sprint(int64(s.Num))
	case StatDouble:
		return fmt.Sprint(math.Float64frombits(s.Num))
	}
	return ""
}

// statInt is a stat's value as an integer, and whether it is one (a number, or a string of
// digits: TraceMe's "step_num=3" arrives as an int64, a Chrome trace's as text).
func (p *plane) statInt(s Stat) (int64, bool) {
	switch s.Kind {
	case StatUint64, StatInt64:
		return int64(s.Num), true
	case StatDouble:
		v := math.Float64frombits(s.Num)
		return int64(v), v == math.Trunc(v) && math.Abs(v) < 1<<53
	}
	return parseInt(strings.TrimSpace(p.statString(s)))
}
