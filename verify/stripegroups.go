package verify

import (
	"strconv"

	"github.com/heliac/heliac/graph"
)

// A region of more than maxConcatInputs stripes cannot end in one
// CONCATENATION of its stripes: TFLM's takes at most kMaxInputNum = 10
// inputs. docs/stripes.md ("More than 10 stripes: groups") joins them in
// g = ceil(k/10) groups of consecutive stripes, each a CONCATENATION into
// a new tensor <Y>/group<n> appended right after its last stripe's
// operators, and ends the region with the CONCATENATION of the groups
// into Y. This is the verifier's own reading of the page; nothing is
// shared with package stripe.

// maxConcatInputs is TFLM's kMaxInputNum, the most inputs its
// CONCATENATION takes (tensorflow/lite/micro/kernels/concatenation.cc
// @90b983c).
const maxConcatInputs = 10

// stripeGroups returns the stripes [j0, j1] (inclusive) of each group a
// region of k stripes is joined in: none when k is at most
// maxConcatInputs (the stripes are joined directly), else g =
// ceil(k/10) groups whose sizes split k as even rows split a tensor's
// rows, the first k mod g groups one stripe larger.
func stripeGroups(k int) [][2]int {
	if k <= maxConcatInputs {
		return nil
	}
	g := (k + maxConcatInputs - 1) / maxConcatInputs
	groups := make([][2]int, g)
	start := 0
	for n := range groups {
		size := k / g
		if n < k%g {
			size++
		}
		groups[n] = [2]int{start, start + size - 1}
		start += size
	}
	return groups
}

// joiner joins a region's stripe tensors of Y (Y_j) into Y: directly,
// or through the group concatenations when there are more than
// maxConcatInputs stripes.
type joiner struct {
	b      *rebuilder
	rec    *stripeRec
	sg     *graph.Subgraph // the rewritten subgraph, where tensors are appended
	y      graph.Tensor    // Y as in the original
	groups [][2]int
	// stripes are the Y_j so far not joined into a group (all of them
	// without groups).
	stripes []graph.TensorID
	// joined are the group tensors so far.
	joined []graph.TensorID
}

// newJoiner returns the joiner of a region whose rewritten subgraph is
// sg.
func (b *rebuilder) newJoiner(rg *region, sg *graph.Subgraph) *joiner {
	return &joiner{b: b, rec: rg.rec, sg: sg, y: rg.sg.Tensors[rg.rec.output], groups: stripeGroups(len(rg.rec.rows))}
}

// add records yj, stripe j's tensor of Y.
func (jn *joiner) add(yj graph.TensorID) { jn.stripes = append(jn.stripes, yj) }

// endStripe is called after stripe j's operators: when j is the last
// stripe of a group, it appends the group's CONCATENATION to ops and its
// output tensor <Y>/group<n> (rows [Rows[j0].start, Rows[j1].end)) to
// the subgraph.
func (jn *joiner) endStripe(j int, ops *[]graph.Op) {
	n := len(jn.joined)
	if n >= len(jn.groups) || jn.groups[n][1] != j {
		return
	}
	rows := jn.rec.rows
	j0 := jn.groups[n][0]
	out := jn.b.newTensor(jn.sg, jn.y.Name+"/group"+strconv.Itoa(n), &jn.y, rows[j][1]-rows[j0][0])
	*ops = append(*ops, concatOp(jn.stripes, out, jn.y.Type))
	jn.joined = append(jn.joined, out)
	jn.stripes = nil
}

// final is the CONCATENATION that ends the region: of the stripes, or of
// the groups, into Y.
func (jn *joiner) final() graph.Op {
	ins := jn.stripes
	if len(jn.groups) > 0 {
		ins = jn.joined
	}
	return concatOp(ins, jn.rec.output, jn.y.Type)
}
