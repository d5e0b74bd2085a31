package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/heliac/heliac/driver"
	"github.com/heliac/heliac/emit"
	"github.com/heliac/heliac/liveness"
	"github.com/heliac/heliac/plan"
)

// jsonSummary is what --json prints: the summary's figures for a program
// to read. plan.json has everything else.
type jsonSummary struct {
	Model         string       `json:"model"`
	Subgraphs     int          `json:"subgraphs"`
	Steps         int          `json:"steps"`
	Tensors       int          `json:"tensors"`
	Arenas        []jsonArena  `json:"arenas"`
	KernelScratch int64        `json:"kernel_scratch"`
	Unknown       int          `json:"unknown_kernel_scratch"`
	Spills        int          `json:"spills"`
	BankTraffic   []jsonBank   `json:"bank_traffic"`
	Schedule      jsonSchedule `json:"schedule"`
	Files         []string     `json:"files"`
	TFLite        *jsonTFLite  `json:"tflite,omitempty"`
	TFLM          *jsonTFLM    `json:"tflm,omitempty"`
	Patches       *jsonPatches `json:"patches,omitempty"`
	// Warnings are why stock TFLM will not run the model
	// (driver.Output.TFLMRefusals), one line each; empty when none.
	Warnings []string `json:"warnings"`
}

// jsonPatches is driver.Patches: what --patches auto chose, cost and
// saved (regions empty when it chose none).
type jsonPatches struct {
	// TFLM's whole tensor_arena first (what a rewrite is judged on), then
	// heliac's arena (TFLM's head).
	TFLMArenaBefore  int64              `json:"tflm_arena_before,omitempty"`
	TFLMArenaAfter   int64              `json:"tflm_arena_after,omitempty"`
	HeadBefore       int64              `json:"arena_before"`
	HeadAfter        int64              `json:"arena_after"`
	Regions          []jsonStripeRegion `json:"regions"`
	ExtraOperators   int                `json:"extra_operators"`
	ExtraMACs        int64              `json:"extra_macs"`
	ExtraMACsPercent float64            `json:"extra_macs_percent"`
	ModelMACs        int64              `json:"model_macs"`
	CapPercent       float64            `json:"cap_percent"`
	Tried            int                `json:"tried"`
	Reason           string             `json:"reason,omitempty"`
}

// jsonStripeRegion is one region run stripe by stripe, ids as plan.json
// writes them ("s:t", operators "s:i" of the model as given).
type jsonStripeRegion struct {
	Input     string     `json:"input"`
	Output    string     `json:"output"`
	Operators []string   `json:"operators"`
	K         int        `json:"k"`
	Rows      [][2]int32 `json:"rows"`
	Halo      string     `json:"halo"`
	MACs      int64      `json:"macs"`
	ExtraMACs int64      `json:"extra_macs"`
}

// jsonTFLM is driver.TFLM: TFLM's own head beside the plan's, the
// difference (head - own_head, negative where heliac needs less) and
// whose placement the plan keeps.
type jsonTFLM struct {
	OwnHead           int64   `json:"own_head"`
	Head              int64   `json:"head"`
	Difference        int64   `json:"difference"`
	DifferencePercent float64 `json:"difference_percent"`
	Kept              string  `json:"kept"`
	Discarded         int64   `json:"discarded,omitempty"`
	// DiscardedTFLMArenaBytes is TFLM's whole tensor_arena with heliac's
	// own placement, when that (not the head) was why it was not kept.
	DiscardedTFLMArenaBytes int64 `json:"discarded_tflm_arena_bytes,omitempty"`
	// Members are each kernel build's heads, for a plan made for several
	// (driver.TFLM.Members).
	Members []jsonTFLMMember `json:"members,omitempty"`
}

// jsonTFLMMember is driver.TFLMMember.
type jsonTFLMMember struct {
	Kernels string `json:"kernels"`
	OwnHead int64  `json:"own_head"`
	Head    int64  `json:"head"`
}

type jsonArena struct {
	Name             string `json:"name"`
	Role             string `json:"role"`
	Memory           string `json:"memory"`
	Size             int64  `json:"size"`
	LowerBound       *int64 `json:"lower_bound,omitempty"`
	TensorLowerBound *int64 `json:"tensor_lower_bound,omitempty"`
	Capacity         int64  `json:"capacity"`
}

// jsonBank is plan.BankTraffic: a bank's bytes read and written per
// inference (an estimate, a lower bound) and its staging copy's, once.
type jsonBank struct {
	Bank           string `json:"bank"`
	Read           int64  `json:"read"`
	Written        int64  `json:"written"`
	StagingRead    int64  `json:"staging_read"`
	StagingWritten int64  `json:"staging_written"`
}

type jsonSchedule struct {
	Strategy string `json:"strategy"`
	Proven   bool   `json:"proven_optimal"`
	Moved    int    `json:"moved"`
}

type jsonTFLite struct {
	Planned   int   `json:"planned"`
	ArenaSize int64 `json:"arena_size"`
	// TFLM's whole tensor_arena (driver.TFLMArenas), when computed.
	TFLMTarget     string `json:"tflm_target,omitempty"`
	TFLMArenaBytes int64  `json:"tflm_arena_bytes,omitempty"`
	TFLMHeadBytes  int64  `json:"tflm_head_bytes,omitempty"`
	TFLMTailBytes  int64  `json:"tflm_tail_bytes,omitempty"`
	// The original model under TFLM's own planner.
	TFLMOwnArenaBytes int64 `json:"tflm_own_arena_bytes,omitempty"`
	TFLMOwnHeadBytes  int64 `json:"tflm_own_head_bytes,omitempty"`
	TFLMOwnTailBytes  int64 `json:"tflm_own_tail_bytes,omitempty"`
	// TFLMKernels is the kernel build the figures are for: for a plan
	// made for several, the one that needs the largest arena.
	TFLMKernels string `json:"tflm_kernels,omitempty"`
	// TFLMMembers are each build's figures, for a plan made for several.
	TFLMMembers []jsonTFLMArena `json:"tflm_members,omitempty"`
}

// jsonTFLMArena is one kernel build's driver.TFLMArenas.
type jsonTFLMArena struct {
	Kernels           string `json:"kernels"`
	TFLMArenaBytes    int64  `json:"tflm_arena_bytes"`
	TFLMHeadBytes     int64  `json:"tflm_head_bytes"`
	TFLMOwnArenaBytes int64  `json:"tflm_own_arena_bytes"`
	TFLMOwnHeadBytes  int64  `json:"tflm_own_head_bytes"`
}

// printJSONSummary prints the summary of a compile as one JSON document.
func printJSONSummary(opts *compileOptions, out *driver.Output, files emit.Files) error {
	p := out.Plan
	s := jsonSummary{Model: opts.model, Subgraphs: len(out.Model.Subgraphs), Steps: p.Schedule.Steps,
		Arenas: []jsonArena{}, Warnings: []string{}, Unknown: len(p.UnknownScratch), Spills: len(p.Spills), Files: []string{},
		Schedule: jsonSchedule{Strategy: p.Schedule.Ordering.Strategy, Proven: p.Schedule.Ordering.Proven, Moved: p.Schedule.Moved()}}
	for _, a := range p.Allocs {
		if a.Kind == plan.TensorAlloc {
			s.Tensors++
		}
	}
	_, _, s.KernelScratch = p.KernelScratch()
	s.BankTraffic = []jsonBank{}
	for _, b := range p.BankTraffic() {
		s.BankTraffic = append(s.BankTraffic, jsonBank{Bank: b.Bank, Read: b.PerInference.Read, Written: b.PerInference.Written,
			StagingRead: b.Staging.Read, StagingWritten: b.Staging.Written})
	}
	for _, a := range p.Arenas {
		ja := jsonArena{Name: a.Name, Role: a.Role.String(), Memory: a.Memory, Size: a.Size, Capacity: a.Capacity}
		if a.Role == liveness.Scratch {
			lb, tlb := a.LowerBound, a.TensorLowerBound
			ja.LowerBound, ja.TensorLowerBound = &lb, &tlb
		}
		s.Arenas = append(s.Arenas, ja)
	}
	for _, f := range files {
		s.Files = append(s.Files, filepath.Join(opts.outDir, f.Name))
	}
	for _, r := range out.TFLMRefusals {
		s.Warnings = append(s.Warnings, refusalText(r))
	}
	if t := out.TFLite; t != nil {
		s.TFLite = &jsonTFLite{Planned: t.Offline.Planned, ArenaSize: t.Offline.ArenaSize}
		if a := out.TFLMArena; a != nil {
			s.TFLite.TFLMTarget = a.Target
			s.TFLite.TFLMArenaBytes, s.TFLite.TFLMHeadBytes, s.TFLite.TFLMTailBytes = a.Emitted.Bytes, a.Emitted.Head, a.Emitted.Tail
			s.TFLite.TFLMOwnArenaBytes, s.TFLite.TFLMOwnHeadBytes, s.TFLite.TFLMOwnTailBytes = a.Original.Bytes, a.Original.Head, a.Original.Tail
			s.TFLite.TFLMKernels = a.Kernels
			for _, m := range a.Members {
				s.TFLite.TFLMMembers = append(s.TFLite.TFLMMembers, jsonTFLMArena{Kernels: m.Kernels, TFLMArenaBytes: m.Emitted.Bytes,
					TFLMHeadBytes: m.Emitted.Head, TFLMOwnArenaBytes: m.Original.Bytes, TFLMOwnHeadBytes: m.Original.Head})
			}
		}
	}
	if t := out.TFLM; t != nil {
		s.TFLM = &jsonTFLM{OwnHead: t.OwnHead, Head: t.Head, Difference: t.Head - t.OwnHead, Kept: t.Kept, Discarded: t.Discarded,
			DiscardedTFLMArenaBytes: t.DiscardedBytes}
		if t.OwnHead > 0 {
			s.TFLM.DifferencePercent = 100 * float64(t.Head-t.OwnHead) / float64(t.OwnHead)
		}
		for _, m := range t.Members {
			s.TFLM.Members = append(s.TFLM.Members, jsonTFLMMember{Kernels: m.Kernels, OwnHead: m.OwnHead, Head: m.Head})
		}
	}
	if p := out.Patches; p != nil {
		s.Patches = &jsonPatches{Regions: []jsonStripeRegion{}, ExtraOperators: p.ExtraOps, ExtraMACs: p.ExtraMACs, ExtraMACsPercent: p.ExtraPercent(),
			ModelMACs: p.ModelMACs, CapPercent: 100 * p.Cap, HeadBefore: p.HeadBefore, HeadAfter: p.HeadAfter,
			TFLMArenaBefore: p.ArenaBefore, TFLMArenaAfter: p.ArenaAfter, Tried: p.Tried, Reason: p.Reason}
		for _, r := range p.Regions {
			jr := jsonStripeRegion{Input: fmt.Sprintf("%d:%d", r.Subgraph, r.Input), Output: fmt.Sprintf("%d:%d", r.Subgraph, r.Output),
				Operators: []string{}, K: r.K(), Rows: r.Rows, Halo: string(r.HaloKind()), MACs: r.MACs, ExtraMACs: r.ExtraMACs}
			for _, o := range r.Ops {
				jr.Operators = append(jr.Operators, fmt.Sprintf("%d:%d", r.Subgraph, o))
			}
			s.Patches.Regions = append(s.Patches.Regions, jr)
		}
		if len(p.Regions) == 0 {
			s.Patches.HeadAfter, s.Patches.TFLMArenaAfter = p.HeadBefore, p.ArenaBefore
		}
	}
	enc := json.NewEncoder(opts.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(s)
}
