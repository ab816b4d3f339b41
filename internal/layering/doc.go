// Package layering holds the test that enforces the layers of docs/design.md ("Layout: one-way
// layers"): every package, and every package's tests, import only packages on a lower row,
// so the table is checked, not hoped for. Rows is the table; the test reads the import graph
// with go list.
package layering

// Rows maps each package of the module (its path below the module, or a prefix ending in
// "/" for a tree) to its row of docs/design.md's table. A package in a row package's tree
// (train/visibility under train) is on that row and may be imported by its parent.
var Rows = map[string]int{
	"sim":        0,
	"internal/":  0,
	"framework":  0,
	"hw":         1,
	"allocator":  1,
	"models":     1,
	"collective": 1,
	"pipeline":   1,
	"train":      2,
	"analysis":   3,
	"calibrate":  3,
	"scenarios":  4,
	"report":     4,
	"validate":   5,
	"web":        5,
	"cmd/gpusim": 6,
}
