// Package jsonerr puts encoding/json's decode errors, which count bytes, into the file:line
// form of every other input error, naming the key where the error has one ("trace.json:12:
// interval_ns: want int64, got string"; "part.json:40: truncated: the JSON ends early").
package jsonerr

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// Error is a decode error placed in its file.
type Error struct {
	Path string
	Line int    // 1-based; 0 when the error has no place in the data
	Key  string // the JSON key path ("inventory.gpus.index"), "" when the error names none
	Err  error
}

func (e *Error) Error() string {
	place := e.Path
	if e.Line > 0 {
		place = fmt.Sprintf("%s:%d", e.Path, e.Line)
	}
	if e.Key != "" {
		return place + ": " + e.Key + ": " + e.Err.Error()
	}
	return place + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// unknownField is encoding/json's Decoder.DisallowUnknownFields error, which carries no offset.
var unknownField = regexp.MustCompile(`^json: unknown field "(.*)"$`)

// Wrap returns err, an error of decoding data (the whole contents of path) with
// encoding/json, as an *Error naming path, the line and the key; nil stays nil. An empty or
// truncated document is placed on its last line. what, if not empty, goes before the message
// ("not a compare part: truncated: ...").
func Wrap(path string, data []byte, err error, what string) error {
	if err == nil {
		return nil
	}
	e := wrap(path, data, err)
	if what != "" {
		e.Err = fmt.Errorf("%s: %w", what, e.Err)
	}
	return e
}

// Syntax is Wrap for an error that may or may not come from decoding data: a JSON syntax error
// or a truncated or empty document is placed in path as Wrap places it; any other error
// (what the caller found wrong with the decoded value) gives nil.
func Syntax(path string, data []byte, err error, what string) error {
	var se *json.SyntaxError
	if !errors.As(err, &se) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil
	}
	return Wrap(path, data, err, what)
}

func wrap(path string, data []byte, err error) *Error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case len(bytes.TrimSpace(data)) == 0:
		return &Error{Path: path, Line: 1, Err: errors.New("empty: no JSON value")}
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return &Error{Path: path, Line: lineAt(data, len(data)), Err: errors.New("truncated: the JSON ends early")}
	case errors.As(err, &se):
		msg := strings.TrimPrefix(se.Error(), "json: ")
		if strings.HasPrefix(msg, "unexpected end of JSON input") {
			msg = "truncated: the JSON ends early"
		}
		return &Error{Path: path, Line: lineAt(data, int(se.Offset)), Err: errors.New(msg)}
	case errors.As(err, &te):
		// Offset is where the value ends; a value lies on one line but for long strings.
		msg := fmt.Sprintf("want %s, got %s", te.Type, te.Value)
		return &Error{Path: path, Line: lineAt(data, int(te.Offset)), Key: te.Field, Err: errors.New(msg)}
	}
	if m := unknownField.FindStringSubmatch(err.Error()); m != nil {
		key := m[1]
		name := key
		if i := strings.LastIndexByte(name, '.'); i >= 0 {
			name = name[i+1:]
		}
		line := 0
		if loc := regexp.MustCompile(`"` + regexp.QuoteMeta(name) + `"\s*:`).FindIndex(data); loc != nil {
			line = lineAt(data, loc[0])
		}
		return &Error{Path: path, Line: line, Key: key, Err: errors.New("unknown key")}
	}
	return &Error{Path: path, Err: err}
}

// lineAt is the 1-based line of byte offset off in data; the end of a file whose last line
// ends in a newline is that last line.
func lineAt(data []byte, off int) int {
	off = min(max(off, 0), len(data))
	if off == len(data) && off > 0 && data[off-1] == '\n' {
		off--
	}
	return bytes.Count(data[:off], []byte("\n")) + 1
}
