package xprof

import (
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// The tests encode their XSpaces with protowire against the same field numbers the decoder
// reads (xspace.go), as the profiler's C++ serializer lays them out: fields in number order,
// maps as repeated key/value entries.

func appendBytes(b []byte, num protowire.Number, v []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

func appendString(b []byte, num protowire.Number, v string) []byte {
	return appendBytes(b, num, []byte(v))
}

func appendVarint(b []byte, num protowire.Number, v uint64) []byte {
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

// tStat is a stat to encode: its metadata id and one value.
type tStat struct {
	id           int64
	str          string  // str_value when set
	ref          int64   // ref_value when set
	i64          int64   // int64_value when set (with isInt)
	f64          float64 // double_value when set (with isF64)
	isInt, isF64 bool
}

func (s tStat) encode() []byte {
	b := appendVarint(nil, statMetadataID, uint64(s.id))
	switch {
	case s.str != "":
		b = appendString(b, statStr, s.str)
	case s.ref != 0:
		b = appendVarint(b, statRef, uint64(s.ref))
	case s.isInt:
		b = appendVarint(b, statInt64, uint64(s.i64))
	case s.isF64:
		b = protowire.AppendTag(b, statDouble, protowire.Fixed64Type)
		b = protowire.AppendFixed64(b, math.Float64bits(s.f64))
	}
	return b
}

type tEvent struct {
	meta            int64
	offsetPS, durPS int64
	occurrences     int64
	stats           []tStat
}

func (e tEvent) encode() []byte {
	b := appendVarint(nil, eventMetadataID, uint64(e.meta))
	if e.occurrences != 0 {
		b = appendVarint(b, eventNumOccurrences, uint64(e.occurrences))
	} else {
		b = appendVarint(b, eventOffsetPS, uint64(e.offsetPS))
	}
	b = appendVarint(b, eventDurationPS, uint64(e.durPS))
	for _, s := range e.stats {
		b = appendBytes(b, eventStats, s.encode())
	}
	return b
}

type tLine struct {
	id     int64
	name   string
	tsNS   int64
	events []tEvent
}

func (l tLine) encode() []byte {
	b := appendVarint(nil, lineID, uint64(l.id))
	b = appendString(b, lineName, l.name)
	b = appendVarint(b, lineTimestampNS, uint64(l.tsNS))
	for _, e := range l.events {
		b = appendBytes(b, lineEvents, e.encode())
	}
	return b
}

type tPlane struct {
	id     int64
	name   string
	lines  []tLine
	events map[int64]string // event metadata: id -> name
	stats  map[int64]string // stat metadata: id -> name
	// eventStats are stats of an event metadata (constant for all its events).
	eventStats map[int64][]tStat
}

func (p tPlane) encode() []byte {
	b := appendVarint(nil, planeID, uint64(p.id))
	b = appendString(b, planeName, p.name)
	for _, l := range p.lines {
		b = appendBytes(b, planeLines, l.encode())
	}
	for _, id := range sortedKeys(p.events) {
		m := appendVarint(nil, eventMetaID, uint64(id))
		m = appendString(m, eventMetaName, p.events[id])
		for _, s := range p.eventStats[id] {
			m = appendBytes(m, eventMetaStats, s.encode())
		}
		entry := appendVarint(nil, mapKey, uint64(id))
		entry = appendBytes(entry, mapValue, m)
		b = appendBytes(b, planeEventMetadata, entry)
	}
	for _, id := range sortedKeys(p.stats) {
		m := appendVarint(nil, statMetaID, uint64(id))
		m = appendString(m, statMetaName, p.stats[id])
		entry := appendVarint(nil, mapKey, uint64(id))
		entry = appendBytes(entry, mapValue, m)
		b = appendBytes(b, planeStatMetadata, entry)
	}
	return b
}

func encodeSpace(hostnames []string, planes ...tPlane) []byte {
	var b []byte
	for _, p := range planes {
		b = appendBytes(b, spacePlanes, p.encode())
	}
	for _, h := range hostnames {
		b = appendString(b, spaceHostnames, h)
	}
	return b
}

func sortedKeys[V any](m map[int64]V) []int64 {
	var ks []int64
	for k := range m {
		ks = append(ks, k)
	}
	for i := range ks {
		for j := i + 1; j < len(ks); j++ {
			if ks[j] < ks[i] {
				ks[i], ks[j] = ks[j], ks[i]
			}
		}
	}
	return ks
}
