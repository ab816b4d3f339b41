package jsonerr

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"
)

type doc struct {
	Version int `json:"version"`
	Inner   struct {
		Count int64 `json:"count"`
	} `json:"inner"`
}

func TestWrap(t *testing.T) {
	tests := []struct{ name, data, want string }{
		{"empty", "", "d.json:1: empty: no JSON value"},
		{"blank", "\n \n", "d.json:1: empty: no JSON value"},
		{"truncated", "{\n \"version\": 1,\n \"inner\": {\n", "d.json:3: truncated: the JSON ends early"},
		{"truncated mid-token", "{\n \"version\": 1,\n \"inn", "d.json:3: truncated: the JSON ends early"},
		{"syntax", "{\n \"version\": 1,\n x\n}", "d.json:3: invalid character 'x' looking for beginning of object key string"},
		{"type", "{\n \"version\": 1,\n \"inner\": {\n  \"count\": \"abc\"\n }\n}", "d.json:4: inner.count: want int64, got string"},
		{"unknown", "{\n \"version\": 1,\n \"bogus\": 3\n}", "d.json:3: bogus: unknown key"},
		{"garbage", "\x00\xff", "d.json:1: invalid character '\\x00' looking for beginning of value"},
	}
	for _, tc := range tests {
		dec := json.NewDecoder(bytes.NewReader([]byte(tc.data)))
		dec.DisallowUnknownFields()
		var d doc
		err := Wrap("d.json", []byte(tc.data), dec.Decode(&d), "")
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: Wrap = %v, want %q", tc.name, err, tc.want)
		}
	}
	if err := Wrap("d.json", []byte("{"), json.Unmarshal([]byte("{"), new(doc)), "not a doc"); err == nil || err.Error() != "d.json:1: not a doc: truncated: the JSON ends early" {
		t.Errorf("Wrap with what = %v", err)
	}
	if err := Syntax("d.json", []byte("{\n"), json.Unmarshal([]byte("{\n"), new(doc)), "doc"); err == nil || err.Error() != "d.json:1: doc: truncated: the JSON ends early" {
		t.Errorf("Syntax of a truncated file = %v", err)
	}
	if err := Syntax("d.json", []byte("{}"), io.ErrClosedPipe, "doc"); err != nil {
		t.Errorf("Syntax of an error not from decoding = %v, want nil", err)
	}
	if Wrap("d.json", nil, nil, "") != nil {
		t.Error("Wrap(nil) is not nil")
	}
}
