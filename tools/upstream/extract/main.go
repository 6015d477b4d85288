// Command extract reads the Go source of an OpenKruise module (a directory from the Go
// module cache) with go/parser and prints, as JSON, the facts that upstream keeps only
// in code: feature gates and their defaults, which webhook paths each handler package
// serves and under which condition, which controllers exist, when they start, and the
// RBAC markers of each. tools/upstream/generate.ts turns this plus upstream's YAML into
// the typed data module the constructs render from.
//
// Every construct it does not understand is an error naming the file and position: a new
// upstream version that gates a controller in a new way must fail the generator, never
// yield a silently wrong permission or webhook set.
package main

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

const modulePath = "github.com/openkruise/kruise"

// Expr is a start condition: exactly one field is set.
type Expr struct {
	All   []Expr `json:"all,omitempty"`
	Any   []Expr `json:"any,omitempty"`
	Not   *Expr  `json:"not,omitempty"`
	Gate  string `json:"gate,omitempty"`
	Crd   string `json:"crd,omitempty"`
	Const *bool  `json:"const,omitempty"`
}

type Rule struct {
	Groups        []string `json:"apiGroups"`
	Resources     []string `json:"resources"`
	Verbs         []string `json:"verbs"`
	ResourceNames []string `json:"resourceNames,omitempty"`
}

type FeatureGate struct {
	Name       string `json:"name"`
	Default    bool   `json:"default"`
	PreRelease string `json:"preRelease"`
}

// Implication: when When holds (after the flags are parsed), upstream sets the gates in
// Set to the given values. Applied in order, as SetDefaultFeatureGates does.
type Implication struct {
	When Expr            `json:"when"`
	Set  map[string]bool `json:"set"`
}

type Handlers struct {
	Package  string   `json:"package"`
	Paths    []string `json:"paths"`
	Requires Expr     `json:"requires"`
	Rbac     []Rule   `json:"rbac"`
}

type Controller struct {
	Package  string `json:"package"`
	Name     string `json:"name"`
	Requires Expr   `json:"requires"`
	Rbac     []Rule `json:"rbac"`
}

// Flag is a command-line flag kruise-manager registers on the process's flag set, read from
// a flag.XxxVar / flag.Xxx call in a package the manager links.
type Flag struct {
	Name string `json:"name"`
	// Default as upstream's source states it (a literal, or the initializer of the constant
	// or variable it names, one level deep).
	Default string `json:"default"`
	Type    string `json:"type"`
	Package string `json:"package"`
}

type Facts struct {
	FeatureGates []FeatureGate `json:"featureGates"`
	Flags        []Flag        `json:"flags"`
	// Calls in main.go that register a library's flags (e.g. k8s.io/klog/v2.InitFlags), as
	// <import path>.<function>; their flags are not in Flags.
	LibraryFlagSets []string      `json:"libraryFlagSets"`
	Implications    []Implication `json:"implications"`
	Handlers        []Handlers    `json:"webhookHandlers"`
	ServerRbac      []Rule        `json:"webhookServerRbac"`
	Controllers     []Controller  `json:"controllers"`
	ConvertPath     string        `json:"conversionPath"`
	ServerSources   []string      `json:"sources"`
}

type pkg struct {
	dir   string
	files map[string]*ast.File
}

type extractor struct {
	root  string
	fset  *token.FileSet
	pkgs  map[string]*pkg
	gates map[string]string // Go constant name -> gate name
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: extract <directory of github.com/openkruise/kruise>")
		os.Exit(2)
	}
	x := &extractor{root: os.Args[1], fset: token.NewFileSet(), pkgs: map[string]*pkg{}}
	facts, err := x.run()
	if err != nil {
		fmt.Fprintln(os.Stderr, "extract:", err)
		os.Exit(1)
	}
	out := json.NewEncoder(os.Stdout)
	out.SetIndent("", "  ")
	if err := out.Encode(facts); err != nil {
		fmt.Fprintln(os.Stderr, "extract:", err)
		os.Exit(1)
	}
}

func (x *extractor) run() (*Facts, error) {
	f := &Facts{}
	var err error
	if f.FeatureGates, f.Implications, err = x.featureGates(); err != nil {
		return nil, err
	}
	if f.Handlers, err = x.webhookHandlers(); err != nil {
		return nil, err
	}
	server, err := x.load("pkg/webhook")
	if err != nil {
		return nil, err
	}
	f.ServerRbac = x.markers(server, "server.go")
	if f.ConvertPath, err = x.conversionPath(server); err != nil {
		return nil, err
	}
	if f.Controllers, err = x.controllers(); err != nil {
		return nil, err
	}
	if f.Flags, f.LibraryFlagSets, err = x.flags(); err != nil {
		return nil, err
	}
	f.ServerSources = []string{"pkg/features/kruise_features.go", "pkg/webhook/add_*.go", "pkg/webhook/server.go", "pkg/controller/controllers.go"}
	return f, nil
}

// load parses the non-test files of a package directory relative to the module root.
func (x *extractor) load(rel string) (*pkg, error) {
	if p, ok := x.pkgs[rel]; ok {
		return p, nil
	}
	entries, err := os.ReadDir(filepath.Join(x.root, rel))
	if err != nil {
		return nil, err
	}
	p := &pkg{dir: rel, files: map[string]*ast.File{}}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		if ok, err := linuxBuild.MatchFile(filepath.Join(x.root, rel), name); err != nil || !ok {
			continue // not compiled into the linux/amd64 binary upstream ships
		}
		file, err := parser.ParseFile(x.fset, filepath.Join(x.root, rel, name), nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		p.files[name] = file
	}
	x.pkgs[rel] = p
	return p, nil
}

func (x *extractor) fail(n ast.Node, format string, args ...any) error {
	pos := x.fset.Position(n.Pos())
	rel, _ := filepath.Rel(x.root, pos.Filename)
	return fmt.Errorf("%s:%d: %s", rel, pos.Line, fmt.Sprintf(format, args...))
}

// importDir resolves an import name used in file to a directory inside the module.
func importDir(file *ast.File, name string) (string, bool) {
	for _, imp := range file.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		local := filepath.Base(path)
		if imp.Name != nil {
			local = imp.Name.Name
		}
		if local == name && strings.HasPrefix(path, modulePath+"/") {
			return strings.TrimPrefix(path, modulePath+"/"), true
		}
	}
	return "", false
}

func (x *extractor) featureGates() ([]FeatureGate, []Implication, error) {
	p, err := x.load("pkg/features")
	if err != nil {
		return nil, nil, err
	}
	x.gates = map[string]string{}
	var gates []FeatureGate
	var implications []Implication
	for _, file := range p.files {
		for _, decl := range file.Decls {
			switch d := decl.(type) {
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					v, ok := spec.(*ast.ValueSpec)
					if !ok || len(v.Values) != len(v.Names) {
						continue
					}
					for i, name := range v.Names {
						if lit, ok := v.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING && d.Tok == token.CONST {
							x.gates[name.Name], _ = strconv.Unquote(lit.Value)
						}
						if name.Name == "defaultFeatureGates" {
							if gates, err = x.gateDefaults(v.Values[i]); err != nil {
								return nil, nil, err
							}
						}
					}
				}
			case *ast.FuncDecl:
				if d.Name.Name == "SetDefaultFeatureGates" {
					if implications, err = x.implications(d); err != nil {
						return nil, nil, err
					}
				}
			}
		}
	}
	if len(gates) == 0 {
		return nil, nil, fmt.Errorf("pkg/features: no defaultFeatureGates map found")
	}
	for i := range gates {
		name, ok := x.gates[gates[i].Name]
		if !ok {
			return nil, nil, fmt.Errorf("pkg/features: gate constant %s has no string value", gates[i].Name)
		}
		gates[i].Name = name
	}
	sort.Slice(gates, func(i, j int) bool { return gates[i].Name < gates[j].Name })
	return gates, implications, nil
}

func (x *extractor) gateDefaults(e ast.Expr) ([]FeatureGate, error) {
	lit, ok := e.(*ast.CompositeLit)
	if !ok {
		return nil, x.fail(e, "defaultFeatureGates is not a map literal")
	}
	var out []FeatureGate
	for _, elt := range lit.Elts {
		kv := elt.(*ast.KeyValueExpr)
		key, ok := kv.Key.(*ast.Ident)
		spec, ok2 := kv.Value.(*ast.CompositeLit)
		if !ok || !ok2 {
			return nil, x.fail(elt, "unexpected feature gate entry")
		}
		g := FeatureGate{Name: key.Name}
		for _, f := range spec.Elts {
			fkv := f.(*ast.KeyValueExpr)
			switch fkv.Key.(*ast.Ident).Name {
			case "Default":
				g.Default = fkv.Value.(*ast.Ident).Name == "true"
			case "PreRelease":
				g.PreRelease = fkv.Value.(*ast.SelectorExpr).Sel.Name
			}
		}
		out = append(out, g)
	}
	return out, nil
}

// implications reads `if <condition> { Set(fmt.Sprintf("%s=false", B)) ... }`.
func (x *extractor) implications(fn *ast.FuncDecl) ([]Implication, error) {
	var out []Implication
	for _, stmt := range fn.Body.List {
		ifs, ok := stmt.(*ast.IfStmt)
		if !ok {
			return nil, x.fail(stmt, "SetDefaultFeatureGates: expected only if statements")
		}
		cond, err := x.expr(nil, ifs.Cond)
		if err != nil {
			return nil, err
		}
		imp := Implication{When: simplify(cond), Set: map[string]bool{}}
		for _, inner := range ifs.Body.List {
			format, arg, ok := sprintfCall(inner)
			if !ok || (format != "%s=false" && format != "%s=true") {
				return nil, x.fail(inner, "SetDefaultFeatureGates: expected Set(fmt.Sprintf(\"%%s=<bool>\", Gate))")
			}
			gate, ok := x.gates[arg]
			if !ok {
				return nil, x.fail(inner, "SetDefaultFeatureGates: unknown gate %s", arg)
			}
			imp.Set[gate] = format == "%s=true"
		}
		out = append(out, imp)
	}
	return out, nil
}

// sprintfCall matches `_ = X.Set(fmt.Sprintf("<format>", Ident))`.
func sprintfCall(stmt ast.Stmt) (format, arg string, ok bool) {
	assign, ok := stmt.(*ast.AssignStmt)
	if !ok || len(assign.Rhs) != 1 {
		return "", "", false
	}
	set, ok := assign.Rhs[0].(*ast.CallExpr)
	if !ok || len(set.Args) != 1 {
		return "", "", false
	}
	sprintf, ok := set.Args[0].(*ast.CallExpr)
	if !ok || len(sprintf.Args) != 2 {
		return "", "", false
	}
	lit, ok1 := sprintf.Args[0].(*ast.BasicLit)
	id, ok2 := sprintf.Args[1].(*ast.Ident)
	if !ok1 || !ok2 {
		return "", "", false
	}
	format, _ = strconv.Unquote(lit.Value)
	return format, id.Name, true
}

// expr turns a Go condition into an Expr. file resolves package-qualified identifiers.
func (x *extractor) expr(file *ast.File, e ast.Expr) (Expr, error) {
	switch v := e.(type) {
	case *ast.ParenExpr:
		return x.expr(file, v.X)
	case *ast.UnaryExpr:
		if v.Op != token.NOT {
			break
		}
		inner, err := x.expr(file, v.X)
		return Expr{Not: &inner}, err
	case *ast.BinaryExpr:
		l, err := x.expr(file, v.X)
		if err != nil {
			return Expr{}, err
		}
		r, err := x.expr(file, v.Y)
		if err != nil {
			return Expr{}, err
		}
		switch v.Op {
		case token.LAND:
			return Expr{All: []Expr{l, r}}, nil
		case token.LOR:
			return Expr{Any: []Expr{l, r}}, nil
		}
	case *ast.Ident:
		if v.Name == "true" || v.Name == "false" {
			b := v.Name == "true"
			return Expr{Const: &b}, nil
		}
	case *ast.CallExpr:
		sel, ok := v.Fun.(*ast.SelectorExpr)
		if !ok || len(v.Args) != 1 {
			break
		}
		switch sel.Sel.Name {
		case "Enabled":
			// features.X elsewhere, a bare X inside pkg/features itself.
			arg := v.Args[0]
			if g, ok := arg.(*ast.SelectorExpr); ok {
				arg = g.Sel
			}
			if id, ok := arg.(*ast.Ident); ok {
				if name, ok := x.gates[id.Name]; ok {
					return Expr{Gate: name}, nil
				}
			}
		case "DiscoverObject":
			if u, ok := v.Args[0].(*ast.UnaryExpr); ok {
				if c, ok := u.X.(*ast.CompositeLit); ok {
					if t, ok := c.Type.(*ast.SelectorExpr); ok {
						return Expr{Crd: t.Sel.Name}, nil
					}
				}
			}
		case "DiscoverGVK":
			kind, err := x.kindOf(file, v.Args[0])
			return Expr{Crd: kind}, err
		}
	}
	return Expr{}, x.fail(e, "start condition not understood: %s", x.source(e))
}

func (x *extractor) source(n ast.Node) string {
	start, end := x.fset.Position(n.Pos()), x.fset.Position(n.End())
	data, err := os.ReadFile(start.Filename)
	if err != nil || start.Filename != end.Filename {
		return "?"
	}
	return string(data[start.Offset:end.Offset])
}

// kindOf finds the Kind string of a GroupVersionKind expression: a WithKind("X") call,
// directly or in the initializer of the (possibly package-qualified) variable it names.
func (x *extractor) kindOf(file *ast.File, e ast.Expr) (string, error) {
	if call, ok := e.(*ast.CallExpr); ok {
		if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "WithKind" && len(call.Args) == 1 {
			if lit, ok := call.Args[0].(*ast.BasicLit); ok {
				return strconv.Unquote(lit.Value)
			}
		}
	}
	var dir, name string
	switch v := e.(type) {
	case *ast.Ident:
		dir, name = x.dirOf(file), v.Name
	case *ast.SelectorExpr:
		pkgName, ok := v.X.(*ast.Ident)
		if !ok {
			break
		}
		if d, ok := importDir(file, pkgName.Name); ok {
			dir, name = d, v.Sel.Name
		}
	}
	if dir != "" {
		p, err := x.load(dir)
		if err != nil {
			return "", err
		}
		for _, f := range p.files {
			if init, ok := valueOf(f, name); ok {
				return x.kindOf(f, init)
			}
		}
	}
	return "", x.fail(e, "cannot resolve the Kind of %s", x.source(e))
}

func (x *extractor) dirOf(file *ast.File) string {
	rel, _ := filepath.Rel(x.root, filepath.Dir(x.fset.Position(file.Pos()).Filename))
	return rel
}

// valueOf returns the initializer of a package-level var or const.
func valueOf(file *ast.File, name string) (ast.Expr, bool) {
	for _, decl := range file.Decls {
		d, ok := decl.(*ast.GenDecl)
		if !ok {
			continue
		}
		for _, spec := range d.Specs {
			v, ok := spec.(*ast.ValueSpec)
			if !ok {
				continue
			}
			for i, n := range v.Names {
				if n.Name == name && i < len(v.Values) {
					return v.Values[i], true
				}
			}
		}
	}
	return nil, false
}

// webhookHandlers reads pkg/webhook/add_*.go: addHandlers(p.HandlerGetterMap) and
// addHandlersWithGate(p.HandlerGetterMap, func() bool { ... }).
func (x *extractor) webhookHandlers() ([]Handlers, error) {
	p, err := x.load("pkg/webhook")
	if err != nil {
		return nil, err
	}
	var out []Handlers
	names := sortedKeys(p.files)
	for _, name := range names {
		file := p.files[name]
		if !strings.HasPrefix(name, "add_") {
			continue
		}
		var inspectErr error
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || inspectErr != nil {
				return inspectErr == nil
			}
			fn, ok := call.Fun.(*ast.Ident)
			if !ok || (fn.Name != "addHandlers" && fn.Name != "addHandlersWithGate") {
				return true
			}
			h, err := x.handlerSet(file, call)
			if err != nil {
				inspectErr = err
				return false
			}
			out = append(out, h)
			return false
		})
		if inspectErr != nil {
			return nil, inspectErr
		}
	}
	return out, nil
}

func (x *extractor) handlerSet(file *ast.File, call *ast.CallExpr) (Handlers, error) {
	sel, ok := call.Args[0].(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "HandlerGetterMap" {
		return Handlers{}, x.fail(call, "expected <package>.HandlerGetterMap")
	}
	dir, ok := importDir(file, sel.X.(*ast.Ident).Name)
	if !ok {
		return Handlers{}, x.fail(call, "cannot resolve package %s", x.source(sel.X))
	}
	p, err := x.load(dir)
	if err != nil {
		return Handlers{}, err
	}
	h := Handlers{Package: dir, Requires: always(), Rbac: x.markers(p, "")}
	for _, f := range p.files {
		init, ok := valueOf(f, "HandlerGetterMap")
		if !ok {
			continue
		}
		lit, ok := init.(*ast.CompositeLit)
		if !ok {
			return h, x.fail(init, "HandlerGetterMap is not a map literal")
		}
		for _, elt := range lit.Elts {
			key, ok := elt.(*ast.KeyValueExpr).Key.(*ast.BasicLit)
			if !ok {
				return h, x.fail(elt, "HandlerGetterMap key is not a string literal")
			}
			path, _ := strconv.Unquote(key.Value)
			h.Paths = append(h.Paths, "/"+strings.TrimPrefix(path, "/"))
		}
	}
	if len(h.Paths) == 0 {
		return h, x.fail(call, "no HandlerGetterMap paths in %s", dir)
	}
	sort.Strings(h.Paths)
	if len(call.Args) == 2 {
		lit, ok := call.Args[1].(*ast.FuncLit)
		if !ok {
			return h, x.fail(call.Args[1], "gate is not a function literal")
		}
		if h.Requires, err = x.guards(file, lit.Body, "false", true); err != nil {
			return h, err
		}
	}
	return h, nil
}

// guards reads a body made of `if cond { return <off> }` statements, ending in
// `return <expr>` (webhook gates) or anything else (controller Add functions, where the
// first statement that is not such an if ends the guards). The result is what must hold.
func (x *extractor) guards(file *ast.File, body *ast.BlockStmt, off string, final bool) (Expr, error) {
	var all []Expr
	for _, stmt := range body.List {
		if ifs, ok := stmt.(*ast.IfStmt); ok && ifs.Init == nil && ifs.Else == nil && returnsOnly(ifs.Body, off) {
			cond, err := x.expr(file, ifs.Cond)
			if err != nil {
				return Expr{}, err
			}
			all = append(all, Expr{Not: &cond})
			continue
		}
		if ret, ok := stmt.(*ast.ReturnStmt); ok && final && len(ret.Results) == 1 {
			e, err := x.expr(file, ret.Results[0])
			if err != nil {
				return Expr{}, err
			}
			all = append(all, e)
			return simplify(Expr{All: all}), nil
		}
		if final {
			return Expr{}, x.fail(stmt, "gate function: statement not understood: %s", x.source(stmt))
		}
		// An `if` with other effects (e.g. cloneset's pre-download switch) does not gate the start.
		if _, ok := stmt.(*ast.IfStmt); ok {
			continue
		}
		break
	}
	if final {
		return Expr{}, x.fail(body, "gate function has no final return")
	}
	if len(all) == 0 {
		return always(), nil
	}
	return simplify(Expr{All: all}), nil
}

func returnsOnly(body *ast.BlockStmt, value string) bool {
	if len(body.List) != 1 {
		return false
	}
	ret, ok := body.List[0].(*ast.ReturnStmt)
	if !ok || len(ret.Results) != 1 {
		return false
	}
	id, ok := ret.Results[0].(*ast.Ident)
	return ok && id.Name == value
}

func (x *extractor) controllers() ([]Controller, error) {
	p, err := x.load("pkg/controller")
	if err != nil {
		return nil, err
	}
	file, ok := p.files["controllers.go"]
	if !ok {
		return nil, fmt.Errorf("pkg/controller/controllers.go not found")
	}
	var out []Controller
	var inspectErr error
	ast.Inspect(file, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || inspectErr != nil {
			return inspectErr == nil
		}
		if fn, ok := call.Fun.(*ast.Ident); !ok || fn.Name != "append" || len(call.Args) != 2 {
			return true
		}
		sel, ok := call.Args[1].(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "Add" {
			return true
		}
		dir, ok := importDir(file, sel.X.(*ast.Ident).Name)
		if !ok {
			inspectErr = x.fail(sel, "cannot resolve controller package %s", x.source(sel.X))
			return false
		}
		c, err := x.controller(dir)
		if err != nil {
			inspectErr = err
			return false
		}
		out = append(out, c)
		return false
	})
	return out, inspectErr
}

func (x *extractor) controller(dir string) (Controller, error) {
	p, err := x.load(dir)
	if err != nil {
		return Controller{}, err
	}
	c := Controller{Package: dir, Rbac: x.markers(p, "")}
	for _, name := range sortedKeys(p.files) {
		file := p.files[name]
		for _, decl := range file.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Recv == nil && fn.Name.Name == "Add" {
				if c.Requires, err = x.guards(file, fn.Body, "nil", false); err != nil {
					return c, err
				}
			}
		}
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || c.Name != "" {
				return c.Name == ""
			}
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "New" && len(call.Args) >= 2 {
				if pkgName, ok := sel.X.(*ast.Ident); ok && pkgName.Name == "controller" {
					c.Name = x.stringOf(p, call.Args[0])
				}
			}
			return true
		})
	}
	if c.Name == "" {
		return c, fmt.Errorf("%s: no controller.New(\"name\", ...) call found", dir)
	}
	return c, nil
}

// stringOf evaluates a string literal or a package-level string constant.
func (x *extractor) stringOf(p *pkg, e ast.Expr) string {
	switch v := e.(type) {
	case *ast.BasicLit:
		s, _ := strconv.Unquote(v.Value)
		return s
	case *ast.Ident:
		for _, f := range p.files {
			if init, ok := valueOf(f, v.Name); ok {
				return x.stringOf(p, init)
			}
		}
	}
	return ""
}

// conversionPath finds the path of the CRD conversion handler (`server.Register("/convert", ...)`).
func (x *extractor) conversionPath(p *pkg) (string, error) {
	path := ""
	ast.Inspect(p.files["server.go"], func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || len(call.Args) != 2 {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "Register" {
			return true
		}
		if inner, ok := call.Args[1].(*ast.CallExpr); ok {
			if s, ok := inner.Fun.(*ast.SelectorExpr); ok && s.Sel.Name == "NewWebhookHandler" {
				path = x.stringOf(p, call.Args[0])
			}
		}
		return true
	})
	if path == "" {
		return "", fmt.Errorf("pkg/webhook/server.go: no conversion handler registration found")
	}
	return path, nil
}

// markers reads `+kubebuilder:rbac:` comments of a package (of one file, if only is set).
func (x *extractor) markers(p *pkg, only string) []Rule {
	var out []Rule
	for _, name := range sortedKeys(p.files) {
		if only != "" && name != only {
			continue
		}
		for _, group := range p.files[name].Comments {
			for _, c := range group.List {
				text := strings.TrimSpace(strings.TrimPrefix(c.Text, "//"))
				if !strings.HasPrefix(text, "+kubebuilder:rbac:") {
					continue
				}
				out = append(out, parseMarker(strings.TrimPrefix(text, "+kubebuilder:rbac:")))
			}
		}
	}
	return out
}

func parseMarker(s string) Rule {
	r := Rule{}
	for _, part := range strings.Split(s, ",") {
		key, value, _ := strings.Cut(part, "=")
		var values []string
		for _, v := range strings.Split(strings.Trim(value, `"`), ";") {
			v = strings.Trim(strings.TrimSpace(v), `"`)
			if v == "" && key != "groups" {
				continue
			}
			values = append(values, v)
		}
		switch key {
		case "groups":
			for i, g := range values {
				if g == "core" {
					values[i] = ""
				}
			}
			r.Groups = values
		case "resources":
			r.Resources = values
		case "verbs":
			r.Verbs = values
		case "resourceNames":
			r.ResourceNames = values
		}
	}
	return r
}

func always() Expr {
	t := true
	return Expr{Const: &t}
}

// simplify pushes negations inwards (De Morgan), flattens nested all/any and drops `true`
// terms, so that `!(!A || !B)` reads as all(A, B).
func simplify(e Expr) Expr {
	switch {
	case e.Not != nil:
		inner := *e.Not
		switch {
		case inner.Not != nil:
			return simplify(*inner.Not)
		case inner.All != nil:
			return simplify(Expr{Any: negateAll(inner.All)})
		case inner.Any != nil:
			return simplify(Expr{All: negateAll(inner.Any)})
		case inner.Const != nil:
			b := !*inner.Const
			return Expr{Const: &b}
		}
		s := simplify(inner)
		return Expr{Not: &s}
	case e.All != nil:
		var terms []Expr
		for _, t := range e.All {
			t = simplify(t)
			switch {
			case t.Const != nil && *t.Const:
			case t.All != nil:
				terms = append(terms, t.All...)
			default:
				terms = append(terms, t)
			}
		}
		if len(terms) == 0 {
			return always()
		}
		if len(terms) == 1 {
			return terms[0]
		}
		return Expr{All: terms}
	case e.Any != nil:
		var terms []Expr
		for _, t := range e.Any {
			t = simplify(t)
			if t.Any != nil {
				terms = append(terms, t.Any...)
			} else {
				terms = append(terms, t)
			}
		}
		if len(terms) == 1 {
			return terms[0]
		}
		return Expr{Any: terms}
	}
	return e
}

func negateAll(list []Expr) []Expr {
	out := make([]Expr, len(list))
	for i := range list {
		t := list[i]
		out[i] = Expr{Not: &t}
	}
	return out
}

func sortedKeys(m map[string]*ast.File) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// linuxBuild matches files as upstream's image builds them: linux/amd64, CGO off.
var linuxBuild = func() build.Context {
	c := build.Default
	c.GOOS, c.GOARCH, c.CgoEnabled = "linux", "amd64", false
	return c
}()

// flagFuncs: the flag package's functions that register on the process's flag set, and the
// index of the name argument (the default follows it).
var flagFuncs = map[string]int{
	"String": 0, "Bool": 0, "Int": 0, "Int64": 0, "Uint": 0, "Uint64": 0, "Float64": 0, "Duration": 0,
	"StringVar": 1, "BoolVar": 1, "IntVar": 1, "Int64Var": 1, "UintVar": 1, "Uint64Var": 1, "Float64Var": 1,
	"DurationVar": 1, "Var": 1, "Func": 0, "BoolFunc": 0, "TextVar": 1,
}

// flags walks the packages main.go links from this module (its import graph) and reads
// every flag.Xxx(...) registration on the standard or pflag command line.
func (x *extractor) flags() ([]Flag, []string, error) {
	var out []Flag
	var libraries []string
	seen := map[string]bool{}
	queue := []string{"."}
	for len(queue) > 0 {
		dir := queue[0]
		queue = queue[1:]
		if seen[dir] {
			continue
		}
		seen[dir] = true
		p, err := x.load(dir)
		if err != nil {
			return nil, nil, err
		}
		for _, name := range sortedKeys(p.files) {
			file := p.files[name]
			for _, imp := range file.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				if strings.HasPrefix(path, modulePath+"/") {
					queue = append(queue, strings.TrimPrefix(path, modulePath+"/"))
				}
			}
			var inspectErr error
			ast.Inspect(file, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || inspectErr != nil {
					return inspectErr == nil
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				root := sel.X
				for {
					inner, ok := root.(*ast.SelectorExpr)
					if !ok {
						break
					}
					root = inner.X
				}
				pkgName, ok := root.(*ast.Ident)
				if !ok {
					return true
				}
				importPath := importPathOf(file, pkgName.Name)
				if dir == "." && importPath != "" && importPath != "flag" && importPath != "github.com/spf13/pflag" {
					// main.go handing a library the command line: klog.InitFlags(nil), X.AddFlag(pflag.CommandLine)
					for _, arg := range call.Args {
						// klog.InitFlags(nil) registers on the process's flag set too.
						nilSet := sel.Sel.Name == "InitFlags" && isNil(arg)
						if isCommandLine(file, arg) || nilSet {
							libraries = append(libraries, importPath+strings.TrimPrefix(x.source(call.Fun), pkgName.Name))
						}
					}
				}
				if sel.X != root {
					return true
				}
				if importPath != "flag" && importPath != "github.com/spf13/pflag" {
					return true
				}
				idx, ok := flagFuncs[sel.Sel.Name]
				if !ok || len(call.Args) <= idx {
					return true
				}
				flagName := x.stringOf(p, call.Args[idx])
				if flagName == "" {
					inspectErr = x.fail(call, "flag name is not a string constant: %s", x.source(call.Args[idx]))
					return false
				}
				f := Flag{Name: flagName, Type: strings.TrimSuffix(sel.Sel.Name, "Var"), Package: dir}
				if len(call.Args) > idx+1 && sel.Sel.Name != "Var" && sel.Sel.Name != "Func" && sel.Sel.Name != "BoolFunc" {
					f.Default = x.defaultOf(p, call.Args[idx+1])
				}
				out = append(out, f)
				return true
			})
			if inspectErr != nil {
				return nil, nil, inspectErr
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	for i := 1; i < len(out); i++ {
		if out[i].Name == out[i-1].Name {
			return nil, nil, fmt.Errorf("flag --%s is registered twice (%s, %s): the binary would panic", out[i].Name, out[i-1].Package, out[i].Package)
		}
	}
	sort.Strings(libraries)
	return out, dedupe(libraries), nil
}

func dedupe(list []string) []string {
	var out []string
	for i, s := range list {
		if i == 0 || s != list[i-1] {
			out = append(out, s)
		}
	}
	return out
}

// importPathOf returns the import path a file binds to a local package name.
func importPathOf(file *ast.File, local string) string {
	for _, imp := range file.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		name := filepath.Base(path)
		if strings.HasPrefix(name, "v") && len(name) <= 3 { // k8s.io/klog/v2 -> klog
			name = filepath.Base(filepath.Dir(path))
		}
		if imp.Name != nil {
			name = imp.Name.Name
		}
		if name == local {
			return path
		}
	}
	return ""
}

func isNil(e ast.Expr) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == "nil"
}

// isCommandLine: the process's flag set, as pflag.CommandLine or flag.CommandLine.
func isCommandLine(file *ast.File, e ast.Expr) bool {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "CommandLine" {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	if !ok {
		return false
	}
	path := importPathOf(file, id.Name)
	return path == "flag" || path == "github.com/spf13/pflag"
}

// defaultOf renders a flag default: a literal, or what a package-level identifier is
// initialised to (one level), else the source text.
func (x *extractor) defaultOf(p *pkg, e ast.Expr) string {
	switch v := e.(type) {
	case *ast.BasicLit:
		if v.Kind == token.STRING {
			s, _ := strconv.Unquote(v.Value)
			return s
		}
		return v.Value
	case *ast.Ident:
		if v.Name == "true" || v.Name == "false" {
			return v.Name
		}
		for _, name := range sortedKeys(p.files) {
			if init, ok := valueOf(p.files[name], v.Name); ok {
				if lit, ok := init.(*ast.BasicLit); ok {
					return x.defaultOf(p, lit)
				}
				return x.source(init)
			}
		}
	}
	return x.source(e)
}
