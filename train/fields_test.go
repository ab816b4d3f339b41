package train

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// maxStructFields is the most fields a struct of package train (and its subpackages) may
// have: state is kept in parts that own it (doc.go), not in one struct every mechanism reads
// and writes.
const maxStructFields = 20

// fieldTableExempt are the structs allowed more fields, each a flat record of the public API
// whose fields are the data it carries, not a simulation's state.
var fieldTableExempt = map[string]string{
	"result.go:Result": "the run's report: one field per figure of gpusim run's JSON",
	"config.go:System": "one field per scenario key of the training system (scenarios' key table)",
	"result.go:Device": "one field per per-GPU statistic of gpusim run's JSON and CSV",
}

// TestStructFieldCount fails when a struct of train's sources has more than maxStructFields
// fields (each name of a field list counts, an embedded field once), unless fieldTableExempt
// names it; an exemption for a struct that no longer needs it fails too.
func TestStructFieldCount(t *testing.T) {
	fset := token.NewFileSet()
	used := map[string]bool{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok {
				return true
			}
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				return true
			}
			count := 0
			for _, fl := range st.Fields.List {
				count += max(len(fl.Names), 1)
			}
			key := filepath.ToSlash(path) + ":" + ts.Name.Name
			if count <= maxStructFields {
				return true
			}
			if _, ok := fieldTableExempt[key]; ok {
				used[key] = true
				return true
			}
			t.Errorf("%s: struct %s has %d fields, more than %d: give its state to a part that owns it (doc.go), or exempt a data record in fieldTableExempt with the reason",
				fset.Position(ts.Pos()), ts.Name.Name, count, maxStructFields)
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for key := range fieldTableExempt {
		if !used[key] {
			t.Errorf("fieldTableExempt names %s, which is not a struct of more than %d fields", key, maxStructFields)
		}
	}
}
