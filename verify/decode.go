package verify

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/heliac/heliac/graph"
)

// schemaVersion is the plan.json version this package reads.
const schemaVersion = 4

// tflmArenaDoc is one entry of plan.json's tflm_arenas.
type tflmArenaDoc struct {
	target      string
	pointerSize int64
	bytes       int64
	err         string
}

// planDoc is plan.json as the verifier reads it: the fields it checks, each
// entry with its JSON path for messages.
type planDoc struct {
	planHash  string
	alignment int64
	steps     int64 // model.steps
	subgraphs int64 // model.subgraphs
	arenas    []arenaRec
	// allocs are the tensor_allocs entries, lifetimes the
	// tensor_lifetimes ones, by (subgraph, tensor); scratch, persistent
	// and constant the entries of arena_usages, persistent_arenas and
	// constant_arenas, by arena id.
	allocs     []alloc
	scratch    []usage
	persistent []usage
	constant   []usage
	lifetimes  []lifetime
	variables  []varEntry    // resource_variables
	kernel     []kernelEntry // kernel_scratch
	skipped    []skipped     // skipped_tensors
	platform   platform
	rules      []rule
	spills     []spill
	schedule   []run
	// kernels is the kernel library whose contracts in_place entries
	// name ("" when the key is absent), kernelsPath its code path
	// (kernels_path; "" when absent); overwriteInputs says model inputs
	// may be written over.
	kernels         string
	kernelsPath     string
	overwriteInputs bool
	// strategy and proven are the ordering object: how the schedule's
	// order was chosen and whether it is proven optimal.
	strategy string
	proven   bool
	// timedOut is ordering.timed_out: the search stopped on its wall clock.
	timedOut bool
	// tflmArena is tflm_arena_bytes, TFLM's whole tensor_arena for the
	// model written with --emit-tflite (nil when absent).
	tflmArena *int64
	// tflmTarget is tflm_target, the target of tflmArena.
	tflmTarget string
	// tflmArenas are tflm_arenas: TFLM's whole tensor_arena on every
	// target the headers pick between by pointer size (nil when absent).
	tflmArenas []tflmArenaDoc
	// tflmResourceVariables is tflm_resource_variables (nil when absent).
	tflmResourceVariables *int64
	// stripes are the stripes entries (nil when the key is absent): the
	// regions the model the plan was made for runs stripe by stripe,
	// which the verifier rebuilds from the original (stripes.go).
	stripes []stripeRec
}

// platform is the platform object: the banks the plan was made for.
type platform struct {
	name  string
	banks []bank
	// constBank is constant_bank when the object has that key: the
	// read-only bank cold constants go to by default. Without it, the
	// first read-only bank.
	constBank *string
}

// bank is one platform.banks entry.
type bank struct {
	path      string
	name      string
	capacity  int64 // 0: unlimited
	writable  bool
	alignment int64 // 0: the plan's
	order     int64
	// bootInit is boot_init when present: RAM that start-up code fills
	// from an image, so it may hold cold constants.
	bootInit bool
	// section and initSection are section and init_section when present:
	// the linker sections the C module places the bank's arenas in.
	section, initSection string
}

// rule is one rules entry; exactly one of class, tensor and name is set.
type rule struct {
	path                string
	class, tensor, name string
	memory, source      string
	// hottest is the rule's byte budget for the hottest constants; 0
	// when absent.
	hottest int64
}

// spill is one spills entry.
type spill struct {
	path     string
	key      key
	name     string
	from, to string
}

// arenaRec is one arenas entry.
type arenaRec struct {
	path   string
	id     int64
	name   string
	role   string
	memory string
	// source is source_memory, nil for null: a constant arena's memory
	// when it is cold, the bank it is copied from when staged.
	source   *string
	provider string
	// sharedSize is a shared arena's buffer (shared_size); 0 otherwise.
	sharedSize int64
	size       int64
	used       int64
	alignment  int64
}

// staged reports whether a is a constant arena copied from another bank
// (its source_memory is not its memory) before the first run.
func (a *arenaRec) staged() bool {
	return a.role == roleConstant && a.source != nil && *a.source != a.memory
}

// binding is where an allocation lies: its arena and the offset in it.
type binding struct {
	role   string
	arena  int64
	memory string
	offset int64
	source *string // source_memory; nil for null
}

// stagedFrom returns the bank a staged constant binding is copied from,
// "" for any other.
func (b *binding) stagedFrom() string {
	if b.role != roleConstant || b.source == nil || *b.source == b.memory {
		return ""
	}
	return *b.source
}

// alloc is one tensor_allocs entry.
type alloc struct {
	path string
	ref  graph.TensorRef
	name string
	size int64
	binding
	// aliasOf is the root of the alias group the tensor belongs to; nil
	// for null.
	aliasOf *graph.TensorRef
	// aliasOffset is alias_offset, nil when the key is absent (an offset
	// of 0).
	aliasOffset *int64
	// dynamic is dynamic_shape, nil when the key is absent.
	dynamic *bool
	// inPlace is the in_place object, nil when the key is absent.
	inPlace *inPlaceDecl
	// copy is the exact_overlap_copy object, nil when the key is absent.
	copy *copyDecl
}

// copyDecl is a tensor_allocs entry's exact_overlap_copy: the copying
// operator that copies the tensor exactly onto itself, the other operand
// it lies in (a concatenation's output) or over (a slice's input), and
// the contract that allows it.
type copyDecl struct {
	op       graph.OpRef
	with     graph.TensorRef
	contract string
}

// inPlaceDecl is a tensor_allocs entry's in_place: the operator that
// writes the tensor over its input, and the contract that allows it.
type inPlaceDecl struct {
	op       graph.OpRef
	input    graph.TensorRef
	contract string
}

// usage is one entry of arena_usages, persistent_arenas or constant_arenas:
// the heliaAOT view of an arena, under its memory, which names it by id.
type usage struct {
	path   string
	role   string // the map it is in
	key    string // its key in that map
	arena  int64
	memory string
	total  int64
	used   int64
	// Scratch arenas only.
	capacity    int64
	frag        float64 // fragmentation
	lowerBound  int64
	noAliases   int64 // lower_bound_without_aliases
	peakStep    int64
	peakTensors []key
	// Constant arenas only.
	source string
	mode   string
}

// lifetime is one tensor_lifetimes entry, of the tensor its key names;
// start and end are inclusive steps.
type lifetime struct {
	path       string
	ref        graph.TensorRef
	start, end int64
}

// varEntry is one resource_variables entry.
type varEntry struct {
	path      string
	container string
	shared    string // shared_name
	size      int64
	arena     int64
	memory    string
	offset    int64
	handles   []graph.TensorRef
}

// kernelEntry is one kernel_scratch entry.
type kernelEntry struct {
	path  string
	op    graph.OpRef
	index int64
	name  string
	size  int64
	binding
	start, end int64
}

// run is one schedule entry: an operator run over the inclusive steps
// [start, end].
type run struct {
	path       string
	op         graph.OpRef
	name       string
	start, end int64
}

// skipped is one skipped_tensors entry.
type skipped struct {
	path   string
	ref    graph.TensorRef
	name   string
	reason string
}

// decode reads plan.json. When a key is missing or has the wrong type
// anywhere in the document, it returns nil and every such problem: the
// checks that follow compare entries with one another, and an entry left out
// would only make them report errors that are not there.
func decode(data []byte) (*planDoc, []Violation) {
	var r report
	v, dup, ok := fastJSON(data)
	if !ok && dup == nil {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			r.add(Malformed, "plan.json: %v", err)
			return nil, r
		}
		if _, err := dec.Token(); err != io.EOF {
			r.add(Malformed, "plan.json: data after the top-level object")
			return nil, r
		}
		dup = duplicateKey(data)
	}
	if dup != nil {
		where := dup.path
		if where == "" {
			where = "plan.json"
		}
		r.add(Malformed, "%s: key %q is given twice; the keys of a JSON object are unique", where, dup.key)
		return nil, r
	}
	top := newObject(&r, v, "")
	if top.m == nil {
		return nil, r
	}
	if ver := top.int("schema_version"); *top.ok && ver != schemaVersion {
		r.add(Malformed, "plan.json: schema_version is %d, but this verifier reads version %d; compile the model again to write one", ver, schemaVersion)
		return nil, r
	}
	top.str("generator")
	top.str("planner")
	doc := &planDoc{planHash: top.str("plan_hash")}
	model := top.object("model")
	model.name("name")
	model.str("sha256")
	doc.subgraphs = model.int("subgraphs")
	doc.steps = model.int("steps")
	doc.alignment = top.int("alignment")
	doc.kernels = top.optString("kernels")
	doc.kernelsPath = top.optString("kernels_path")
	doc.tflmArena = top.optInt("tflm_arena_bytes")
	doc.tflmTarget = top.optString("tflm_target")
	doc.tflmResourceVariables = top.optInt("tflm_resource_variables")
	if _, ok := top.m["tflm_arenas"]; ok {
		doc.tflmArenas = []tflmArenaDoc{}
		for i, v := range top.list("tflm_arenas") {
			o := newObject(&r, v, "tflm_arenas["+strconv.Itoa(i)+"]")
			a := tflmArenaDoc{target: o.str("target"), pointerSize: o.int("pointer_size")}
			if n := o.optInt("bytes"); n != nil {
				a.bytes = *n
			}
			a.err = o.optString("error")
			if (a.bytes > 0) == (a.err != "") {
				r.add(Malformed, "%s: wants either bytes or error", o.where())
			}
			doc.tflmArenas = append(doc.tflmArenas, a)
		}
	}
	if b := top.optBool("overwrite_inputs"); b != nil {
		doc.overwriteInputs = *b
	}
	ordering := top.object("ordering")
	doc.strategy = ordering.str("strategy")
	doc.proven = ordering.bool("proven_optimal")
	if b := ordering.optBool("timed_out"); b != nil {
		doc.timedOut = *b
	}
	lists := map[string][]any{}
	for _, k := range []string{"arenas", "resource_variables", "kernel_scratch", "skipped_tensors", "rules", "spills", "schedule"} {
		lists[k] = top.list(k)
	}
	maps := map[string]map[string]any{}
	for _, k := range []string{"tensor_allocs", "tensor_lifetimes", "arena_usages", "persistent_arenas", "constant_arenas"} {
		maps[k] = top.keyed(k)
	}
	plat := top.object("platform")
	doc.platform.name = plat.str("name")
	doc.platform.constBank = plat.optStr("constant_bank")
	plat.optStr("cpu")
	banks := plat.list("banks")
	if !*top.ok {
		return nil, r
	}
	each := func(list string, f func(o *object)) {
		for i, v := range lists[list] {
			f(newObject(&r, v, list+"["+strconv.Itoa(i)+"]"))
		}
	}
	each("arenas", func(o *object) {
		doc.arenas = append(doc.arenas, arenaRec{path: o.path, id: o.int("id"), name: o.str("name"), role: o.str("role"),
			memory: o.str("memory"), source: o.strOrNull("source_memory"), provider: o.str("provider"),
			size: o.int("size"), used: o.int("used"), alignment: o.int("alignment")})
		if n := o.optInt("shared_size"); n != nil {
			doc.arenas[len(doc.arenas)-1].sharedSize = *n
		}
	})
	byID := func(list string, f func(o *object, ref graph.TensorRef)) {
		for _, e := range tensorEntries(&r, list, maps[list]) {
			f(newObject(&r, e.v, e.path), e.ref)
		}
	}
	byID("tensor_allocs", func(o *object, id graph.TensorRef) {
		a := alloc{path: o.path, ref: o.ref(), name: o.name("name"), size: o.int("size"),
			binding: o.binding(), aliasOf: o.refOrNull("alias_of"), aliasOffset: o.optInt("alias_offset"),
			dynamic: o.optBool("dynamic_shape"), inPlace: o.inPlace(), copy: o.copyDecl()}
		if *o.ok && a.ref != id {
			r.add(Malformed, "%s: subgraph %d and tensor %d, but its key is the id of tensor %d:%d",
				o.path, a.ref.Subgraph, a.ref.Tensor, id.Subgraph, id.Tensor)
		}
		doc.allocs = append(doc.allocs, a)
	})
	byID("tensor_lifetimes", func(o *object, id graph.TensorRef) {
		doc.lifetimes = append(doc.lifetimes, lifetime{path: o.path, ref: id, start: o.int("start_op"), end: o.int("end_op")})
	})
	byMemory := func(list string, f func(o *object, memory string)) {
		for _, e := range memoryEntries(&r, list, maps[list]) {
			f(newObject(&r, e.v, e.path), e.memory)
		}
	}
	byMemory("arena_usages", func(o *object, key string) {
		a := usage{path: o.path, role: roleScratch, key: key, arena: o.int("arena"), memory: o.str("memory"), capacity: o.int("capacity"),
			total: o.int("total_size"), used: o.int("used"), frag: o.number("fragmentation"), lowerBound: o.int("lower_bound"),
			noAliases: o.int("lower_bound_without_aliases"), peakStep: o.int("peak_step")}
		for j, p := range o.list("peak_tensors") {
			a.peakTensors = append(a.peakTensors, newObject(&r, p, fmt.Sprintf("%s.peak_tensors[%d]", o.path, j)).key())
		}
		doc.scratch = append(doc.scratch, a)
	})
	byMemory("persistent_arenas", func(o *object, key string) {
		doc.persistent = append(doc.persistent, usage{path: o.path, role: rolePersistent, key: key, arena: o.int("arena"),
			memory: o.str("memory"), total: o.int("total_size"), used: o.int("used")})
	})
	byMemory("constant_arenas", func(o *object, key string) {
		doc.constant = append(doc.constant, usage{path: o.path, role: roleConstant, key: key, arena: o.int("arena"), memory: o.str("memory"),
			source: o.str("source_memory"), mode: o.str("mode"), total: o.int("total_size"), used: o.int("used")})
	})
	each("resource_variables", func(o *object) {
		rv := varEntry{path: o.path, container: o.name("container"), shared: o.name("shared_name"),
			size: o.int("size"), arena: o.int("arena"), memory: o.str("memory"), offset: o.int("offset")}
		for j, h := range o.list("handles") {
			rv.handles = append(rv.handles, newObject(&r, h, fmt.Sprintf("%s.handles[%d]", o.path, j)).ref())
		}
		doc.variables = append(doc.variables, rv)
	})
	each("kernel_scratch", func(o *object) {
		doc.kernel = append(doc.kernel, kernelEntry{path: o.path, op: o.opRef(), index: o.int("index"), name: o.name("name"),
			size: o.int("size"), binding: o.binding(), start: o.int("start_op"), end: o.int("end_op")})
	})
	each("skipped_tensors", func(o *object) {
		doc.skipped = append(doc.skipped, skipped{path: o.path, ref: o.ref(), name: o.name("name"), reason: o.str("reason")})
	})
	each("rules", func(o *object) {
		ru := rule{path: o.path, class: o.optString("class"), tensor: o.optString("tensor"),
			name: o.optString("name"), memory: o.str("memory"), source: o.optString("source")}
		if h := o.optInt("hottest"); h != nil {
			ru.hottest = *h
		}
		doc.rules = append(doc.rules, ru)
	})
	each("spills", func(o *object) {
		sp := spill{path: o.path, key: o.key(), name: o.name("name"), from: o.str("from"), to: o.str("to")}
		o.str("reason")
		doc.spills = append(doc.spills, sp)
	})
	each("schedule", func(o *object) {
		doc.schedule = append(doc.schedule, run{path: o.path, op: o.opRef(), name: o.name("name"),
			start: o.int("start_op"), end: o.int("end_op")})
	})
	for i, v := range banks {
		o := newObject(&r, v, fmt.Sprintf("platform.banks[%d]", i))
		b := bank{path: o.path, name: o.str("name"), capacity: o.int("capacity"), writable: o.bool("writable"),
			alignment: o.int("alignment"), order: o.int("order")}
		if bi := o.optBool("boot_init"); bi != nil {
			b.bootInit = *bi
		}
		b.section, b.initSection = o.optString("section"), o.optString("init_section")
		doc.platform.banks = append(doc.platform.banks, b)
	}
	if _, has := top.m["stripes"]; has {
		for i, v := range top.list("stripes") {
			doc.stripes = append(doc.stripes, decodeStripe(newObject(&r, v, "stripes["+strconv.Itoa(i)+"]")))
		}
	}
	if len(r) > 0 {
		return nil, r
	}
	return doc, nil
}

// idEntry is an entry of a map keyed by tensor id.
type idEntry struct {
	path string
	ref  graph.TensorRef
	v    any
}

// tensorEntries returns the entries of the map list (tensor_allocs or
// tensor_lifetimes) by (subgraph, tensor), each with the tensor its key
// names; a key that is not a canonical tensor id is reported.
func tensorEntries(r *report, list string, m map[string]any) []idEntry {
	out := make([]idEntry, 0, len(m))
	var bad []string
	for k, v := range m {
		ref, ok := parseID(k)
		if !ok {
			bad = append(bad, k)
			continue
		}
		// A canonical id needs no quoting: %q would write it as it is.
		out = append(out, idEntry{path: list + `["` + k + `"]`, ref: ref, v: v})
	}
	slices.Sort(bad) // messages in one order, not the map's
	for _, k := range bad {
		r.add(Malformed, "%s: key %q is not a tensor id (\"<subgraph>:<tensor>\", both decimal without sign or leading zeros)", list, k)
	}
	slices.SortFunc(out, func(a, b idEntry) int {
		return cmp.Or(cmp.Compare(a.ref.Subgraph, b.ref.Subgraph), cmp.Compare(a.ref.Tensor, b.ref.Tensor))
	})
	return out
}

// parseID reads a tensor id as plan.json writes it: "<subgraph>:<tensor>",
// both decimal indices without sign or leading zeros.
func parseID(s string) (graph.TensorRef, bool) {
	ref, ok := parseRef(s)
	if !ok || strconv.Itoa(int(ref.Subgraph))+":"+strconv.Itoa(int(ref.Tensor)) != s {
		return graph.TensorRef{}, false
	}
	return ref, true
}

// memEntry is an entry of a map keyed by memory.
type memEntry struct {
	path   string
	memory string
	arena  int64 // the entry's arena when it reads as an integer, else -1
	v      any
}

// memoryEntries returns the entries of an arena map (arena_usages,
// persistent_arenas or constant_arenas) in the order of their arena ids,
// then of their keys.
func memoryEntries(r *report, list string, m map[string]any) []memEntry {
	var out []memEntry
	for k, v := range m {
		e := memEntry{path: fmt.Sprintf("%s[%q]", list, k), memory: k, arena: -1, v: v}
		if o, isObj := v.(map[string]any); isObj {
			if n, isNum := o["arena"].(json.Number); isNum {
				if id, err := n.Int64(); err == nil {
					e.arena = id
				}
			}
		}
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b memEntry) int {
		return cmp.Or(cmp.Compare(a.arena, b.arena), strings.Compare(a.memory, b.memory))
	})
	return out
}

// binding reads the binding object of a tensor or kernel scratch entry.
func (o *object) binding() binding {
	b := o.object("binding")
	return binding{role: b.str("role"), arena: b.int("arena"), memory: b.str("memory"), offset: b.int("offset"),
		source: b.strOrNull("source_memory")}
}

// key reads an allocation reference by the keys it has: tensor for a
// tensor, operator and index for kernel scratch, shared_name (with
// container) for a resource variable.
func (o *object) key() key {
	if o.m == nil {
		return key{}
	}
	_, isTensor := o.m["tensor"]
	_, isOp := o.m["operator"]
	_, isVar := o.m["shared_name"]
	switch {
	case isTensor && !isOp && !isVar:
		return key{kind: tensorKey, ref: o.ref()}
	case isOp && !isTensor && !isVar:
		return key{kind: scratchKey, op: o.opRef(), index: o.int("index")}
	case isVar && !isTensor && !isOp:
		return key{kind: variableKey, variable: varKey{o.name("container"), o.name("shared_name")}}
	}
	o.r.add(Malformed, "%s: want one of tensor, operator or shared_name to name an allocation", o.where())
	*o.ok = false
	return key{}
}

// object reads the keys of one JSON object. Every missing or mistyped key
// is reported and clears ok, which nested objects share with their parent.
type object struct {
	r    *report
	path string
	m    map[string]any // nil when the value was not an object
	ok   *bool
}

func newObject(r *report, v any, path string) *object {
	ok := true
	o := &object{r: r, path: path, ok: &ok}
	o.m = o.asObject(v)
	return o
}

// asObject returns v as the object o reads, or reports it.
func (o *object) asObject(v any) map[string]any {
	m, isObj := v.(map[string]any)
	if !isObj {
		o.r.add(Malformed, "%s: %s, want an object", o.where(), jsonType(v))
		*o.ok = false
	}
	return m
}

func (o *object) at(key string) string {
	if o.path == "" {
		return key
	}
	return o.path + "." + key
}

// name is the object's path for messages.
func (o *object) where() string {
	if o.path == "" {
		return "plan.json"
	}
	return o.path
}

func (o *object) field(key string) (any, bool) {
	if o.m == nil {
		return nil, false // already reported
	}
	v, ok := o.m[key]
	if !ok {
		o.r.add(Malformed, "%s: missing key %q", o.where(), key)
		*o.ok = false
	}
	return v, ok
}

func (o *object) wrong(key string, v any, want string) {
	o.r.add(Malformed, "%s: %s, want %s", o.at(key), jsonType(v), want)
	*o.ok = false
}

func (o *object) int(key string) int64 {
	v, ok := o.field(key)
	if !ok {
		return 0
	}
	if n, isNum := v.(json.Number); isNum {
		if i, err := n.Int64(); err == nil {
			return i
		}
		o.wrong(key, v, "an integer")
		return 0
	}
	o.wrong(key, v, "an integer")
	return 0
}

// index reads a subgraph or tensor index, which must fit an int32.
func (o *object) index(key string) int {
	i := o.int(key)
	if *o.ok && (i < 0 || i > math.MaxInt32) {
		o.r.add(Malformed, "%s: %d is not an index", o.at(key), i)
		*o.ok = false
		return 0
	}
	return int(i)
}

func (o *object) ref() graph.TensorRef {
	return graph.TensorRef{Subgraph: graph.SubgraphIndex(o.index("subgraph")), Tensor: graph.TensorID(o.index("tensor"))}
}

func (o *object) opRef() graph.OpRef {
	return graph.OpRef{Subgraph: graph.SubgraphIndex(o.index("subgraph")), Op: graph.OpIndex(o.index("operator"))}
}

// refOrNull reads a {"subgraph", "tensor"} object or null.
func (o *object) refOrNull(key string) *graph.TensorRef {
	v, ok := o.field(key)
	if !ok || v == nil {
		return nil
	}
	child := &object{r: o.r, path: o.at(key), ok: o.ok}
	if child.m = child.asObject(v); child.m == nil {
		return nil
	}
	r := child.ref()
	return &r
}

// inPlace reads the optional in_place object of a tensor_allocs entry:
// {"subgraph", "operator", "input", "contract"}, the input a tensor of the
// operator's subgraph.
func (o *object) inPlace() *inPlaceDecl {
	if o.m == nil {
		return nil
	}
	if _, present := o.m["in_place"]; !present {
		return nil
	}
	child := o.object("in_place")
	if child.m == nil {
		return nil
	}
	op := child.opRef()
	return &inPlaceDecl{op: op, input: graph.TensorRef{Subgraph: op.Subgraph, Tensor: graph.TensorID(child.index("input"))},
		contract: child.str("contract")}
}

// copyDecl reads the optional exact_overlap_copy object of a
// tensor_allocs entry: {"subgraph", "operator", "with", "contract"}, with
// a tensor of the operator's subgraph.
func (o *object) copyDecl() *copyDecl {
	if o.m == nil {
		return nil
	}
	if _, present := o.m["exact_overlap_copy"]; !present {
		return nil
	}
	child := o.object("exact_overlap_copy")
	if child.m == nil {
		return nil
	}
	op := child.opRef()
	return &copyDecl{op: op, with: graph.TensorRef{Subgraph: op.Subgraph, Tensor: graph.TensorID(child.index("with"))},
		contract: child.str("contract")}
}

// optInt reads an integer key that may be absent; nil when it is.
func (o *object) optInt(key string) *int64 {
	if o.m == nil {
		return nil
	}
	if _, present := o.m[key]; !present {
		return nil
	}
	n := o.int(key)
	return &n
}

// optBool reads a boolean key that may be absent; nil when it is.
func (o *object) optBool(key string) *bool {
	if o.m == nil {
		return nil
	}
	v, present := o.m[key]
	if !present {
		return nil
	}
	b, isBool := v.(bool)
	if !isBool {
		o.wrong(key, v, "a boolean")
		return nil
	}
	return &b
}

// name reads a name of the model (docs/plan-format.md, "Names") and
// returns the bytes it stands for.
func (o *object) name(key string) string {
	text := o.str(key)
	raw, ok := unescapeName(text)
	if !ok {
		o.r.add(Malformed, "%s: %q is not written as docs/plan-format.md says names are (a backslash as \\\\, invalid UTF-8 and control characters as \\xNN)", o.at(key), text)
		*o.ok = false
	}
	return raw
}

func (o *object) str(key string) string {
	v, ok := o.field(key)
	if !ok {
		return ""
	}
	s, isStr := v.(string)
	if !isStr {
		o.wrong(key, v, "a string")
	}
	return s
}

// optStr reads a string key that may be absent; nil when it is.
func (o *object) optStr(key string) *string {
	if o.m == nil {
		return nil
	}
	v, present := o.m[key]
	if !present {
		return nil
	}
	s, isStr := v.(string)
	if !isStr {
		o.wrong(key, v, "a string")
		return nil
	}
	return &s
}

// optString reads a string key that may be absent; "" when it is.
func (o *object) optString(key string) string {
	if s := o.optStr(key); s != nil {
		return *s
	}
	return ""
}

func (o *object) bool(key string) bool {
	v, ok := o.field(key)
	if !ok {
		return false
	}
	b, isBool := v.(bool)
	if !isBool {
		o.wrong(key, v, "a boolean")
	}
	return b
}

// number reads any JSON number.
func (o *object) number(key string) float64 {
	v, ok := o.field(key)
	if !ok {
		return 0
	}
	if n, isNum := v.(json.Number); isNum {
		if f, err := n.Float64(); err == nil {
			return f
		}
	}
	o.wrong(key, v, "a number")
	return 0
}

func (o *object) strOrNull(key string) *string {
	v, ok := o.field(key)
	if !ok || v == nil {
		return nil
	}
	s, isStr := v.(string)
	if !isStr {
		o.wrong(key, v, "a string or null")
		return nil
	}
	return &s
}

func (o *object) object(key string) *object {
	child := &object{r: o.r, path: o.at(key), ok: o.ok}
	if v, ok := o.field(key); ok {
		child.m = child.asObject(v)
	}
	return child
}

// keyed reads an object whose keys are ids (tensor ids or memories).
func (o *object) keyed(key string) map[string]any {
	v, ok := o.field(key)
	if !ok {
		return nil
	}
	m, isObj := v.(map[string]any)
	if !isObj {
		o.wrong(key, v, "an object")
	}
	return m
}

func (o *object) list(key string) []any {
	v, ok := o.field(key)
	if !ok {
		return nil
	}
	l, isList := v.([]any)
	if !isList {
		o.wrong(key, v, "an array")
	}
	return l
}

// jsonType names the JSON type of a decoded value for messages.
func jsonType(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number:
		return "number " + v.String()
	case string:
		return fmt.Sprintf("string %q", v)
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}
