package graph

// Halo says how a stripe gets the rows of an intermediate tensor that
// the stripe before it computed too (docs/stripes.md, "Halo rows").
type Halo string

// Halos.
const (
	// HaloRecompute: every stripe computes all the rows it needs (the
	// zero value means this too).
	HaloRecompute Halo = "recompute"
	// HaloCache: a stripe computes only rows no earlier stripe computed
	// and takes the others from the previous stripe's tensor
	// (STRIDED_SLICE, then CONCATENATION with the new rows).
	HaloCache Halo = "cache"
)

// StripeRegion records that a rewritten model computes a region of the
// model it was rewritten from stripe by stripe (--patches, package
// stripe; the construction is docs/stripes.md): the operators Ops of
// subgraph Subgraph of the original, which compute tensor Output from
// tensor Input (and constants), are replaced by len(Rows) copies, copy j
// computing rows Rows[j] of Output from the rows of Input its receptive
// field needs, and a CONCATENATION of the stripes into Output.
//
// Tensor ids are shared by the original and the rewritten model: a
// rewrite keeps every tensor of the original at its id (the region's
// intermediate tensors stay, read and written by no operator) and
// appends its own.
type StripeRegion struct {
	Subgraph SubgraphIndex
	// Input (X) and Output (Y): rank-4 NHWC tensors of batch 1.
	Input, Output TensorID
	// Ops are the indices, in the original subgraph's operator list, of
	// the operators the region replaces, ascending.
	Ops []int
	// Rows are Output's rows [start, end) that each stripe computes, in
	// order: they cover Output's height exactly once.
	Rows [][2]int32
	// Halo is how stripes get halo rows: HaloRecompute ("" too) or
	// HaloCache.
	Halo Halo
	// MACs are the region's multiply-accumulates in the original model;
	// ExtraMACs what the stripes compute again (halo rows), on top.
	MACs, ExtraMACs int64
}

// HaloKind is r.Halo, HaloRecompute when it is empty.
func (r *StripeRegion) HaloKind() Halo {
	if r.Halo == "" {
		return HaloRecompute
	}
	return r.Halo
}

// Cached says whether the region's stripes take halo rows from the
// stripe before (HaloCache).
func (r *StripeRegion) Cached() bool { return r.Halo == HaloCache }

// K is the number of stripes.
func (r *StripeRegion) K() int { return len(r.Rows) }
