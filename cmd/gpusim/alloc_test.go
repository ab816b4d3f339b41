package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func allocRun(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(context.Background(), &out, &errb, args)
	if err != nil {
		errb.WriteString(err.Error())
	}
	return out.String(), errb.String(), exitCode(err)
}

// TestAllocReplayRecordedTraces: replaying each recorded trace prints the recorded rows.
func TestAllocReplayRecordedTraces(t *testing.T) {
	for _, tc := range []struct {
		file string
		args []string
	}{
		{"growth-tiny-a.csv", []string{"--mode", "growth", "--limit", "750780416"}},
		{"probe-growth.csv", []string{"--mode", "growth", "--limit", "112583507968"}},
		{"probe-prealloc.csv", []string{"--mode", "preallocate", "--limit", "112583507968"}},
		{"probe-prealloc.csv", []string{"--mode", "preallocate", "--limit", "112583507968", "--variant", "xla-spatial"}},
		{"growth-a.csv", []string{"--mode", "growth", "--limit", "112583507968"}},
		{"prealloc-ties-a.csv", []string{"--mode", "preallocate", "--limit", "430MiB", "--variant", "xla-spatial"}},
		{"growth-small-b.csv", []string{"--mode", "growth", "--limit", "750780416"}},
		// With the recorded addresses (ptr column): every column, the simulated addresses included.
		{"../traces-ptr/growth-small-b.csv", []string{"--mode", "growth", "--limit", "750780416", "--with-ptr"}},
		{"../traces-ptr/growth-ties-a.csv", []string{"--mode", "growth", "--limit", "1501560832", "--with-ptr"}},
	} {
		path := filepath.Join("..", "..", "allocator", "testdata", "traces", tc.file)
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		got, stderr, code := allocRun(t, append([]string{"alloc", "replay", path}, tc.args...)...)
		if code != 0 {
			t.Fatalf("alloc replay %s %v: exit %d: %s", tc.file, tc.args, code, stderr)
		}
		if w := strings.ReplaceAll(string(want), "\r\n", "\n"); got != w {
			t.Errorf("alloc replay %s %v differs from the recording:\ngot:\n%s\nwant:\n%s", tc.file, tc.args, got, w)
		}
	}
}

// TestAllocReplayBadInput: bad traces and flags exit 2 and name file:line.
func TestAllocReplayBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, trace string
		args        []string
		wantErr     string
	}{
		{"unknown op", "op,id,bytes\nalloc,0,10\nrealloc,0,5\n", nil, "t.csv:3: op: bad trace: unknown op \"realloc\""},
		{"free unknown id", "op,id,bytes\nfree,7,0\n", nil, "t.csv:2: id: bad trace: free of unknown id 7"},
		{"double free", "op,id,bytes\nalloc,1,10\nfree,1,0\nfree,1,0\n", nil, "t.csv:4: id: bad trace: free of id 1 that was already freed"},
		{"negative size", "op,id,bytes\nalloc,0,-5\n", nil, "t.csv:2: bytes: bad trace: negative size -5"},
		{"missing column", "op,id\nalloc,0\n", nil, "t.csv:1: bytes: bad trace: missing column bytes"},
		{"truncated line", "op,id,bytes\nalloc,0\n", nil, "t.csv:2: bad trace: truncated line"},
		{"not a number", "op,id,bytes\nalloc,0,ten\n", nil, "t.csv:2: bytes: bad trace: not an integer"},
		{"bad ptr", "op,id,bytes,ptr\nalloc,0,10,0x12g\n", nil, "t.csv:2: ptr: bad trace: not an address: \"0x12g\""},
		{"growth without ptr", "op,id,bytes,ptr\nalloc,0,10,0\n", nil, "t.csv:2: ptr: bad trace: the alloc grows the pool but has no ptr"},
		{"overlapping regions", "op,id,bytes,ptr\nalloc,0,1048576,0x100000000\nalloc,1,3000000,0x100100000\n", nil,
			"t.csv:3: ptr: bad trace: region [0x100100000, 0x100500000) at the recorded ptr overlaps the region [0x100000000, 0x100200000)"},
		{"no mode", "op,id,bytes\n", []string{"--limit", "1"}, "--mode is required"},
		{"bad limit", "op,id,bytes\n", []string{"--mode", "growth", "--limit", "lots"}, "is not a byte count"},
		{"spatial growth", "op,id,bytes\n", []string{"--mode", "growth", "--limit", "1GiB", "--variant", "xla-spatial"}, "needs --mode preallocate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, "t.csv")
			if err := os.WriteFile(path, []byte(tc.trace), 0o644); err != nil {
				t.Fatal(err)
			}
			args := tc.args
			if args == nil {
				args = []string{"--mode", "growth", "--limit", "1GiB"}
			}
			_, stderr, code := allocRun(t, append([]string{"alloc", "replay", path}, args...)...)
			if code != 2 {
				t.Errorf("exit %d, want 2 (%s)", code, stderr)
			}
			if !strings.Contains(stderr, tc.wantErr) {
				t.Errorf("error %q lacks %q", stderr, tc.wantErr)
			}
		})
	}
}

// TestAllocReplayNoIDsAndOutputFile: allocs without ids are numbered in order; -o writes the
// file (through a temporary file and a rename).
func TestAllocReplayNoIDsAndOutputFile(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	os.WriteFile(in, []byte("op,bytes,id\nalloc,1000,\nalloc,3000,\nfree,0,0\nalloc,100,\n"), 0o644)
	out := filepath.Join(dir, "out.csv")
	if _, stderr, code := allocRun(t, "alloc", "replay", in, "--mode", "growth", "--limit", "1MiB", "-o", out); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want := `op,id,bytes,result,bytes_in_use,peak_bytes_in_use,pool_bytes,peak_pool_bytes,largest_free_block_bytes,num_allocs,largest_alloc_size,bytes_limit
alloc,0,1000,ok,1024,1024,1048576,1048576,1047552,1,1024,1048576
alloc,1,3000,ok,4096,4096,1048576,1048576,1044480,2,3072,1048576
free,0,0,ok,3072,4096,1048576,1048576,1044480,2,3072,1048576
alloc,2,100,ok,3328,4096,1048576,1048576,1044480,3,3072,1048576
`
	if string(got) != want {
		t.Errorf("output:\n%s\nwant:\n%s", got, want)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("temporary file left behind: %v", entries)
	}
}

// TestAllocUsageExample runs the first example of the usage text (from the repository root).
func TestAllocUsageExample(t *testing.T) {
	const example = "gpusim alloc replay allocator/testdata/traces/growth-tiny-a.csv --mode growth --limit 750780416"
	if !strings.Contains(allocUsage, example) {
		t.Fatalf("usage text lost its example %q", example)
	}
	args := strings.Fields(example)[1:]
	args[2] = filepath.Join("..", "..", args[2])
	out, stderr, code := allocRun(t, args...)
	if code != 0 || !strings.HasPrefix(out, "op,id,bytes,result,") || strings.Count(out, "\n") != 62 {
		t.Errorf("example: exit %d, %d lines, stderr %q", code, strings.Count(out, "\n"), stderr)
	}
}

func TestAllocUsage(t *testing.T) {
	out, _, code := allocRun(t, "alloc", "--help")
	if code != 0 || !strings.Contains(out, "gpusim alloc replay TRACE.csv --mode growth|preallocate --limit BYTES") {
		t.Errorf("alloc --help: exit %d, output %q", code, out)
	}
	if _, _, code := allocRun(t, "alloc", "rewind"); code != 2 {
		t.Errorf("unknown subcommand: exit %d, want 2", code)
	}
}

// TestAllocReplayTrimsNumericFlags: a limit cut from a CRLF trace ends in "\r"; numeric flag
// values are read without their surrounding whitespace and replay exactly like the clean value.
func TestAllocReplayTrimsNumericFlags(t *testing.T) {
	trace := filepath.Join("..", "..", "allocator", "testdata", "traces", "growth-tiny-a.csv")
	want, _, code := allocRun(t, "alloc", "replay", trace, "--mode", "growth", "--limit", "750780416", "--fragmentation-fraction", "0.5")
	if code != 0 {
		t.Fatalf("clean flags: exit %d", code)
	}
	for _, tc := range []struct{ limit, frag string }{
		{"750780416\r", "0.5"},
		{" 750780416\r\n", "0.5\r"},
		{"\t750780416", " 0.5 "},
	} {
		got, stderr, code := allocRun(t, "alloc", "replay", trace, "--mode", "growth", "--limit", tc.limit, "--fragmentation-fraction", tc.frag)
		if code != 0 {
			t.Errorf("--limit %q --fragmentation-fraction %q: exit %d: %s", tc.limit, tc.frag, code, stderr)
			continue
		}
		if got != want {
			t.Errorf("--limit %q --fragmentation-fraction %q: output differs from the clean flags'", tc.limit, tc.frag)
		}
	}
	for _, args := range [][]string{{"--limit", "lots\r"}, {"--limit", "1GiB", "--fragmentation-fraction", "half\r"}} {
		if _, stderr, code := allocRun(t, append([]string{"alloc", "replay", trace, "--mode", "growth"}, args...)...); code != 2 {
			t.Errorf("%q: exit %d, want 2 (%s)", args, code, stderr)
		}
	}
}

// A request within a few bytes of int64's maximum is an OOM row, and bytes_in_use never goes
// negative (it answered ok with -9223372036854775808 in use).
func TestAllocReplayHugeRequestIsOOM(t *testing.T) {
	path := filepath.Join(t.TempDir(), "huge.csv")
	if err := os.WriteFile(path, []byte("op,id,bytes\nalloc,1,9223372036854775553\nalloc,2,256\nfree,1,0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"growth", "preallocate"} {
		got, stderr, code := allocRun(t, "alloc", "replay", path, "--mode", mode, "--limit", "750780416")
		if code != 0 {
			t.Fatalf("alloc replay --mode %s: exit %d: %s", mode, code, stderr)
		}
		rows := strings.Split(strings.TrimSpace(got), "\n")
		if len(rows) != 4 || !strings.HasPrefix(rows[1], "alloc,1,9223372036854775553,oom,0,") || !strings.HasPrefix(rows[2], "alloc,2,256,ok,256,") {
			t.Errorf("alloc replay --mode %s:\n%s\nwant the huge alloc an OOM with 0 in use, then 256 in use", mode, got)
		}
	}
}
