// Package order chooses the order a model's operators run in so that the
// peak of live scratch bytes is as small as it can make it: a
// memory-aware scheduler.
//
// Input: a validated *graph.Model and Options. Output: *Result, a new
// value: for each subgraph a permutation of its operators (the
// liveness.Options.Order that liveness.Analyze takes), its peak, the
// model order's peak, a lower bound and whether the order is proven
// optimal. The model is never changed. Non-test code imports only the
// standard library and graph; never liveness, plan, emit or verify.
//
// # Legal orders
//
// An order keeps the model's meaning when, within each subgraph, an
// operator that writes a tensor and any operator that reads or writes it
// keep the model's relative order, as do the operators that touch one
// stateful (is_variable) tensor or one resource variable (themselves or
// through the subgraphs they call), two operators that call one subgraph,
// and every CALL_ONCE with every other operator. These are verify's rules
// (BadSchedule), made stricter where that is simpler; see deps. Called
// subgraphs run inside their caller's span as always: each subgraph's own
// list is reordered, nothing moves between subgraphs.
//
// # Cost model
//
// Steps, lifetimes and aliases are liveness's (see its package doc). For
// one subgraph, a buffer (a scratch tensor, or an alias group counted once)
// is live from the first operator that touches it to the last, from the
// input step when it holds a subgraph input, and to the last step when it
// holds an output; every size is rounded up to Options.Alignment. An
// operator that runs subgraphs costs, besides what is live across it, the
// peak of its costliest callee, which is scheduled first (callees before
// callers). The peak of a subgraph is the most any step costs:
//
//	      op:   a     b     c     d          order a b c d
//	in        [=====]                        in dies at b
//	a.out           [===========]            read by c
//	b.out                 [=====]
//	c.out                       [=====]
//	live:     in+a  in+a  a+b   a+b   c+d
//	                +b          +c
//
// A subgraph called more than once has tensors live over the hull of its
// runs on the real timeline, which the model leaves out (it can only
// count less). Result's peaks are measured on the real timeline, by a walk
// written apart from the search; tests check them against liveness.
//
// # Search
//
// Per subgraph, Schedule first finds the segments every legal order runs
// one after another: a cut operator (every other operator must run before
// or after it) is a segment of its own, the operators between two cuts
// form one. It searches each segment on its own:
//
//  1. A lower bound: for every operator, the bytes it touches, its
//     callees' peak and the buffers that must be live across it in every
//     order (started by an operator that must run before it, needed by one
//     that must run after it); the bound is the largest.
//  2. Beam search (width 16) over sets of operators that have run, ranked
//     by the peak so far (or the bound left, when larger) and then by the
//     bytes left open: an upper bound. The model's own order is the
//     fallback.
//  3. Exact best-first search over the same sets, segments with the
//     highest peak first: a set's cost is the least peak that reaches it,
//     states above the upper bound are cut, and an operator that starts no
//     buffer outliving it and costs no more than the state's priority runs
//     at once with no alternative tried. A segment whose peak is within the
//     bound already is skipped, so many models are proven by the bound
//     alone.
//
// Results are deterministic, except that a search stopped by the budget
// stops at a point that depends on the machine's speed.
//
// # Quality
//
// On the reference corpus (../shared), with the default budget, every
// model but dp_net is proven optimal; see order_test's corpus figures.
package order
