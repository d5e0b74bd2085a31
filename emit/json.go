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
	"math"

	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/plan"
)

// SchemaVersion is the version of the plan.json format written by JSON
// (docs/plan-format.md).
const SchemaVersion = 1

// Meta describes the model a plan was made for.
type Meta struct {
	ModelName   string // base name of the model file, without extension
	ModelSHA256 string // hex digest of the model file
	Subgraphs   int
	Version     string // heliac's version; goldens use "test"
}

type jsonPlan struct {
	SchemaVersion    int              `json:"schema_version"`
	Generator        string           `json:"generator"`
	Model            jsonModel        `json:"model"`
	Alignment        int64            `json:"alignment"`
	Planner          string           `json:"planner"`
	Platform         jsonPlatform     `json:"platform"`
	Rules            []jsonRule       `json:"rules"`
	PlanHash         string           `json:"plan_hash"`
	TensorAllocs     []jsonAlloc      `json:"tensor_allocs"`
	ArenaUsages      []jsonScratch    `json:"arena_usages"`
	PersistentArenas []jsonPersistent `json:"persistent_arenas"`
	ConstantArenas   []jsonConstant   `json:"constant_arenas"`
	TensorLifetimes  []jsonLifetime   `json:"tensor_lifetimes"`
	Variables        []jsonVariable   `json:"resource_variables"`
	Skipped          []jsonSkipped    `json:"skipped_tensors"`
	Spills           []jsonSpill      `json:"spills"`
}

type jsonPlatform struct {
	Name         string     `json:"name"`
	ConstantBank string     `json:"constant_bank"`
	Banks        []jsonBank `json:"banks"`
}

type jsonRule struct {
	Class  string `json:"class,omitempty"`
	Tensor string `json:"tensor,omitempty"`
	Name   string `json:"name,omitempty"`
	Memory string `json:"memory,omitempty"`
	Source string `json:"source,omitempty"`
}

type jsonBank struct {
	Name      string `json:"name"`
	Capacity  int64  `json:"capacity"`
	Writable  bool   `json:"writable"`
	BootInit  bool   `json:"boot_init"`
	Alignment int64  `json:"alignment"`
	Order     int    `json:"order"`
}

type jsonSpill struct {
	Subgraph int    `json:"subgraph"`
	Tensor   int    `json:"tensor"`
	Name     string `json:"name"`
	From     string `json:"from"`
	To       string `json:"to"`
	Reason   string `json:"reason"`
}

type jsonVariable struct {
	Container  string    `json:"container"`
	SharedName string    `json:"shared_name"`
	Size       int64     `json:"size"`
	Memory     string    `json:"memory"`
	Offset     int64     `json:"offset"`
	Handles    []jsonRef `json:"handles"`
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
	Dynamic  bool        `json:"dynamic_shape,omitempty"`
}

type jsonBinding struct {
	Role         string  `json:"role"`
	Memory       string  `json:"memory"`
	Offset       int64   `json:"offset"`
	SourceMemory *string `json:"source_memory"`
}

type jsonRef struct {
	Subgraph int `json:"subgraph"`
	Tensor   int `json:"tensor"`
}

type jsonScratch struct {
	Memory      string    `json:"memory"`
	Capacity    int64     `json:"capacity"`
	TotalSize   int64     `json:"total_size"`
	Used        int64     `json:"used"`
	LowerBound  int64     `json:"lower_bound"`
	Unaliased   int64     `json:"lower_bound_without_aliases"`
	Frag        float64   `json:"fragmentation"`
	PeakStep    int       `json:"peak_step"`
	PeakTensors []jsonRef `json:"peak_tensors"`
}

type jsonPersistent struct {
	Memory    string `json:"memory"`
	TotalSize int64  `json:"total_size"`
	Used      int64  `json:"used"`
}

type jsonConstant struct {
	Memory       string `json:"memory"`
	SourceMemory string `json:"source_memory"`
	Mode         string `json:"mode"`
	TotalSize    int64  `json:"total_size"`
	Used         int64  `json:"used"`
}

type jsonLifetime struct {
	Subgraph int `json:"subgraph"`
	Tensor   int `json:"tensor"`
	StartOp  int `json:"start_op"`
	EndOp    int `json:"end_op"`
}

// JSON renders the plan as plan.json (docs/plan-format.md).
func JSON(p *plan.Plan, meta Meta) ([]byte, error) {
	out := jsonPlan{
		SchemaVersion:    SchemaVersion,
		Generator:        "heliac " + meta.Version,
		Model:            jsonModel{Name: meta.ModelName, SHA256: meta.ModelSHA256, Subgraphs: meta.Subgraphs, Steps: p.Steps},
		Alignment:        p.Alignment,
		Planner:          p.Planner,
		PlanHash:         p.Hash(),
		TensorAllocs:     []jsonAlloc{},
		ArenaUsages:      []jsonScratch{},
		PersistentArenas: []jsonPersistent{},
		ConstantArenas:   []jsonConstant{},
		TensorLifetimes:  []jsonLifetime{},
		Variables:        []jsonVariable{},
		Skipped:          []jsonSkipped{},
		Spills:           []jsonSpill{},
		Platform:         jsonPlatform{Name: p.Platform.Name, ConstantBank: constBank(p.Platform), Banks: []jsonBank{}},
		Rules:            []jsonRule{},
	}
	for _, r := range p.Rules {
		out.Rules = append(out.Rules, jsonRule{Class: r.Class, Tensor: r.Tensor, Name: r.Name, Memory: r.Memory, Source: r.Source})
	}
	for _, b := range p.Platform.Banks {
		out.Platform.Banks = append(out.Platform.Banks, jsonBank{Name: b.Name, Capacity: b.Capacity,
			Writable: b.Writable, BootInit: b.BootInit, Alignment: b.Alignment, Order: b.Order})
	}
	for _, sp := range p.Spills {
		out.Spills = append(out.Spills, jsonSpill{Subgraph: int(sp.Ref.Subgraph), Tensor: int(sp.Ref.Tensor),
			Name: sp.Name, From: sp.From, To: sp.To, Reason: sp.Reason})
	}
	for _, a := range p.Allocs {
		ar := p.Arenas[a.Arena]
		b := jsonBinding{Role: a.Class.String(), Memory: ar.Memory, Offset: a.Offset}
		if ar.Staged {
			src := ar.SourceMemory
			b.SourceMemory = &src
		}
		ja := jsonAlloc{Subgraph: int(a.Ref.Subgraph), Tensor: int(a.Ref.Tensor), Name: a.Name, Size: a.Size,
			Binding: b, Dynamic: a.Dynamic}
		if a.AliasOf != nil {
			ja.AliasOf = &jsonRef{int(a.AliasOf.Subgraph), int(a.AliasOf.Tensor)}
		}
		out.TensorAllocs = append(out.TensorAllocs, ja)
		if a.Class == liveness.Scratch {
			out.TensorLifetimes = append(out.TensorLifetimes, jsonLifetime{
				Subgraph: int(a.Ref.Subgraph), Tensor: int(a.Ref.Tensor), StartOp: int(a.Live.First), EndOp: int(a.Live.Last),
			})
		}
	}
	for _, ar := range p.Arenas {
		switch ar.Kind {
		case plan.ScratchArena:
			s := jsonScratch{Memory: ar.Memory, Capacity: ar.Capacity, TotalSize: ar.Size, Used: ar.Used,
				LowerBound: ar.LowerBound, Unaliased: ar.UnaliasedLowerBound, Frag: fragmentation(ar),
				PeakStep: int(ar.PeakStep), PeakTensors: []jsonRef{}}
			for _, r := range ar.PeakTensors {
				s.PeakTensors = append(s.PeakTensors, jsonRef{int(r.Subgraph), int(r.Tensor)})
			}
			out.ArenaUsages = append(out.ArenaUsages, s)
		case plan.PersistentArena:
			out.PersistentArenas = append(out.PersistentArenas, jsonPersistent{Memory: ar.Memory, TotalSize: ar.Size, Used: ar.Used})
		case plan.ConstantArena:
			mode := "cold"
			if ar.Staged {
				mode = "staged"
			}
			out.ConstantArenas = append(out.ConstantArenas, jsonConstant{Memory: ar.Memory, SourceMemory: ar.SourceMemory,
				Mode: mode, TotalSize: ar.Size, Used: ar.Used})
		}
	}
	for _, v := range p.Variables {
		jv := jsonVariable{Container: v.Name.Container, SharedName: v.Name.SharedName, Size: v.Size,
			Memory: p.Arenas[v.Arena].Memory, Offset: v.Offset, Handles: []jsonRef{}}
		for _, h := range v.Handles {
			jv.Handles = append(jv.Handles, jsonRef{int(h.Subgraph), int(h.Tensor)})
		}
		out.Variables = append(out.Variables, jv)
	}
	for _, sk := range p.Skipped {
		out.Skipped = append(out.Skipped, jsonSkipped{Subgraph: int(sk.Ref.Subgraph), Tensor: int(sk.Ref.Tensor),
			Name: sk.Name, Reason: sk.Reason})
	}
	return encodeJSON(out)
}

// fragmentation is the share of a scratch arena above its lower bound, the
// bytes no plan could have saved excluded: (total_size - lower_bound) /
// total_size, rounded to four decimals; 0 for an empty arena.
func fragmentation(a plan.Arena) float64 {
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
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
