package layout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// perPackage are the names each package may give a type of its own: its
// settings (Options, Config), its server (Server), and the store's
// implementations of store.Store.
var perPackage = []string{"Options", "Config", "Server", "Store"}

// A newcomer reads a type's name as one concept: across the product a
// name belongs to one package (a Backend is the live backend, its
// configuration is a BackendConfig, the console's row a BackendRow).
func TestAnExportedTypeNameBelongsToOnePackage(t *testing.T) {
	owners := map[string][]string{}
	root := filepath.Join("..", "..", "internal")
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		pkg, _ := filepath.Rel(root, filepath.Dir(path))
		for _, decl := range f.Decls {
			g, ok := decl.(*ast.GenDecl)
			if !ok || g.Tok != token.TYPE {
				continue
			}
			for _, spec := range g.Specs {
				name := spec.(*ast.TypeSpec).Name.Name
				if ast.IsExported(name) && !slices.Contains(owners[name], pkg) {
					owners[name] = append(owners[name], pkg)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, pkgs := range owners {
		if len(pkgs) > 1 && !slices.Contains(perPackage, name) {
			slices.Sort(pkgs)
			t.Errorf("type %s is exported by %d packages (%s): give each its own name", name, len(pkgs), strings.Join(pkgs, ", "))
		}
	}
}
