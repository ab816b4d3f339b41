package train

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gpusim/gpusim/framework"
)

// TestProfileIsTheOnlyReader: the run's framework and release settings are read in one place,
// Config.Profile (and Validate's checks of the framework name), so every rule that depends on
// a release reads the resolved framework.Profile. A new rule that reads Config.TFVersion
// itself fails here.
func TestProfileIsTheOnlyReader(t *testing.T) {
	fields := map[string]bool{"TFVersion": true, "CuDNNVersion": true, "KerasVersion": true}
	allowed := map[string]bool{"Profile": true}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || allowed[fn.Name.Name] {
				continue
			}
			ast.Inspect(fn, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				// Config.Framework is read as c.Framework or cfg.Framework; a Process's and the
				// profile's are p.Framework and fw.Framework.
				if x, ok := sel.X.(*ast.Ident); fields[sel.Sel.Name] || sel.Sel.Name == "Framework" && ok && (x.Name == "c" || x.Name == "cfg") || sel.Sel.Name == "Framework" && isCfgField(sel.X) {
					if (fn.Name.Name == "Validate" || fn.Name.Name == "validateVersions") && sel.Sel.Name == "Framework" {
						return true
					}
					t.Errorf("%s: %s reads %s: read the run's framework.Profile (Config.Profile) instead", fset.Position(sel.Pos()), fn.Name.Name, sel.Sel.Name)
				}
				return true
			})
		}
	}
}

// isCfgField reports whether x is r.cfg (the runner's Config).
func isCfgField(x ast.Expr) bool {
	s, ok := x.(*ast.SelectorExpr)
	return ok && s.Sel.Name == "cfg"
}

// TestGateRowMovesTheRun: a run follows the framework's tables through its profile alone.
// Moving TF 2.13's two XLA gates (the Triton normalization fusion, GEMM epilogues) to TF 2.16
// makes a TF 2.13 BERT step under XLA the step of TF 2.12 (same cuDNN, CUDA and Keras), which
// splits its softmaxes, layer norms and GEMM epilogues; the config is the same.
func TestGateRowMovesTheRun(t *testing.T) {
	step := func(version string) float64 {
		t.Helper()
		c := DefaultConfig()
		c.Model, c.GPU, c.Precision, c.Batch, c.Steps, c.Optimizer = "bert-base:seq=128", "v100-16gb", "mixed_float16", 16, 4, "adam"
		c.XLA, c.TFVersion = true, version
		return mustRun(t, c).StepTime
	}
	cur, older := step("2.13"), step("2.12")
	saved := framework.Gates
	t.Cleanup(func() { framework.Gates = saved })
	framework.Gates = slices.Clone(saved)
	for i, g := range framework.Gates {
		if g.Feature == framework.XLATritonNormalization || g.Feature == framework.XLAGEMMEpilogues {
			framework.Gates[i].TF = framework.Version{Major: 2, Minor: 16}
		}
	}
	moved := step("2.13")
	framework.Gates = saved
	if cur == older || moved != older {
		t.Errorf("TF 2.13 step %.3f ms, %.3f ms with its XLA gates moved to 2.16; TF 2.12 %.3f ms: want the moved one to equal 2.12's and differ from 2.13's", 1e3*cur, 1e3*moved, 1e3*older)
	}
}

// TestNamesResolvedOnce: a run looks its GPU, model and host names up in resolve alone (besides
// the checks that a name exists: Validate's, CheckCatalog's, and InputPipeline, which analysis
// calls without a run); the parts of the run read the resolved values.
func TestNamesResolvedOnce(t *testing.T) {
	lookups := map[string]bool{"hw.LookupGPU": true, "hw.LookupHost": true, "models.Get": true}
	allowed := map[string]bool{"resolve": true, "validateInput": true, "CheckCatalog": true, "InputPipeline": true}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || allowed[fn.Name.Name] {
				continue
			}
			ast.Inspect(fn, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok {
					if x, ok := sel.X.(*ast.Ident); ok && lookups[x.Name+"."+sel.Sel.Name] {
						t.Errorf("%s: %s calls %s.%s: take the value resolve looked up", fset.Position(sel.Pos()), fn.Name.Name, x.Name, sel.Sel.Name)
					}
				}
				return true
			})
		}
	}
}
