package verify

import (
	"fmt"

	"github.com/heliac/heliac/graph"
)

// Roles of an allocation and its arena, as plan.json spells them.
const (
	roleScratch    = "scratch"
	rolePersistent = "persistent"
	roleConstant   = "constant"
)

// Plan checks planJSON, a plan.json (docs/plan-format.md), against the model
// it was made for, and returns every violation found, or nil when the plan
// is clean. See the package doc for the rules. When the plan records
// stripes, m is the original model (the one model.sha256 names): the
// verifier rebuilds the rewritten model from it and the record
// (stripes.go) and checks the plan against that.
func Plan(m *graph.Model, planJSON []byte) []Violation {
	if m == nil {
		return report{{Malformed, "model is nil"}}
	}
	doc, bad := decode(planJSON)
	if doc == nil {
		return bad
	}
	if m, bad = rebuildModel(m, doc); m == nil {
		return bad
	}
	return checkPlan(m, doc)
}

// PlanAndC checks planJSON against the model as Plan does and, when the
// plan is clean, the C module against it as C does, reading the plan
// once: what the heliac command checks before it writes a set.
func PlanAndC(m *graph.Model, planJSON []byte, mod Module) []Violation {
	if m == nil {
		return report{{Malformed, "model is nil"}}
	}
	// The C files are parsed while the plan is decoded. The C checks only
	// read the decoded plan and the model, as the plan's do, so both run
	// at once; the plan's violations come first, and the C's count only
	// when the plan has none, as if run one after the other.
	parsed := make(chan parsedModule, 1)
	go func() { parsed <- parseModule(mod) }()
	doc, bad := decode(planJSON)
	if doc != nil {
		m, bad = rebuildModel(m, doc)
	}
	if doc == nil || m == nil {
		<-parsed
		return bad
	}
	var cv []Violation
	done := make(chan struct{})
	go func() {
		defer close(done)
		cv = checkParsedC(m, doc, mod, <-parsed)
	}()
	v := checkPlan(m, doc)
	<-done
	if len(v) > 0 {
		return v
	}
	return cv
}

// checkPlan runs Plan's checks on a decoded plan.
func checkPlan(m *graph.Model, doc *planDoc) []Violation {
	v, _ := checkPlanWork(m, doc)
	return v
}

// checkPlanWork is checkPlan that also returns the checker's work.
func checkPlanWork(m *graph.Model, doc *planDoc) ([]Violation, int64) {
	var r report
	tl, stop := walk(m, doc.schedule)
	r = append(r, stop...)
	if tl == nil {
		return r, 0
	}
	c := index(m, doc, tl, &r)
	c.run()
	if len(r) == 0 {
		return nil, c.work
	}
	return r, c.work
}

// run runs every check, in two halves at once: each half on a copy of
// the checker with a report and a work count of its own (the checks only
// read the checker), their reports joined in the order of the checks, as
// if run one after the other.
func (c *checker) run() {
	first := []func(*checker){
		(*checker).checkHash,
		(*checker).checkSchedule,
		(*checker).checkOrdering,
		(*checker).checkTensors,
		(*checker).checkSkipped,
		(*checker).checkUnplaced,
		(*checker).checkUses,
		(*checker).checkAliases,
		(*checker).checkCopies,
		(*checker).checkSharing,
		(*checker).checkOwnPlan,
	}
	second := []func(*checker){
		(*checker).checkVariables,
		(*checker).checkKernelScratch,
		(*checker).checkArenas,
		(*checker).checkBanks,
		(*checker).checkRules,
		(*checker).checkHottest,
		(*checker).checkSpills,
	}
	half := func(checks []func(*checker)) *checker {
		h := *c
		h.r, h.work = &report{}, 0
		for _, check := range checks {
			check(&h)
		}
		return &h
	}
	var b *checker
	done := make(chan struct{})
	go func() {
		defer close(done)
		b = half(second)
	}()
	a := half(first)
	<-done
	*c.r = append(append(*c.r, *a.r...), *b.r...)
	c.work += a.work + b.work
}

// checker holds one run of Plan: the model, the document, the timeline the
// schedule gives, and the indexes that index builds over them. The checks
// only read it and add to r, so they may run in any order.
type checker struct {
	m   *graph.Model
	doc *planDoc
	tl  *timeline
	r   *report

	// banks maps each bank name to its platform entry (the first, when
	// a name is given twice); writable lists the writable banks in
	// allocation order; align is the plan's alignment (1 when the plan's
	// is not positive).
	banks    map[string]*bank
	writable []*bank
	align    int64
	// members lists every allocation of every kind: tensor_allocs by
	// (subgraph, tensor), then resource_variables and kernel_scratch in
	// file order. byKey finds one
	// by its key (the first, when a key is given twice).
	members []*member
	byKey   map[key]*member
	// placed maps each tensor to its allocation, for tensor_allocs
	// entries that name an existing tensor once.
	placed map[graph.TensorRef]*member
	// skips maps each tensor skipped_tensors names once to its entry.
	skips map[graph.TensorRef]*skipped
	// arenas maps each arena id to its arenas entry (the first, when an
	// id is given twice).
	arenas map[int64]*arenaRec
	// vars are the model's resource variables, resolved from its
	// operators.
	vars []*resVar
	// rulesOK says every rule is well formed, so that where the rules put
	// an allocation can be worked out.
	rulesOK bool
	// alias is what the alias rules need of the model: its view
	// operators and subgraph boundaries.
	alias *aliasGraph
	// copies are the exact_overlap_copy entries, checked against the
	// model (indexCopies).
	copies *copyIndex
	// own holds the model's own offline offset of every tensor an
	// Ethos-U operator addresses relative to another (its scratch, and
	// the scratch itself); ownPairs lists each such tensor with its
	// operator's scratch (indexOwnPlan).
	// ownRegion marks the scratch and fast scratch among them; ownOps
	// lists the Ethos-U operators each is an operand of.
	own       map[graph.TensorRef]int64
	ownRegion map[graph.TensorRef]bool
	ownOps    map[graph.TensorRef][]graph.OpRef
	ownPairs  []ownPair
	// work counts the steps of the checks that relate allocations to one
	// another (alias chains, in-place writes, overlapping pairs, group
	// widths), whose cost a naive check would square: tests compare it
	// across plan sizes.
	work int64
}

// member is one allocation of any kind, as the checks of arenas, banks,
// rules and spills see it.
type member struct {
	path string
	key  key
	what string // "0:3 (conv)", `resource variable "state"`, "op 0:2 (CONV_2D) scratch 0"
	binding
	// size is the bytes every range check uses: a tensor's real size, an
	// entry's size for the other kinds; declared is the size the entry
	// gives.
	size, declared int64
	// live is when a scratch allocation holds bytes (a tensor's
	// tensor_lifetimes entry, a kernel scratch entry's own steps); nil for
	// persistent and constant ones, and for a scratch tensor without one.
	live *lifetime
	// group is the key of the alias group's root: alias_of, or the
	// allocation itself.
	group key
	// class is, for a tensor, the member whose write put its value in its
	// bytes: the tensor itself, or, for a view, the member it views, back
	// through views of the same bytes to the group's root or to a tensor
	// written in place (indexGroups). Members of one class hold one value
	// in the same bytes. nil for other kinds.
	class *member
	// Tensors only.
	t       *graph.Tensor
	aliasOf *graph.TensorRef
	// aliasOffset is alias_offset, nil when absent (0).
	aliasOffset *int64
	inPlace     *inPlaceDecl
	copy        *copyDecl
	dynamic     *bool
	name        string
}

// offsetInGroup returns alias_offset, 0 when absent or when p is no
// member of a group (the key is then Malformed).
func (p *member) offsetInGroup() int64 {
	if p.aliasOffset == nil || p.aliasOf == nil {
		return 0
	}
	return *p.aliasOffset
}

// name formats a tensor as "subgraph:tensor (name)".
func (c *checker) name(r graph.TensorRef) string {
	return fmt.Sprintf("%d:%d (%s)", r.Subgraph, r.Tensor, escapeName(c.m.Subgraphs[r.Subgraph].Tensors[r.Tensor].Name))
}

// opName formats an operator as "op subgraph:index (NAME)".
func (c *checker) opName(o graph.OpRef) string {
	return fmt.Sprintf("op %d:%d (%s)", o.Subgraph, o.Op, escapeName(c.m.Subgraphs[o.Subgraph].Ops[o.Op].Name()))
}

// tensor returns the tensor r names, or nil when there is none.
func (c *checker) tensor(r graph.TensorRef) *graph.Tensor {
	if r.Subgraph < 0 || int(r.Subgraph) >= len(c.m.Subgraphs) {
		return nil
	}
	ts := c.m.Subgraphs[r.Subgraph].Tensors
	if r.Tensor < 0 || int(r.Tensor) >= len(ts) {
		return nil
	}
	return &ts[r.Tensor]
}

// operator returns the operator o names, or nil when there is none.
func (c *checker) operator(o graph.OpRef) *graph.Op {
	if o.Subgraph < 0 || int(o.Subgraph) >= len(c.m.Subgraphs) {
		return nil
	}
	ops := c.m.Subgraphs[o.Subgraph].Ops
	if o.Op < 0 || int(o.Op) >= len(ops) {
		return nil
	}
	return &ops[o.Op]
}

// index builds the checker's indexes, reporting what makes an entry
// unusable for them (a tensor that does not exist or is allocated twice, a
// second arena with one id, a bad bank) as it goes. It runs before every
// check, in this order, and nothing changes the indexes afterwards.
func index(m *graph.Model, doc *planDoc, tl *timeline, r *report) *checker {
	c := &checker{m: m, doc: doc, tl: tl, r: r, align: doc.alignment}
	c.checkHeader()
	c.indexBanks()
	c.indexArenas()
	c.indexTensors()
	c.indexLifetimes()
	c.indexVariables()
	c.indexKernelScratch()
	c.indexGroups()
	c.indexOwnPlan()
	c.indexSkipped()
	c.rulesOK = c.checkRuleList()
	return c
}

func (c *checker) checkHeader() {
	if c.doc.subgraphs != int64(len(c.m.Subgraphs)) {
		c.r.add(Malformed, "plan.json: model.subgraphs is %d, the model has %d", c.doc.subgraphs, len(c.m.Subgraphs))
	}
	if c.doc.steps != c.tl.steps {
		c.r.add(Malformed, "plan.json: model.steps is %d, the schedule's timeline has %d", c.doc.steps, c.tl.steps)
	}
	if c.doc.alignment < 1 {
		c.r.add(Malformed, "plan.json: alignment %d is not positive", c.doc.alignment)
		c.align = 1
	}
}

// addMember records a member under its key; a second member with one key
// is reported and takes no further part.
func (c *checker) addMember(mb *member) {
	if first := c.byKey[mb.key]; first != nil {
		c.r.add(Malformed, "%s: %s is allocated twice (first at %s)", mb.path, mb.what, first.path)
		return
	}
	c.members = append(c.members, mb)
	c.byKey[mb.key] = mb
}

// used reports the tensors the timeline uses.
func (c *checker) used() map[graph.TensorRef]bool {
	u := map[graph.TensorRef]bool{}
	for _, x := range c.tl.uses {
		u[x.ref] = true
	}
	return u
}

// role returns the role a used tensor's allocation must have, or "" when
// the tensor needs no bytes: is_variable state is persistent (TFLM places
// variables in its persistent area even when their buffer has data), data
// in a model buffer is constant, everything else is scratch.
func (c *checker) role(t *graph.Tensor) string {
	switch {
	case t.Type == graph.Resource || (t.Size <= 0 && !c.m.HasData(t)):
		return ""
	case t.IsVariable:
		return rolePersistent
	case c.m.HasData(t):
		return roleConstant
	}
	return roleScratch
}

// size returns a tensor's byte size: its buffer's length for constants, its
// Size otherwise.
func (c *checker) size(t *graph.Tensor) int64 {
	if !t.IsVariable && c.m.HasData(t) {
		return int64(len(c.m.Buffers[t.Buffer].Data))
	}
	return t.Size
}

func less(a, b graph.TensorRef) bool {
	return a.Subgraph < b.Subgraph || (a.Subgraph == b.Subgraph && a.Tensor < b.Tensor)
}
