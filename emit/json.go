// Package emit writes a plan out: plan.json, the C sources a firmware build
// compiles, and the human-readable summary.
//
// Input: *graph.Model and its *plan.Plan. Output: bytes; it does no file
// I/O. The same inputs always give the same bytes (no timestamps, maps only
// in sorted order). It must not import verify.
package emit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"github.com/heliac/heliac/graph"
	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/plan"
)

// SchemaVersion is the version of the plan.json format written by JSON
// (docs/plan-format.md).
const SchemaVersion = 4

// Meta describes the model a plan was made for.
type Meta struct {
	ModelName   string // base name of the model file, without extension
	ModelSHA256 string // hex digest of the model file
	Subgraphs   int
	Version     string // heliac's version; goldens use "test"
	// TFLMArena is TFLM's whole tensor_arena for the model emitted with
	// --emit-tflite on the run's TFLM target (nil without, or when it
	// cannot be computed): plan.json's tflm_arena_bytes and tflm_target.
	TFLMArena *TFLMArena
	// TFLMTargets are TFLM's whole tensor_arena on every target the
	// headers' <P>_TFLM_ARENA_SIZE picks between by pointer size
	// (UINTPTR_MAX), with --emit-tflite: one per pointer size, a target
	// without a figure saying why (plan.json's tflm_arenas).
	TFLMTargets []TFLMTarget
	// TFLMResourceVariables is the number of resource variables the
	// figures assume the application creates
	// (MicroResourceVariables::Create's num_variables): one per VAR_HANDLE
	// operator, as package tflmarena counts them.
	TFLMResourceVariables int
}

// TFLMTarget is TFLM's whole tensor_arena for the emitted model on one
// target, or why heliac gives none there.
type TFLMTarget struct {
	// Target names it (tflmarena.Target.Name: "cortex-m", "host64").
	Target string
	// PointerSize is its sizeof(void*): 4 or 8.
	PointerSize int64
	// Bytes is the arena's size; 0 when Reason says why there is none.
	Bytes int64
	// Reason says why there is no figure.
	Reason string
}

// TFLMArena is the smallest tensor_arena, in bytes, with which TensorFlow
// Lite Micro's MicroInterpreter allocates the emitted model on Target
// (package tflmarena).
type TFLMArena struct {
	Target string
	Bytes  int64
}

// jsonTFLMArena is one entry of plan.json's tflm_arenas.
type jsonTFLMArena struct {
	Target      string `json:"target"`
	PointerSize int64  `json:"pointer_size"`
	Bytes       int64  `json:"bytes,omitempty"`
	Error       string `json:"error,omitempty"`
}

type jsonPlan struct {
	SchemaVersion   int          `json:"schema_version"`
	Generator       string       `json:"generator"`
	Model           jsonModel    `json:"model"`
	Alignment       int64        `json:"alignment"`
	Kernels         string       `json:"kernels,omitempty"`
	KernelsPath     string       `json:"kernels_path,omitempty"`
	OverwriteInputs bool         `json:"overwrite_inputs,omitempty"`
	Planner         string       `json:"planner"`
	Platform        jsonPlatform `json:"platform"`
	Rules           []plan.Rule  `json:"rules"`
	PlanHash        string       `json:"plan_hash"`
	Arenas          []jsonArena  `json:"arenas"`
	// The five maps of heliaAOT's MemoryPlan: allocations and lifetimes
	// by tensor id, arenas by memory.
	TensorAllocs     orderedMap[jsonAlloc]      `json:"tensor_allocs"`
	ArenaUsages      orderedMap[jsonScratch]    `json:"arena_usages"`
	PersistentArenas orderedMap[jsonPersistent] `json:"persistent_arenas"`
	ConstantArenas   orderedMap[jsonConstant]   `json:"constant_arenas"`
	TensorLifetimes  orderedMap[jsonLifetime]   `json:"tensor_lifetimes"`
	Variables        []jsonVariable             `json:"resource_variables"`
	KernelScratch    []jsonKernel               `json:"kernel_scratch"`
	Skipped          []jsonSkipped              `json:"skipped_tensors"`
	Spills           []jsonSpill                `json:"spills"`
	BankTraffic      []jsonBankTraffic          `json:"bank_traffic"`
	UnusedRules      []jsonUnused               `json:"unused_rules,omitempty"`
	UnusedExternal   []string                   `json:"unused_external_arenas,omitempty"`
	UnknownScratch   []jsonOpName               `json:"unknown_kernel_scratch,omitempty"`
	UnusedOverrides  []jsonOverride             `json:"unused_kernel_scratch,omitempty"`
	ScratchSource    *jsonSource                `json:"kernel_scratch_source,omitempty"`
	Ordering         jsonOrdering               `json:"ordering"`
	Schedule         []jsonRun                  `json:"schedule"`
	TFLMArenaBytes   int64                      `json:"tflm_arena_bytes,omitempty"`
	TFLMTarget       string                     `json:"tflm_target,omitempty"`
	TFLMArenas       []jsonTFLMArena            `json:"tflm_arenas,omitempty"`
	TFLMResourceVars *int                       `json:"tflm_resource_variables,omitempty"`
	Stripes          []jsonStripe               `json:"stripes,omitempty"`
}

// jsonBankTraffic is one entry of bank_traffic: the bytes a bank's
// allocations are read and written per inference (plan.BankTraffic), and
// the staging copy's bytes read from it or written into it once.
type jsonBankTraffic struct {
	Bank           string `json:"bank"`
	Read           int64  `json:"read"`
	Written        int64  `json:"written"`
	StagingRead    int64  `json:"staging_read,omitempty"`
	StagingWritten int64  `json:"staging_written,omitempty"`
}

// jsonSource names the kernel library and CPU that sized kernel_scratch.
type jsonSource struct {
	Library string `json:"library"`
	CPU     string `json:"cpu,omitempty"`
}

// jsonOrdering says how the schedule's operator order was chosen.
type jsonOrdering struct {
	Strategy      string `json:"strategy"`
	ProvenOptimal bool   `json:"proven_optimal"`
	// TimedOut is present (true) when the search stopped on its wall-clock
	// safety net rather than its work budget.
	TimedOut bool `json:"timed_out,omitempty"`
}

// jsonOpName names an operator: its subgraph, index and TFLite name.
type jsonOpName struct {
	Subgraph int    `json:"subgraph"`
	Operator int    `json:"operator"`
	Name     string `json:"name"`
}

// jsonUnused is a rule that selects nothing: its index in rules, and why.
type jsonUnused struct {
	Rule   int    `json:"rule"`
	Reason string `json:"reason"`
}

// jsonOverride is an entry of unused_kernel_scratch.
type jsonOverride struct {
	Entry    int    `json:"entry"`
	Operator string `json:"operator"`
	Reason   string `json:"reason"`
}

type jsonPlatform struct {
	Name         string      `json:"name"`
	ConstantBank string      `json:"constant_bank"`
	Banks        []plan.Bank `json:"banks"`
}

// jsonKey names an allocation by the keys of its own list entry: subgraph
// and tensor for a tensor, container and shared_name for a resource
// variable, subgraph, operator and index for kernel scratch.
type jsonKey struct {
	Subgraph   *int    `json:"subgraph,omitempty"`
	Tensor     *int    `json:"tensor,omitempty"`
	Container  *string `json:"container,omitempty"`
	SharedName *string `json:"shared_name,omitempty"`
	Operator   *int    `json:"operator,omitempty"`
	Index      *int    `json:"index,omitempty"`
}

func keyOf(k plan.Key) jsonKey {
	n := func(i int) *int { return &i }
	str := func(s string) *string { return &s }
	switch k.Kind {
	case plan.VariableAlloc:
		return jsonKey{Container: str(escapeName(k.Variable.Container)), SharedName: str(escapeName(k.Variable.SharedName))}
	case plan.KernelScratchAlloc:
		return jsonKey{Subgraph: n(int(k.Op.Subgraph)), Operator: n(int(k.Op.Op)), Index: n(k.Index)}
	}
	return jsonKey{Subgraph: n(int(k.Ref.Subgraph)), Tensor: n(int(k.Ref.Tensor))}
}

type jsonSpill struct {
	jsonKey
	Name   string `json:"name"`
	From   string `json:"from"`
	To     string `json:"to"`
	Reason string `json:"reason"`
}

type jsonArena struct {
	ID       int     `json:"id"`
	Name     string  `json:"name"`
	Role     string  `json:"role"`
	Memory   string  `json:"memory"`
	Source   *string `json:"source_memory"`
	Provider string  `json:"provider"`
	// SharedSize is a shared arena's buffer: the largest of the arenas of
	// its name over the models that share it.
	SharedSize int64 `json:"shared_size,omitempty"`
	Size       int64 `json:"size"`
	Used       int64 `json:"used"`
	Alignment  int64 `json:"alignment"`
}

type jsonVariable struct {
	Container  string    `json:"container"`
	SharedName string    `json:"shared_name"`
	Size       int64     `json:"size"`
	Arena      int       `json:"arena"`
	Memory     string    `json:"memory"`
	Offset     int64     `json:"offset"`
	Handles    []jsonRef `json:"handles"`
}

type jsonKernel struct {
	Subgraph int         `json:"subgraph"`
	Operator int         `json:"operator"`
	Index    int         `json:"index"`
	Name     string      `json:"name"`
	Size     int64       `json:"size"`
	Binding  jsonBinding `json:"binding"`
	StartOp  int         `json:"start_op"`
	EndOp    int         `json:"end_op"`
}

// jsonStripe is a stripes entry: one region of the model the plan was
// made for that runs stripe by stripe (graph.StripeRegion); tensors and
// operators as "subgraph:index" ids, operators the original's.
type jsonStripe struct {
	Subgraph  int        `json:"subgraph"`
	Input     string     `json:"input"`
	Output    string     `json:"output"`
	Operators []string   `json:"operators"`
	K         int        `json:"k"`
	Rows      [][2]int32 `json:"rows"`
	Halo      string     `json:"halo"`
	MACs      int64      `json:"macs"`
	ExtraMACs int64      `json:"extra_macs"`
}

// stripesOf is plan.json's stripes list for m's record, nil when m runs
// no region stripe by stripe.
func stripesOf(m *graph.Model) []jsonStripe {
	var out []jsonStripe
	for _, r := range m.Stripes {
		id := func(i int) string { return fmt.Sprintf("%d:%d", r.Subgraph, i) }
		js := jsonStripe{Subgraph: int(r.Subgraph), Input: id(int(r.Input)), Output: id(int(r.Output)), Operators: []string{},
			K: r.K(), Rows: append([][2]int32{}, r.Rows...), Halo: string(r.HaloKind()), MACs: r.MACs, ExtraMACs: r.ExtraMACs}
		for _, op := range r.Ops {
			js.Operators = append(js.Operators, id(op))
		}
		out = append(out, js)
	}
	return out
}

type jsonRun struct {
	Subgraph int    `json:"subgraph"`
	Operator int    `json:"operator"`
	Name     string `json:"name"`
	StartOp  int    `json:"start_op"`
	EndOp    int    `json:"end_op"`
}

type jsonSkipped struct {
	Subgraph int    `json:"subgraph"`
	Tensor   int    `json:"tensor"`
	Name     string `json:"name"`
	Reason   string `json:"reason"`
}

type jsonModel struct {
	Name      string `json:"name"`
	SHA256    string `json:"sha256"`
	Subgraphs int    `json:"subgraphs"`
	Steps     int    `json:"steps"`
}

type jsonAlloc struct {
	Subgraph int         `json:"subgraph"`
	Tensor   int         `json:"tensor"`
	Name     string      `json:"name"`
	Size     int64       `json:"size"`
	Binding  jsonBinding `json:"binding"`
	AliasOf  *jsonRef    `json:"alias_of"`
	// AliasOffset is where the tensor starts relative to its alias
	// group's root; written only when it is not 0.
	AliasOffset int64        `json:"alias_offset,omitempty"`
	InPlace     *jsonInPlace `json:"in_place,omitempty"`
	// Copy records that the plan relies on an exact-overlap copy.
	Copy    *jsonCopy `json:"exact_overlap_copy,omitempty"`
	Dynamic bool      `json:"dynamic_shape,omitempty"`
}

// jsonInPlace says which operator writes a tensor over which of its
// inputs, and under which contract of the plan's kernels.
type jsonInPlace struct {
	Subgraph int    `json:"subgraph"`
	Operator int    `json:"operator"`
	Input    int    `json:"input"`
	Contract string `json:"contract"`
}

// jsonCopy says which copying operator copies a tensor exactly onto
// itself, the other operand it lies in or over, and the exact-overlap
// contract of the plan's kernels that allows it.
type jsonCopy struct {
	Subgraph int    `json:"subgraph"`
	Operator int    `json:"operator"`
	With     int    `json:"with"`
	Contract string `json:"contract"`
}

type jsonBinding struct {
	Role         string  `json:"role"`
	Arena        int     `json:"arena"`
	Memory       string  `json:"memory"`
	Offset       int64   `json:"offset"`
	SourceMemory *string `json:"source_memory"`
}

type jsonRef struct {
	Subgraph int `json:"subgraph"`
	Tensor   int `json:"tensor"`
}

type jsonScratch struct {
	Arena       int       `json:"arena"`
	Memory      string    `json:"memory"`
	Capacity    int64     `json:"capacity"`
	TotalSize   int64     `json:"total_size"`
	Used        int64     `json:"used"`
	LowerBound  int64     `json:"lower_bound"`
	Unaliased   int64     `json:"lower_bound_without_aliases"`
	Frag        float64   `json:"fragmentation"`
	PeakStep    int       `json:"peak_step"`
	PeakTensors []jsonKey `json:"peak_tensors"`
}

type jsonPersistent struct {
	Arena     int    `json:"arena"`
	Memory    string `json:"memory"`
	TotalSize int64  `json:"total_size"`
	Used      int64  `json:"used"`
}

type jsonConstant struct {
	Arena        int    `json:"arena"`
	Memory       string `json:"memory"`
	SourceMemory string `json:"source_memory"`
	Mode         string `json:"mode"`
	TotalSize    int64  `json:"total_size"`
	Used         int64  `json:"used"`
}

// jsonLifetime is a tensor_lifetimes value: the inclusive steps a scratch
// tensor holds its value over.
type jsonLifetime struct {
	StartOp int `json:"start_op"`
	EndOp   int `json:"end_op"`
}

// orderedMap is a JSON object written with its keys in the order added
// (heliaAOT's MemoryPlan has dicts where heliac had ordered lists; the
// order keeps plan.json readable and its bytes deterministic). In jsonPlan
// it encodes as a hole that JSON then fills with the object (fill): a
// MarshalJSON method would have encoding/json scan its output once more,
// which at the limits took most of the time of writing the maps.
type orderedMap[V any] struct {
	keys   []string
	values []V
}

func (m *orderedMap[V]) add(key string, v V) {
	m.keys = append(m.keys, key)
	m.values = append(m.values, v)
}

// hole is the text an orderedMap leaves in the encoded plan: the string
// of one NUL byte. fill finds it after its map's key, a text that no string
// value can hold (its quotes would be escaped) and no nested object has.
const hole = `"\u0000"`

// MarshalJSON leaves the hole.
func (m orderedMap[V]) MarshalJSON() ([]byte, error) { return []byte(hole), nil }

// encode writes the object, keys in order, to enc's buffer.
func (m *orderedMap[V]) encode(buf *bytes.Buffer) error {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	buf.WriteByte('{')
	for i, k := range m.keys {
		if i > 0 {
			buf.WriteByte(',')
		}
		if err := enc.Encode(k); err != nil {
			return err
		}
		buf.Truncate(buf.Len() - 1) // Encode's newline
		buf.WriteByte(':')
		if err := enc.Encode(m.values[i]); err != nil {
			return err
		}
		buf.Truncate(buf.Len() - 1)
	}
	buf.WriteByte('}')
	return nil
}

// fill replaces the holes the maps left in js, the compact encoding of out
// (which writes them in this order), with the maps.
func (out *jsonPlan) fill(js []byte) ([]byte, error) {
	maps := []struct {
		key    string
		encode func(*bytes.Buffer) error
	}{
		{"tensor_allocs", out.TensorAllocs.encode},
		{"arena_usages", out.ArenaUsages.encode},
		{"persistent_arenas", out.PersistentArenas.encode},
		{"constant_arenas", out.ConstantArenas.encode},
		{"tensor_lifetimes", out.TensorLifetimes.encode},
	}
	var buf bytes.Buffer
	buf.Grow(2 * len(js))
	rest := js
	for _, m := range maps {
		at := bytes.Index(rest, []byte(`"`+m.key+`":`+hole))
		if at < 0 {
			return nil, fmt.Errorf("emit: no place for %s in plan.json", m.key)
		}
		at += len(m.key) + 3
		buf.Write(rest[:at])
		if err := m.encode(&buf); err != nil {
			return nil, err
		}
		rest = rest[at+len(hole):]
	}
	buf.Write(rest)
	return buf.Bytes(), nil
}

// JSON renders the plan as plan.json (docs/plan-format.md). Allocations
// and arenas are written once each, in the list of their kind and role.
func JSON(m *graph.Model, p *plan.Plan, meta Meta) ([]byte, error) {
	out := jsonPlan{
		SchemaVersion:   SchemaVersion,
		Generator:       "heliac " + meta.Version,
		Model:           jsonModel{Name: escapeName(meta.ModelName), SHA256: meta.ModelSHA256, Subgraphs: meta.Subgraphs, Steps: p.Schedule.Steps},
		Alignment:       p.Alignment,
		Kernels:         p.Kernels,
		KernelsPath:     p.KernelsPath,
		OverwriteInputs: p.OverwriteInputs,
		Planner:         p.Planner,
		PlanHash:        p.Hash(),
		Arenas:          []jsonArena{},
		Variables:       []jsonVariable{},
		KernelScratch:   []jsonKernel{},
		Skipped:         []jsonSkipped{},
		Spills:          []jsonSpill{},
		BankTraffic:     []jsonBankTraffic{},
		Ordering: jsonOrdering{Strategy: p.Schedule.Ordering.Strategy, ProvenOptimal: p.Schedule.Ordering.Proven,
			TimedOut: p.Schedule.Ordering.TimedOut},
		Schedule: []jsonRun{},
		Platform: jsonPlatform{Name: p.Platform.Name, ConstantBank: constBank(p.Platform), Banks: []plan.Bank{}},
		Rules:    []plan.Rule{},
	}
	out.Rules = append(out.Rules, p.Rules...)
	out.Platform.Banks = append(out.Platform.Banks, p.Platform.Banks...)
	for _, sp := range p.Spills {
		out.Spills = append(out.Spills, jsonSpill{jsonKey: keyOf(sp.Key), Name: escapeName(sp.Name), From: sp.From, To: sp.To, Reason: sp.Reason})
	}
	for _, b := range p.BankTraffic() {
		out.BankTraffic = append(out.BankTraffic, jsonBankTraffic{Bank: b.Bank, Read: b.PerInference.Read, Written: b.PerInference.Written,
			StagingRead: b.Staging.Read, StagingWritten: b.Staging.Written})
	}
	for _, u := range p.UnusedRules {
		out.UnusedRules = append(out.UnusedRules, jsonUnused{Rule: u.Rule, Reason: u.Reason})
	}
	for _, pat := range p.UnusedExternal {
		out.UnusedExternal = append(out.UnusedExternal, escapeName(pat))
	}
	for _, o := range p.UnknownScratch {
		out.UnknownScratch = append(out.UnknownScratch, jsonOpName{Subgraph: int(o.Subgraph), Operator: int(o.Op),
			Name: escapeName(m.Subgraphs[o.Subgraph].Ops[o.Op].Name())})
	}
	for _, u := range p.UnusedOverrides {
		out.UnusedOverrides = append(out.UnusedOverrides, jsonOverride{Entry: u.Entry, Operator: escapeName(u.Operator),
			Reason: escapeName(u.Reason)})
	}
	if src := p.ScratchSource; src.Library != "" {
		out.ScratchSource = &jsonSource{Library: src.Library, CPU: src.CPU}
	}
	for _, a := range p.Allocs {
		if err := out.addAlloc(p, a); err != nil {
			return nil, err
		}
	}
	for i := range p.Arenas {
		if err := out.addArena(&p.Arenas[i]); err != nil {
			return nil, err
		}
	}
	for _, sk := range p.Skipped {
		out.Skipped = append(out.Skipped, jsonSkipped{Subgraph: int(sk.Ref.Subgraph), Tensor: int(sk.Ref.Tensor),
			Name: escapeName(sk.Name), Reason: sk.Reason})
	}
	for _, r := range p.Schedule.Runs {
		if r.Op.Subgraph < 0 || int(r.Op.Subgraph) >= len(m.Subgraphs) || r.Op.Op < 0 || int(r.Op.Op) >= len(m.Subgraphs[r.Op.Subgraph].Ops) {
			return nil, fmt.Errorf("emit: the schedule runs operator %v, which the model does not have", r.Op)
		}
		out.Schedule = append(out.Schedule, jsonRun{Subgraph: int(r.Op.Subgraph), Operator: int(r.Op.Op),
			Name: escapeName(m.Subgraphs[r.Op.Subgraph].Ops[r.Op.Op].Name()), StartOp: int(r.Span.First), EndOp: int(r.Span.Last)})
	}
	if a := meta.TFLMArena; a != nil {
		out.TFLMArenaBytes, out.TFLMTarget = a.Bytes, a.Target
	}
	for _, t := range meta.TFLMTargets {
		out.TFLMArenas = append(out.TFLMArenas, jsonTFLMArena{Target: t.Target, PointerSize: t.PointerSize, Bytes: t.Bytes, Error: t.Reason})
	}
	if len(meta.TFLMTargets) > 0 {
		n := meta.TFLMResourceVariables
		out.TFLMResourceVars = &n
	}
	out.Stripes = stripesOf(m)
	js, err := compactJSON(out)
	if err != nil {
		return nil, err
	}
	if js, err = out.fill(js); err != nil {
		return nil, err
	}
	return indentJSON(js), nil
}

// addAlloc writes one allocation into the list of its kind.
func (out *jsonPlan) addAlloc(p *plan.Plan, a plan.Alloc) error {
	ar := p.Arena(a.Arena)
	if ar == nil {
		return fmt.Errorf("emit: %v %s is in arena %d, which the plan does not have", a.Key, quoted(a.Name), a.Arena)
	}
	b := jsonBinding{Role: a.Class.String(), Arena: int(ar.ID), Memory: ar.Memory, Offset: a.Offset, SourceMemory: sourceOf(ar)}
	switch a.Kind {
	case plan.TensorAlloc:
		ja := jsonAlloc{Subgraph: int(a.Ref.Subgraph), Tensor: int(a.Ref.Tensor), Name: escapeName(a.Name), Size: a.Size,
			Binding: b, Dynamic: a.Dynamic}
		if a.AliasOf != nil {
			ja.AliasOf = &jsonRef{int(a.AliasOf.Subgraph), int(a.AliasOf.Tensor)}
			ja.AliasOffset = a.AliasOffset
		}
		if ip := a.InPlace; ip != nil {
			ja.InPlace = &jsonInPlace{Subgraph: int(ip.Op.Subgraph), Operator: int(ip.Op.Op), Input: int(ip.Input.Tensor),
				Contract: ip.Contract.String()}
		}
		if cp := a.Copy; cp != nil {
			ja.Copy = &jsonCopy{Subgraph: int(cp.Op.Subgraph), Operator: int(cp.Op.Op), With: int(cp.With.Tensor),
				Contract: cp.Contract.String()}
		}
		id := string(plan.TensorIDOf(a.Ref))
		out.TensorAllocs.add(id, ja)
		if a.Class == liveness.Scratch {
			out.TensorLifetimes.add(id, jsonLifetime{StartOp: int(a.Live.First), EndOp: int(a.Live.Last)})
		}
	case plan.VariableAlloc:
		jv := jsonVariable{Container: escapeName(a.Variable.Container), SharedName: escapeName(a.Variable.SharedName), Size: a.Size,
			Arena: int(ar.ID), Memory: ar.Memory, Offset: a.Offset, Handles: []jsonRef{}}
		for _, h := range a.Handles {
			jv.Handles = append(jv.Handles, jsonRef{int(h.Subgraph), int(h.Tensor)})
		}
		out.Variables = append(out.Variables, jv)
	case plan.KernelScratchAlloc:
		out.KernelScratch = append(out.KernelScratch, jsonKernel{Subgraph: int(a.Op.Subgraph), Operator: int(a.Op.Op),
			Index: a.Index, Name: escapeName(a.Name), Size: a.Size, Binding: b, StartOp: int(a.Live.First), EndOp: int(a.Live.Last)})
	default:
		return fmt.Errorf("emit: %v %s has unknown kind %v", a.Key, quoted(a.Name), a.Kind)
	}
	return nil
}

// sourceOf is an arena's source_memory, by heliaAOT's rule: for a constant
// arena the memory its bytes come from (its own memory when cold, read
// where it lies; the staging source when staged), null for any other.
func sourceOf(ar *plan.Arena) *string {
	if ar.Role != liveness.Constant {
		return nil
	}
	src := ar.Memory
	if ar.Staged() {
		src = ar.Source
	}
	return &src
}

// addArena writes one arena into arenas and, under its memory, into the
// heliaAOT map of its role. The planner makes one arena per role and
// memory; a second is an error.
func (out *jsonPlan) addArena(ar *plan.Arena) error {
	ja := jsonArena{ID: int(ar.ID), Name: ar.Name, Role: ar.Role.String(), Memory: ar.Memory, Source: sourceOf(ar),
		Provider: ar.Provider.String(), SharedSize: ar.SharedSize, Size: ar.Size, Used: ar.Used, Alignment: ar.Alignment}
	out.Arenas = append(out.Arenas, ja)
	taken := map[liveness.Class][]string{liveness.Scratch: out.ArenaUsages.keys, liveness.Persistent: out.PersistentArenas.keys,
		liveness.Constant: out.ConstantArenas.keys}[ar.Role]
	if slices.Contains(taken, ar.Memory) {
		return fmt.Errorf("emit: two %s arenas in %s; heliaAOT's MemoryPlan has one arena of a role per memory", ar.Role, ar.Memory)
	}
	switch ar.Role {
	case liveness.Scratch:
		s := jsonScratch{Arena: int(ar.ID), Memory: ar.Memory, Capacity: ar.Capacity, TotalSize: ar.Size, Used: ar.Used,
			LowerBound: ar.LowerBound, Unaliased: ar.UnaliasedLowerBound, Frag: fragmentation(ar),
			PeakStep: int(ar.PeakStep), PeakTensors: []jsonKey{}}
		for _, k := range ar.Peak {
			s.PeakTensors = append(s.PeakTensors, keyOf(k))
		}
		out.ArenaUsages.add(ar.Memory, s)
	case liveness.Persistent:
		out.PersistentArenas.add(ar.Memory, jsonPersistent{Arena: int(ar.ID), Memory: ar.Memory, TotalSize: ar.Size, Used: ar.Used})
	case liveness.Constant:
		mode := "cold"
		if ar.Staged() {
			mode = "staged"
		}
		out.ConstantArenas.add(ar.Memory, jsonConstant{Arena: int(ar.ID), Memory: ar.Memory, SourceMemory: *sourceOf(ar),
			Mode: mode, TotalSize: ar.Size, Used: ar.Used})
	}
	return nil
}

// fragmentation is the share of a scratch arena above its lower bound, the
// bytes no plan could have saved excluded: (total_size - lower_bound) /
// total_size, rounded to four decimals; 0 for an empty arena.
func fragmentation(a *plan.Arena) float64 {
	if a.Size == 0 {
		return 0
	}
	return math.Round(10000*float64(a.Size-a.LowerBound)/float64(a.Size)) / 10000
}

// constBank names the bank cold constants go to by default.
func constBank(p plan.Platform) string {
	b, _ := p.ConstBank()
	return b.Name
}

// encodeJSON renders v as the JSON heliac writes everywhere: two-space
// indent, no HTML escaping, a final newline.
func encodeJSON(v any) ([]byte, error) {
	js, err := compactJSON(v)
	if err != nil {
		return nil, err
	}
	return indentJSON(js), nil
}

// compactJSON renders v without indent or HTML escaping, with a final
// newline.
func compactJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// indentJSON indents compact JSON as an Encoder with SetIndent("", "  ")
// does (an empty object or array stays "{}" or "[]"), keeping a trailing
// newline: the Encoder's own indenting runs a scanner over every byte and
// took most of the time of writing a plan at the limits.
func indentJSON(src []byte) []byte {
	dst := make([]byte, 0, len(src)+len(src)/2)
	depth := 0
	newline := func() {
		dst = append(dst, '\n')
		for range depth {
			dst = append(dst, ' ', ' ')
		}
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch c {
		case '"':
			j := i + 1
			for ; j < len(src) && src[j] != '"'; j++ {
				if src[j] == '\\' {
					j++
				}
			}
			dst = append(dst, src[i:j+1]...)
			i = j
		case '{', '[':
			dst = append(dst, c)
			if i+1 < len(src) && (src[i+1] == '}' || src[i+1] == ']') {
				dst = append(dst, src[i+1])
				i++
				continue
			}
			depth++
			newline()
		case '}', ']':
			depth--
			newline()
			dst = append(dst, c)
		case ',':
			dst = append(dst, c)
			newline()
		case ':':
			dst = append(dst, ':', ' ')
		default:
			dst = append(dst, c)
		}
	}
	return dst
}
