package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestHandlersWriteNoAuditRows: audit rows are written by the orchestrator
// (Manager.Audited, Manager.Record, Manager.RecordView and the services
// that own their transaction), so a change and its row commit together. A
// handler that calls the store's Audit, WriteAudit or WriteViewAudit (or
// brings back its own audit helper) writes the row after the change,
// outside its transaction, and fails here.
func TestHandlersWriteNoAuditRows(t *testing.T) {
	root := moduleRoot(t)
	var bad []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(filepath.Join(root, "handlers"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.CallExpr:
				if sel, ok := x.Fun.(*ast.SelectorExpr); ok && (sel.Sel.Name == "Audit" || sel.Sel.Name == "AuditHappened" || sel.Sel.Name == "WriteAudit" || sel.Sel.Name == "WriteViewAudit" || sel.Sel.Name == "audit") {
					bad = append(bad, fset.Position(x.Pos()).String()[len(root)+1:]+": calls ."+sel.Sel.Name)
				}
			case *ast.FuncDecl:
				if x.Name.Name == "audit" {
					bad = append(bad, rel+": declares func audit")
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(bad)
	report(t, "handlers write audit rows through the orchestrator (h.audited / h.record), never themselves", bad)
}
