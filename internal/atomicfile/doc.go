// Package atomicfile writes a file so that a reader never sees half of it: the content goes to
// a temporary file in the same folder (same file system, so the rename is atomic on POSIX),
// which is made world-readable (0644, like os.WriteFile(path, data, 0o644)) and renamed over
// the destination. On any error the temporary file is
// removed and the destination is left as it was. A symbolic link is followed (its target is
// replaced, the link stays); a FIFO or a device (/dev/null, /dev/stdout) is written through,
// since a rename would replace it with a regular file, and a FIFO no process reads is an
// error at once, never a wait for a reader.
//
// It is the one implementation behind report.WriteFileAtomic, calibrate.WriteFileAtomic and
// the gpusim command's --output/--trace files:
//
//	err := atomicfile.Write("trace.json", func(w io.Writer) error { return t.Write(w) })
//	err = atomicfile.WriteBytes("figure.png", buf.Bytes())
package atomicfile
