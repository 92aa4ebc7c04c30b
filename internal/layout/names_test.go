package layout

import (
	"go/ast"
	"go/token"
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
	sources(t, func(path string, f *ast.File, _ *token.FileSet) {
		if !strings.HasPrefix(path, "internal/") {
			return
		}
		pkg := strings.TrimPrefix(filepath.ToSlash(filepath.Dir(path)), "internal/")
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
	})
	for name, pkgs := range owners {
		if len(pkgs) > 1 && !slices.Contains(perPackage, name) {
			slices.Sort(pkgs)
			t.Errorf("type %s is exported by %d packages (%s): give each its own name", name, len(pkgs), strings.Join(pkgs, ", "))
		}
	}
}
