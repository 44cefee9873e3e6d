// Copyright 2026 The database-operator Authors.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

package databasecluster

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// statefulSetObjects are the functions of this package that may hold an *appsv1.StatefulSet
// object, and why; every other one reads the StatefulSet through cachecfg.StatefulSetView.
var statefulSetObjects = map[string]string{
	"cachedStatefulSet":       "the cache's read, turned into the view",
	"templateReader.Get":      "the write path's read: whole, or with the template its record names",
	"writeStatefulSet":        "the write path",
	"ownStatefulSet":          "the finalizer's read, from the API server",
	"planRollback":            "a read from the API server",
	"liveTemplate":            "a read from the API server",
	"replaceSmallStatefulSet": "the object to delete, by name and UID",
	"SetupWithManager":        "the watch",
}

var _ = Describe("Reads of cached StatefulSets", Label("unit"), func() {
	It("go through the view: no other function of the package makes a StatefulSet object", func() {
		files, err := filepath.Glob("*.go")
		Expect(err).NotTo(HaveOccurred())
		found := map[string]bool{}
		fset := token.NewFileSet()
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			file, err := parser.ParseFile(fset, name, nil, 0)
			Expect(err).NotTo(HaveOccurred())
			for _, decl := range file.Decls {
				fn, ok := decl.(*ast.FuncDecl)
				if !ok {
					continue
				}
				ast.Inspect(fn, func(n ast.Node) bool {
					if lit, ok := n.(*ast.CompositeLit); ok && isStatefulSetType(lit.Type) {
						found[funcName(fn)] = true
						Expect(statefulSetObjects).To(HaveKey(funcName(fn)),
							"%s makes a StatefulSet object: read a cached one through cachedStatefulSet (%s)", funcName(fn), fset.Position(lit.Pos()))
					}
					return true
				})
			}
		}
		for name := range statefulSetObjects {
			Expect(found).To(HaveKey(name), "%s is allowed a StatefulSet object but makes none: remove it from the list", name)
		}
	})
})

// isStatefulSetType says whether expr is appsv1.StatefulSet.
func isStatefulSetType(expr ast.Expr) bool {
	sel, ok := expr.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && pkg.Name == "appsv1" && sel.Sel.Name == "StatefulSet"
}

// funcName is fn's name, with its receiver's type for a method.
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	recv := fn.Recv.List[0].Type
	if star, ok := recv.(*ast.StarExpr); ok {
		recv = star.X
	}
	if ident, ok := recv.(*ast.Ident); ok && ident.Name != "Reconciler" {
		return ident.Name + "." + fn.Name.Name
	}
	return fn.Name.Name
}
